// `flynn update`, `flynn forget` and `flynn merge` on real data (scikit-learn's Digits,
// split into parts A and B): the exact model algebra, byte for byte on the model files
// (the calibration aside: an edit keeps the edited model's, as it has no rows to refit it
// on), and the refusals (one-line error, non-zero exit, no file written).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::read_text;
using test::run_cli;

const std::string kAllLabels = "0,1,2,3,4,5,6,7,8,9";
// Small enough to keep the many trainings quick; the algebra does not depend on it.
// The paper's variant: standardising variants (the default) fix their feature statistics at
// the first fit, so parts trained apart only merge when given the whole's statistics.
const std::string kHyper = " --m 2048 --rho 16 --variant paper --quiet";

using test::expect_clean_error;

class CliModelAlgebra : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string digits = test::digits_csv();
    if (digits.empty()) GTEST_SKIP() << "scikit-learn's digits.csv.gz not installed";
    data_ = io::load_dataset(digits);
    // A: two rows in three, B: the third; A∪B: A's rows then B's.
    write_rows("a.csv", [](std::size_t r, const std::string&) { return r % 3 != 0; });
    write_rows("b.csv", [](std::size_t r, const std::string&) { return r % 3 == 0; });
    write_rows("ab.csv", [](std::size_t r, const std::string&) { return r % 3 != 0; });
    append_rows("ab.csv", [](std::size_t r, const std::string&) { return r % 3 == 0; });
  }

  std::string file(const std::string& name) const { return dir_.file(name); }

  // Writes the Digits rows that `keep` selects (row index, label) as CSV, label last.
  void write_rows(const std::string& name,
                  const std::function<bool(std::size_t, const std::string&)>& keep) {
    test::write_text(file(name), csv(keep));
  }
  void append_rows(const std::string& name,
                   const std::function<bool(std::size_t, const std::string&)>& keep) {
    test::write_text(file(name), read_text(file(name)) + csv(keep));
  }

  std::string csv(const std::function<bool(std::size_t, const std::string&)>& keep) const {
    std::ostringstream out;
    for (std::size_t r = 0; r < data_.n_rows; ++r) {
      const std::string& label = data_.classes.name(data_.labels[r]);
      if (!keep(r, label)) continue;
      for (std::size_t j = 0; j < data_.n_features; ++j) out << data_.row(r)[j] << ',';
      out << label << '\n';
    }
    return out.str();
  }

  // `flynn train` on a file into a model; fails the test on error.
  void train(const std::string& data, const std::string& model, const std::string& labels,
             const std::string& extra = "") {
    const auto r = run_cli("train --data " + file(data) + " --model " + file(model) +
                           " --labels " + labels + kHyper + extra);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  bool same_bytes(const std::string& a, const std::string& b) const {
    return read_text(file(a)) == read_text(file(b));
  }

  // `edited` (by update, merge or forget) has exactly `trained`'s counts, classes and
  // statistics: given `trained`'s calibration it is `trained` byte for byte. Its own
  // calibration is `kept_from`'s, the model the edit started from (docs/guide/probabilities.md).
  void expect_edit_equals(const std::string& edited, const std::string& trained,
                          const std::string& kept_from) const {
    FlyNN e = io::load_model(file(edited), 1);
    const FlyNN t = io::load_model(file(trained), 1);
    EXPECT_EQ(e.calibration(), io::load_model(file(kept_from), 1).calibration()) << edited;
    EXPECT_EQ(t.calibration().source, CalibrationSource::LeaveOneOut) << trained;
    e.set_calibration(t.calibration());
    EXPECT_TRUE(io::serialize_model(e) == read_text(file(trained))) << edited << " vs " << trained;
  }

  Dataset data_;
  test::TempDir dir_;
};

TEST_F(CliModelAlgebra, MergeOfPartsEqualsTrainingOnTheWhole) {
  train("a.csv", "a.flynn", kAllLabels);
  train("b.csv", "b.flynn", kAllLabels);
  train("ab.csv", "ab.flynn", kAllLabels);
  const auto r = run_cli("merge " + file("a.flynn") + " " + file("b.flynn") + " --out " +
                         file("merged.flynn") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_edit_equals("merged.flynn", "ab.flynn", "a.flynn");
  EXPECT_FALSE(same_bytes("a.flynn", "ab.flynn"));  // the comparison can tell models apart
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["training_rows"], 1797);
  EXPECT_EQ(j["models"].size(), 2u);
}

