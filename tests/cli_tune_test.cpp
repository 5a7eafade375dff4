// `flynn tune` end to end: the JSON summary and the model it writes, and clean errors for
// bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/scoring.hpp"
#include "test_support.hpp"

namespace flynn::eval {
namespace {

class TuneCli : public ::testing::Test {
 protected:
  test::TempDir dir_;
  std::string data_ = dir_.file("blobs.csv");
  void SetUp() override {
    const Dataset d = test::blobs(3, 40, 5, 17, 0.3);
    std::string csv;
    for (std::size_t r = 0; r < d.n_rows; ++r) {
      for (std::size_t j = 0; j < d.n_features; ++j) csv += std::to_string(d.features[r * 5 + j]) + ",";
      csv += d.classes.name(d.labels[r]) + "\n";
    }
    test::write_text(data_, csv);
  }
};

TEST_F(TuneCli, JsonSummaryAndModel) {
  const std::string model = dir_.file("m.flynn");
  const auto r = test::run_cli("tune --data " + data_ + " --model " + model +
                               " --budget 4 --folds 3 --knn --json --quiet --test " + data_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "tune");
  EXPECT_EQ(j["rows"], 120);
  EXPECT_EQ(j["fold_accuracy"].size(), 3u);
  double mean = 0;
  for (double a : j["fold_accuracy"]) mean += a / 3.0;
  EXPECT_NEAR(j["accuracy"].get<double>(), mean, 1e-12);  // the best configuration's CV accuracy
  EXPECT_GT(j["accuracy"].get<double>(), 0.5);  // three classes: chance is 1/3
  for (const char* k : {"m", "s", "rho", "gamma", "preprocess"}) EXPECT_TRUE(j["config"].contains(k)) << k;
  EXPECT_GT(j["temperature"].get<double>(), 0.0);
  EXPECT_TRUE(j["calibration"].contains("heldout_ece"));
  EXPECT_TRUE(j["knn"]["tuned"].contains("accuracy_mean"));
  EXPECT_TRUE(j["test"].contains("log_loss"));
  EXPECT_FALSE(j["search"]["time_limited"].get<bool>());
  // The defaults' own configuration was a candidate on the same folds: the choice scores at
  // least as high, and when it is kept the model is the one `train` gives.
  EXPECT_GE(j["accuracy"].get<double>(), j["default_metric"].get<double>());
  if (j["kept_default"].get<bool>()) {
    EXPECT_EQ(j["config"], j["default_config"]);
  }
  const auto plain = test::run_cli("eval --data " + data_ + " --folds 3 --json --quiet");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(nlohmann::json::parse(plain.out)["config"], j["default_config"]);
  // The model file carries the fitted temperature and predicts.
  EXPECT_DOUBLE_EQ(io::load_model(model).temperature(), j["temperature"].get<double>());
  const auto p = test::run_cli("predict --model " + model + " --data " + data_ + " --json --quiet");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_GT(nlohmann::json::parse(p.out)["accuracy"].get<double>(), 0.5);
}

TEST_F(TuneCli, MetricAndClassWeightChooseAndReachTheModel) {
  const std::string model = dir_.file("w.flynn");
  const auto r = test::run_cli("tune --data " + data_ + " --model " + model +
                               " --budget 3 --folds 3 --metric balanced_accuracy --class-weight balanced --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metric"], "balanced_accuracy");
  EXPECT_EQ(j["config"]["class_weight"], "balanced");
  EXPECT_EQ(j["search"]["metric"], "balanced_accuracy");
  EXPECT_GT(j["balanced_accuracy"].get<double>(), 0.5);
  EXPECT_EQ(io::load_model(model).config().class_weight.text(), "balanced");
  // eval reports every metric; bad names are clean errors naming the flag's choices.
  const auto e = test::run_cli("eval --data " + data_ + " --folds 3 --class-weight c1=2 --json --quiet");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const auto ej = nlohmann::json::parse(e.out);
  EXPECT_EQ(ej["config"]["class_weight"], "c1=2");
  EXPECT_EQ(ej["fold_balanced_accuracy"].size(), 3u);
  EXPECT_GT(ej["macro_f1"].get<double>(), 0.5);
  auto bad = test::run_cli("tune --data " + data_ + " --model " + model + " --metric auc --quiet");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("expected accuracy, balanced_accuracy, macro_f1 or log_loss"), std::string::npos)
      << bad.err;
  bad = test::run_cli("eval --data " + data_ + " --class-weight c9=2 --quiet");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_LT(bad.exit_code, 128);
  EXPECT_NE(bad.err.find("'c9' is not a class of the model"), std::string::npos) << bad.err;
}

