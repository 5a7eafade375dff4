// ARFF nominal attributes through the CLI: an ARFF file and the same table as CSV train
// byte-identical models that predict alike, and a model keeps the declared order of the
// categories (the loaders' side: tests/core/io_arff_nominal_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "arff_csv_pairs.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace {

using flynn::test::Fixture;
using flynn::test::fixtures;

TEST(ArffCli, ModelsFromArffAndCsvAreByteIdenticalAndPredictAlike) {
  flynn::test::TempDir dir;
  int n = 0;
  for (const Fixture& f : fixtures()) {
    SCOPED_TRACE(f.name);
    const std::string tag = std::to_string(n++);
    const std::string a = dir.file("t" + tag + ".arff"), c = dir.file("t" + tag + ".csv");
    flynn::test::write_text(a, f.arff);
    flynn::test::write_text(c, f.csv);
    const std::string flags = " --quiet --m 64 --s 2 --rho 4 --seed 3";
    for (const char* missing : {"mean", "zero"}) {
      const std::string ma = dir.file("a" + tag + missing + ".flynn");
      const std::string mc = dir.file("c" + tag + missing + ".flynn");
      const std::string m = std::string(" --missing ") + missing;
      auto r = flynn::test::run_cli("train --data " + a + " --model " + ma + flags + m);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      r = flynn::test::run_cli("train --data " + c + " --model " + mc + flags + m);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(flynn::test::read_text(ma), flynn::test::read_text(mc)) << missing;
      // Either model on either file: the same predictions.
      std::string first;
      for (const std::string& model : {ma, mc})
        for (const std::string& data : {a, c}) {
          const auto p = flynn::test::run_cli("predict --model " + model + " --data " + data + m);
          ASSERT_EQ(p.exit_code, 0) << p.err;
          if (first.empty()) first = p.out;
          EXPECT_EQ(p.out, first) << model << " on " << data;
        }
      EXPECT_FALSE(first.empty());
    }
  }
}

}  // namespace

namespace {

TEST(ArffCli, ModelKeepsTheDeclaredOrderThroughTheModelFile) {
  // Declared order red, green, blue (not sorted): the model file stores it, loads again,
  // and predicts ARFF and CSV rows alike.
  flynn::test::TempDir dir;
  const std::string a = dir.file("c.arff"), c = dir.file("c.csv"), m = dir.file("c.flynn");
  std::string arff_text =
      "@relation r\n@attribute colour {red,green,blue}\n@attribute x numeric\n"
      "@attribute class {hot,cold}\n@data\n";
  std::string csv_text = "colour,x,class\n";
  const char* colours[] = {"red", "green", "blue"};
  for (int i = 0; i < 30; ++i) {
    const std::string row = std::string(colours[i % 3]) + "," + std::to_string(i % 7) + "," +
                            (i % 3 == 0 ? "hot" : "cold") + "\n";
    arff_text += row;
    csv_text += row;
  }
  flynn::test::write_text(a, arff_text);
  flynn::test::write_text(c, csv_text);
  auto r = flynn::test::run_cli("train --data " + a + " --model " + m + " --quiet --m 64 --s 2 --rho 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = flynn::test::run_cli("info --model " + m);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pa = flynn::test::run_cli("predict --model " + m + " --data " + a);
  const auto pc = flynn::test::run_cli("predict --model " + m + " --data " + c);
  ASSERT_EQ(pa.exit_code, 0) << pa.err;
  ASSERT_EQ(pc.exit_code, 0) << pc.err;
  EXPECT_EQ(pa.out, pc.out);
}

}  // namespace
