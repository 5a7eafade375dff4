#pragma once
// The common shapes of ARFF nominal attributes, each as ARFF and as the equivalent CSV: the
// loaders' tests (tests/core/io_arff_nominal_test.cpp) and the CLI's (tests/cli/arff_test.cpp)
// hold the two formats to the same rows, models and predictions.
#include <string>
#include <vector>

namespace flynn::test {

// The common shapes, as ARFF and as the equivalent CSV. The declared lists
// are sorted and every value occurs, since CSV's categories are the sorted values found.
struct Fixture {
  const char* name;
  std::string arff, csv;
};

inline std::vector<Fixture> fixtures() {
  return {
      {"all nominal",
       "@relation vote\n"
       "@attribute handicapped {n,y}\n"
       "@attribute 'water project' {n,u,y}\n"
       "@attribute budget {n,y}\n"
       "@attribute party {democrat,republican}\n"
       "@data\n"
       "n,y,n,republican\ny,n,y,democrat\nn,u,y,democrat\ny,y,n,republican\n"
       "n,n,y,democrat\ny,u,n,republican\n",
       "handicapped,water project,budget,party\n"
       "n,y,n,republican\ny,n,y,democrat\nn,u,y,democrat\ny,y,n,republican\n"
       "n,n,y,democrat\ny,u,n,republican\n"},
      {"mixed nominal and numeric",
       "@relation credit\n"
       "@attribute checking_status {'0<=X<200','<0','>=200','no checking'}\n"
       "@attribute duration numeric\n"
       "@attribute purpose {car,education,radio/tv}\n"
       "@attribute credit_amount real\n"
       "@attribute class {bad,good}\n"
       "@data\n"
       "'<0',6,radio/tv,1169,good\n'0<=X<200',48,radio/tv,5951,bad\n"
       "'no checking',12,education,2096,good\n'<0',42,car,7882.5,good\n"
       "'>=200',24,car,4870,bad\n'no checking',36,education,9055,good\n",
       "checking_status,duration,purpose,credit_amount,class\n"
       "<0,6,radio/tv,1169,good\n0<=X<200,48,radio/tv,5951,bad\n"
       "no checking,12,education,2096,good\n<0,42,car,7882.5,good\n"
       ">=200,24,car,4870,bad\nno checking,36,education,9055,good\n"},
      {"with missing values",
       "@relation breast\n"
       "@attribute age {30-39,40-49,50-59}\n"
       "@attribute size numeric\n"
       "@attribute 'node-caps' {no,yes}\n"
       "@attribute class {no-recurrence,recurrence}\n"
       "@data\n"
       "40-49,?,no,recurrence\n50-59,15,?,no-recurrence\n?,20,yes,recurrence\n"
       "40-49,30,no,no-recurrence\n30-39,25,yes,recurrence\n50-59,?,no,no-recurrence\n",
       "age,size,node-caps,class\n"
       "40-49,?,no,recurrence\n50-59,15,?,no-recurrence\n?,20,yes,recurrence\n"
       "40-49,30,no,no-recurrence\n30-39,25,yes,recurrence\n50-59,?,no,no-recurrence\n"},
  };
}

}  // namespace flynn::test