TEST_F(CliModelAlgebra, UpdateEqualsTrainingOnTheWhole) {
  train("a.csv", "a.flynn", kAllLabels);
  train("ab.csv", "ab.flynn", kAllLabels);
  auto r = run_cli("update --model " + file("a.flynn") + " --data " + file("b.csv") + " --out " +
                   file("updated.flynn") + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_edit_equals("updated.flynn", "ab.flynn", "a.flynn");
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows_added"], 599);
  // Without --out the model is updated in place.
  r = run_cli("update --model " + file("a.flynn") + " --data " + file("b.csv") + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(same_bytes("a.flynn", "updated.flynn"));
}

TEST_F(CliModelAlgebra, ForgetEqualsTrainingWithout) {
  train("a.csv", "a.flynn", kAllLabels);
  train("ab.csv", "ab.flynn", kAllLabels);
  const auto r = run_cli("forget --model " + file("ab.flynn") + " --data " + file("b.csv") +
                         " --out " + file("forgot.flynn") + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_edit_equals("forgot.flynn", "a.flynn", "ab.flynn");
  EXPECT_EQ(nlohmann::json::parse(r.out)["rows_removed"], 599);
}

TEST_F(CliModelAlgebra, UpdateAddsClassesOnlyWhenTheLabelListSaysSo) {
  // A's digits 0-4, then B's digits 5-9 as new classes.
  auto low = [](std::size_t r, const std::string& l) { return r % 3 != 0 && l < "5"; };
  auto high = [](std::size_t r, const std::string& l) { return r % 3 == 0 && l >= "5"; };
  write_rows("a04.csv", low);
  write_rows("b59.csv", high);
  write_rows("both.csv", low);
  append_rows("both.csv", high);
  train("a04.csv", "a04.flynn", "0,1,2,3,4");
  train("both.csv", "both.flynn", kAllLabels);
  const std::string before = read_text(file("a04.flynn"));

  auto r = run_cli("update --model " + file("a04.flynn") + " --data " + file("b59.csv") +
                   " --quiet");
  expect_clean_error(r, "label '5' is not one of the model's classes (0,1,2,3,4); to add "
                        "classes give --labels");
  r = run_cli("update --model " + file("a04.flynn") + " --data " + file("b59.csv") +
              " --labels 1,0,2,3,4,5,6,7,8,9 --quiet");
  expect_clean_error(r, "must start with the model's labels in order (0,1,2,3,4), but position 1 is '1'");
  EXPECT_EQ(read_text(file("a04.flynn")), before);  // refusals leave the model as it was

  r = run_cli("update --model " + file("a04.flynn") + " --data " + file("b59.csv") +
              " --labels " + kAllLabels + " --out " + file("grown.flynn") + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["classes_added"], 5);
  expect_edit_equals("grown.flynn", "both.flynn", "a04.flynn");
}

TEST_F(CliModelAlgebra, ForgetRefusesRowsTheModelCannotContain) {
  train("a.csv", "a.flynn", kAllLabels);
  // More rows of a class than the model learned.
  auto r = run_cli("forget --model " + file("a.flynn") + " --data " + file("ab.csv") + " --out " +
                   file("f1.flynn") + " --quiet");
  expect_clean_error(r, "cannot forget 178 rows of class '0': the model holds only 119");
  // Rows it never learned: some of their FlyHash units the class has never seen.
  r = run_cli("forget --model " + file("a.flynn") + " --data " + file("b.csv") + " --out " +
              file("f2.flynn") + " --quiet");
  expect_clean_error(r, "would go below zero");
  EXPECT_FALSE(std::filesystem::exists(file("f1.flynn")));
  EXPECT_FALSE(std::filesystem::exists(file("f2.flynn")));
}

TEST_F(CliModelAlgebra, MergeRefusesDifferentModels) {
  train("a.csv", "a.flynn", kAllLabels);
  train("b.csv", "b7.flynn", kAllLabels, " --seed 7");
  auto r = run_cli("merge " + file("a.flynn") + " " + file("b7.flynn") + " --out " +
                   file("m.flynn"));
  expect_clean_error(r, "cannot merge models whose seed differ");
  EXPECT_NE(r.err.find(file("b7.flynn")), std::string::npos) << r.err;
  train("b.csv", "b_labels.flynn", "9,8,7,6,5,4,3,2,1,0");
  r = run_cli("merge " + file("a.flynn") + " " + file("b_labels.flynn") + " --out " +
              file("m.flynn"));
  expect_clean_error(r, "different label lists");
  r = run_cli("merge " + file("a.flynn") + " --out " + file("m.flynn"));
  expect_clean_error(r, "merge needs at least two models, got 1");
  EXPECT_FALSE(std::filesystem::exists(file("m.flynn")));
}

}  // namespace
}  // namespace flynn
