// Federated evaluation (federated::evaluate_together) on parties on threads: the sum of the
// parties' confusion matrices of their own test rows is the model's matrix on the pooled
// rows, with and without DP, for one party and several; it is skipped when no party, or only
// one of several, gives rows; a party that cannot score its rows stops every party.
// (Over gRPC and MPI: federated_grpc_test.cpp, federated_mpi_test.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flynn/federated/simulate.hpp"
#include "flynn/metrics.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fed = flynn::federated;

// Each party's training and test rows: row r goes to party r % tau, every fifth row is a
// test row.
struct Parts {
  std::vector<Dataset> train, test;
  Dataset pooled_test;
  std::vector<const Dataset*> train_ptrs() const {
    std::vector<const Dataset*> p;
    for (const Dataset& d : train) p.push_back(&d);
    return p;
  }
  std::vector<const Dataset*> test_ptrs() const {
    std::vector<const Dataset*> p;
    for (const Dataset& d : test) p.push_back(&d);
    return p;
  }
};

Parts parts_of(const Dataset& data, int tau) {
  std::vector<std::vector<std::size_t>> train(tau), test(tau);
  std::vector<std::size_t> pooled;
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    const bool held_out = r % 5 == 0;
    (held_out ? test : train)[r % static_cast<std::size_t>(tau)].push_back(r);
    if (held_out) pooled.push_back(r);
  }
  Parts p;
  for (int k = 0; k < tau; ++k) {
    p.train.push_back(data.subset(train[k]));
    p.test.push_back(data.subset(test[k]));
  }
  p.pooled_test = data.subset(pooled);
  return p;
}

fed::FederationSettings settings_for(const Dataset& data) {
  fed::FederationSettings s;
  s.hyper.m = 512;
  s.hyper.rho = 16;
  s.hyper.seed = 5;
  s.hyper.variant = parse_variant("paper");
  s.labels = data.classes;
  s.threads = 1;
  return s;
}

// The model's confusion matrix on `rows` (row: true class).
std::vector<std::uint64_t> central_confusion(const FlyNN& model, const Dataset& rows) {
  const std::size_t L = model.labels().size();
  const std::vector<std::uint32_t> predicted = model.predict(rows);
  std::vector<std::uint64_t> m(L * L, 0);
  for (std::size_t r = 0; r < rows.n_rows; ++r) ++m[std::size_t(rows.labels[r]) * L + predicted[r]];
  return m;
}

void expect_central(const fed::ColonyOutcome& out, const Dataset& pooled, int tau) {
  const fed::FederatedEvaluation& e = out.evaluation;
  EXPECT_EQ(e.skipped, "");
  EXPECT_EQ(e.parties, tau);
  EXPECT_EQ(e.parties_with_rows, tau);
  EXPECT_EQ(e.rows, pooled.n_rows);
  EXPECT_EQ(e.confusion, central_confusion(out.model, pooled));
  const std::vector<std::uint32_t> predicted = out.model.predict(pooled);
  EXPECT_DOUBLE_EQ(e.accuracy, accuracy(pooled.labels, predicted));
  EXPECT_DOUBLE_EQ(e.balanced_accuracy, balanced_accuracy(pooled.labels, predicted, pooled.classes.size()));
}

TEST(FederatedEvaluation, SumOfThePartiesMatricesIsTheModelsOnThePooledRows) {
  const Dataset data = test::blobs(3, 60, 8, 17);
  for (int tau : {1, 3, 5}) {
    const Parts p = parts_of(data, tau);
    const fed::ColonyOutcome out = fed::run_colony(p.train_ptrs(), settings_for(data), {}, p.test_ptrs());
    expect_central(out, p.pooled_test, tau);
    // The figures are not trivially perfect: some rows are wrong, so the matrix has power.
    EXPECT_GT(out.evaluation.accuracy, 0.5) << tau;
  }
}

TEST(FederatedEvaluation, UnderDifferentialPrivacyTheTestRowsAreScoredExactly) {
  const Dataset data = test::blobs(3, 60, 8, 23);
  const Parts p = parts_of(data, 3);
  fed::FederationSettings s = settings_for(data);
  s.dp = fed::DpParams{};
  s.dp->epsilon = 2.0;
  s.dp->T = 64;
  const fed::ColonyOutcome out = fed::run_colony(p.train_ptrs(), s, {}, p.test_ptrs());
  EXPECT_TRUE(out.model.provenance().differentially_private);
  expect_central(out, p.pooled_test, 3);
}

TEST(FederatedEvaluation, SkippedWithoutTestRowsOrWithOnePartysOnly) {
  const Dataset data = test::blobs(3, 40, 6, 29);
  const Parts p = parts_of(data, 3);
  const fed::ColonyOutcome none = fed::run_colony(p.train_ptrs(), settings_for(data));
  EXPECT_EQ(none.evaluation.parties_with_rows, 0);
  EXPECT_EQ(none.evaluation.skipped, "no party gave test rows");
  EXPECT_TRUE(none.evaluation.confusion.empty());

  // One party of three: the sum would be its own matrix, which the others must not learn.
  const fed::ColonyOutcome one = fed::run_colony(p.train_ptrs(), settings_for(data), {}, {nullptr, &p.test[1]});
  EXPECT_EQ(one.evaluation.parties_with_rows, 1);
  EXPECT_NE(one.evaluation.skipped.find("only one party gave test rows"), std::string::npos) << one.evaluation.skipped;
  EXPECT_TRUE(one.evaluation.confusion.empty());
  EXPECT_EQ(one.evaluation.rows, 0u);

  // Two of three: summed (each can subtract its own, as with any sum of two).
  const fed::ColonyOutcome two = fed::run_colony(p.train_ptrs(), settings_for(data), {}, {&p.test[0], nullptr, &p.test[2]});
  EXPECT_EQ(two.evaluation.parties_with_rows, 2);
  EXPECT_EQ(two.evaluation.skipped, "");
  EXPECT_EQ(two.evaluation.rows, p.test[0].n_rows + p.test[2].n_rows);
  std::vector<std::uint64_t> expected = central_confusion(two.model, p.test[0]);
  const std::vector<std::uint64_t> third = central_confusion(two.model, p.test[2]);
  for (std::size_t k = 0; k < expected.size(); ++k) expected[k] += third[k];
  EXPECT_EQ(two.evaluation.confusion, expected);
}

TEST(FederatedEvaluation, ATestLabelOutsideTheListStopsEveryParty) {
  const Dataset data = test::blobs(3, 40, 6, 31);
  const Parts p = parts_of(data, 3);
  // Party 2's test rows carry a class the federation does not know.
  Dataset odd = test::make_dataset({{0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}}, {"c0", "unheard-of"});
  try {
    (void)fed::run_colony(p.train_ptrs(), settings_for(data), {}, {&p.test[0], &p.test[1], &odd});
    FAIL() << "the federation should have failed";
  } catch (const fed::FederationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("evaluation failed"), std::string::npos) << what;
    EXPECT_NE(what.find("party 2"), std::string::npos) << what;
    EXPECT_NE(what.find("outside the federation's label list"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace flynn