TEST_F(TuneCli, LogLossMetricChoosesByCalibratedProbabilities) {
  const std::string model = dir_.file("ll.flynn");
  const auto r = test::run_cli("tune --data " + data_ + " --model " + model + " --test " + data_ +
                               " --budget 3 --folds 3 --metric log_loss --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["metric"], "log_loss");
  EXPECT_EQ(j["search"]["metric"], "log_loss");
  EXPECT_EQ(j["fold_log_loss"].size(), 3u);
  const double ll = j["log_loss"].get<double>();
  EXPECT_GE(ll, 0.0);  // 0 when the choice separates these well-spread blobs perfectly
  EXPECT_LE(ll, j["default_metric"].get<double>() * -1.0 + 1e-12);  // no worse than the defaults'
  EXPECT_LT(ll, std::log(3.0));  // better than the uniform guess
  // The search's figure is the stored temperature's: the calibration's out-of-fold log-loss
  // (over all rows; the search's is the mean over folds, equal up to fold sizes).
  EXPECT_NEAR(ll, j["calibration"]["out_of_fold_log_loss"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(j["temperature"].get<double>(), io::load_model(model).temperature());
  EXPECT_TRUE(j["test"].contains("log_loss"));
  const auto text = test::run_cli("tune --data " + data_ + " --model " + model + " --budget 3 --folds 3 --metric log_loss");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("out-of-fold log-loss of its calibrated probabilities"), std::string::npos) << text.out;
}

TEST_F(TuneCli, BadInputGivesCleanErrors) {
  auto r = test::run_cli("tune --data " + dir_.file("missing.csv") + " --model " + dir_.file("m.flynn") + " --quiet");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128);
  EXPECT_NE(r.err.find("missing.csv"), std::string::npos) << r.err;
  r = test::run_cli("tune --data " + data_ + " --model " + dir_.file("m.flynn") + " --folds 500 --quiet");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128);
  EXPECT_NE(r.err.find("fewer than the 500 folds"), std::string::npos) << r.err;
}

TEST_F(TuneCli, TrainAutoSavesTheModelOfTheConfigurationItReports) {
  const std::string model = dir_.file("auto.flynn");
  const auto r = test::run_cli("train --auto --data " + data_ + " --model " + model + " --threads 2 --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("auto"));
  EXPECT_TRUE(j["auto"]["cv"].contains("default"));
  EXPECT_EQ(j["auto"]["metric"], "accuracy");
  EXPECT_EQ(j["auto"]["gamma"], j["config"]["gamma"]);
  // The same configuration given explicitly gives the same model bytes (so federated
  // parties that agree on it train exactly this model).
  const auto& c = j["config"];
  const std::string explicit_model = dir_.file("explicit.flynn");
  const auto e = test::run_cli("train --data " + data_ + " --model " + explicit_model + " --quiet --m " +
                               c["m"].dump() + " --s " + c["s"].dump() + " --rho " + c["rho"].dump() +
                               " --gamma " + c["gamma"].dump() + " --seed " + c["seed"].dump() + " --variant " +
                               c["variant"].get<std::string>() + " --preprocess " +
                               c["preprocess"].get<std::string>());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(test::read_text(model), test::read_text(explicit_model));
  // Deterministic across thread counts.
  const std::string one = dir_.file("one.flynn");
  ASSERT_EQ(test::run_cli("train --auto --data " + data_ + " --model " + one + " --threads 1 --quiet").exit_code, 0);
  EXPECT_EQ(test::read_text(model), test::read_text(one));

  // Weighted classes: the choice judges by balanced accuracy.
  const auto w = test::run_cli("train --auto --class-weight balanced --data " + data_ + " --model " + one + " --json --quiet");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_EQ(nlohmann::json::parse(w.out)["auto"]["metric"], "balanced_accuracy");

  // eval --auto: nested CV, one choice per fold.
  const auto ev = test::run_cli("eval --auto --data " + data_ + " --folds 3 --json --quiet");
  ASSERT_EQ(ev.exit_code, 0) << ev.err;
  const auto ej = nlohmann::json::parse(ev.out);
  EXPECT_EQ(ej["auto"]["folds"].size(), 3u);
  EXPECT_EQ(ej["fold_accuracy"].size(), 3u);
  EXPECT_GT(ej["accuracy_mean"].get<double>(), 0.5);

  // Combinations that cannot work are refused, naming them, and write nothing.
  const std::string stats = dir_.file("stats.csv");
  test::write_text(stats, "0,0,0,0,0\n1,1,1,1,1\n");
  const std::string none = dir_.file("none.flynn");
  test::expect_clean_error(
      test::run_cli("train --auto --feature-stats " + stats + " --data " + data_ + " --model " + none + " --quiet"),
      "--feature-stats");
  EXPECT_FALSE(std::filesystem::exists(none));
  test::expect_clean_error(test::run_cli("eval --auto --calibration --data " + data_ + " --quiet"), "--calibration");
  test::expect_clean_error(test::run_cli("eval --auto-study --data " + data_ + " --quiet"), "--auto");
}

}  // namespace
}  // namespace flynn::eval
