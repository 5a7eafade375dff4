// The classification report (flynn/eval/classification_report.hpp): its numbers against
// hand computations and the library's other metrics, the out-of-fold answers against
// models trained on each fold, and the report folder (page, JSON, figures) it writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/eval/classification_report.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/out_of_fold_report.hpp"
#include "flynn/eval/report_files.hpp"
#include "flynn/metrics.hpp"
#include "report_page_check.hpp"
#include "test_support.hpp"

namespace flynn::eval {
namespace {

namespace fs = std::filesystem;

// Three classes, 8 rows: truth, predictions and probabilities worked out by hand below.
ClassificationReport small_report() {
  ClassificationReportBuilder b({"a", "b", "c"});
  const std::vector<std::uint32_t> truth = {0, 0, 0, 1, 1, 2, 2, 2};
  const std::vector<std::uint32_t> pred = {0, 0, 1, 1, 0, 2, 2, 1};
  const std::vector<double> proba = {0.7, 0.2, 0.1, 0.6, 0.3, 0.1, 0.3, 0.5, 0.2, 0.2, 0.7, 0.1,
                                     0.5, 0.4, 0.1, 0.1, 0.1, 0.8, 0.2, 0.2, 0.6, 0.3, 0.4, 0.3};
  b.add(truth, pred, proba);
  return std::move(b).finish("t", "d");
}

TEST(EvalClassificationReport, NumbersMatchHandComputation) {
  const ClassificationReport r = small_report();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["rows"], 8);
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), 5.0 / 8);
  // Recall a 2/3, b 1/2, c 2/3; precision a 2/3 (a predicted 3 times), b 1/3, c 2/2.
  EXPECT_DOUBLE_EQ(j["balanced_accuracy"].get<double>(), (2.0 / 3 + 0.5 + 2.0 / 3) / 3);
  EXPECT_DOUBLE_EQ(j["per_class"][1]["precision"].get<double>(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(j["per_class"][2]["precision"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["per_class"][0]["f1"].get<double>(), 2.0 * 2 / (3 + 3));
  EXPECT_EQ(j["per_class"][2]["support"], 3);
  EXPECT_EQ(j["per_class"][1]["predicted"], 3);
  EXPECT_DOUBLE_EQ(j["macro_avg"]["precision"].get<double>(), (2.0 / 3 + 1.0 / 3 + 1.0) / 3);
  EXPECT_DOUBLE_EQ(j["weighted_avg"]["recall"].get<double>(),
                   5.0 / 8);  // weighted recall is accuracy
  EXPECT_EQ(j["confusion_matrix"]["counts"], nlohmann::json::parse("[[2,1,0],[1,1,0],[0,1,2]]"));
  EXPECT_DOUBLE_EQ(j["confusion_matrix"]["normalised"][1][0].get<double>(), 0.5);
  // One home for each metric: the report's equal the library's.
  const std::vector<std::uint32_t> truth = {0, 0, 0, 1, 1, 2, 2, 2},
                                   pred = {0, 0, 1, 1, 0, 2, 2, 1};
  EXPECT_DOUBLE_EQ(j["balanced_accuracy"].get<double>(), balanced_accuracy(truth, pred, 3));
  EXPECT_DOUBLE_EQ(j["macro_avg"]["f1"].get<double>(), macro_f1(truth, pred, 3));
  const std::vector<double> proba = {0.7, 0.2, 0.1, 0.6, 0.3, 0.1, 0.3, 0.5, 0.2, 0.2, 0.7, 0.1,
                                     0.5, 0.4, 0.1, 0.1, 0.1, 0.8, 0.2, 0.2, 0.6, 0.3, 0.4, 0.3};
  EXPECT_DOUBLE_EQ(j["log_loss"].get<double>(), log_loss(proba, 3, truth));
  EXPECT_DOUBLE_EQ(j["ece"].get<double>(), expected_calibration_error(proba, 3, truth));
  EXPECT_EQ(j["reliability"]["bins"], kEceBins);
  std::uint64_t binned = 0;
  for (const auto& b : j["reliability"]["rows"]) binned += b["rows"].get<std::uint64_t>();
  EXPECT_EQ(binned, 8u);
  EXPECT_FALSE(j.contains("binary"));
}

TEST(EvalClassificationReport, ChunksAddUpToOneCall) {
  const Dataset data = test::blobs(3, 30, 4, 5);
  std::vector<std::uint32_t> pred(data.n_rows);
  std::vector<double> proba(data.n_rows * 3);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    pred[r] = static_cast<std::uint32_t>((data.labels[r] + r % 4 / 3) % 3);
    for (std::size_t l = 0; l < 3; ++l) proba[r * 3 + l] = l == pred[r] ? 0.6 : 0.2;
  }
  ClassificationReportBuilder whole(data.classes.names()), chunked(data.classes.names());
  whole.add(data.labels, pred, proba);
  for (std::size_t start = 0; start < data.n_rows; start += 7) {
    const std::size_t end = std::min(data.n_rows, start + 7);
    chunked.add({data.labels.begin() + start, data.labels.begin() + end},
                {pred.begin() + start, pred.begin() + end},
                {proba.begin() + start * 3, proba.begin() + end * 3});
  }
  nlohmann::json a = to_json(std::move(whole).finish("t", "d")),
                 b = to_json(std::move(chunked).finish("t", "d"));
  EXPECT_NEAR(a["log_loss"].get<double>(), b["log_loss"].get<double>(), 1e-12);
  a.erase("log_loss");
  b.erase("log_loss");
  EXPECT_EQ(a, b);
}

TEST(EvalClassificationReport, CurvesMatchScikitLearnsValues) {
  // roc_auc_score([0,0,1,1], [0.1,0.4,0.35,0.8]) = 0.75; average_precision_score = 0.8333…
  const std::vector<double> s = {0.1, 0.4, 0.35, 0.8};
  const std::vector<bool> pos = {false, false, true, true};
  const RocCurve roc = roc_curve(s, pos);
  EXPECT_DOUBLE_EQ(roc.auc, 0.75);
  EXPECT_EQ(roc.false_positive_rate, (std::vector<double>{0, 0, 0.5, 0.5, 1}));
  EXPECT_EQ(roc.true_positive_rate, (std::vector<double>{0, 0.5, 0.5, 1, 1}));
  EXPECT_TRUE(std::isinf(roc.threshold.front()));
  EXPECT_NEAR(precision_recall_curve(s, pos).average_precision, 5.0 / 6, 1e-15);
  // Tied scores are one threshold: all rows at 0.5, two of four positive.
  const RocCurve tied = roc_curve({0.5, 0.5, 0.5, 0.5}, {true, false, true, false});
  EXPECT_EQ(tied.threshold.size(), 2u);
  EXPECT_DOUBLE_EQ(tied.auc, 0.5);
  EXPECT_DOUBLE_EQ(
      precision_recall_curve({0.5, 0.5, 0.5, 0.5}, {true, false, true, false}).average_precision,
      0.5);
  EXPECT_THROW(roc_curve({0.1, 0.2}, {true, true}), Error);
  // A long curve keeps at most kReportMaxCurvePoints points, its ends included, and its
  // area from every point.
  std::vector<double> many;
  std::vector<bool> truth;
  for (int i = 0; i < 5000; ++i) {
    many.push_back(i / 5000.0);
    truth.push_back(i % 3 == 0 ? i > 1000 : i > 3000);
  }
  const RocCurve long_roc = roc_curve(many, truth);
  EXPECT_EQ(long_roc.false_positive_rate.size(), kReportMaxCurvePoints);
  EXPECT_EQ(long_roc.true_positive_rate.back(), 1.0);
  EXPECT_EQ(long_roc.false_positive_rate.front(), 0.0);
}

TEST(EvalClassificationReport, TwoClassesHaveCurvesOfTheSecondClass) {
  ClassificationReportBuilder b({"no", "yes"});
  b.add({0, 0, 1, 1}, {0, 1, 0, 1}, {0.9, 0.1, 0.6, 0.4, 0.65, 0.35, 0.2, 0.8});
  const nlohmann::json j = to_json(std::move(b).finish("t", "d"));
  ASSERT_TRUE(j.contains("binary"));
  EXPECT_EQ(j["binary"]["positive_class"], "yes");
  EXPECT_DOUBLE_EQ(j["binary"]["prevalence"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["binary"]["roc_auc"].get<double>(), 0.75);  // scores 0.1, 0.4 | 0.35, 0.8
  EXPECT_TRUE(j["binary"]["roc"]["threshold"][0].is_null());     // +∞ as null
}

TEST(EvalClassificationReport, OutOfFoldAnswersAreWhatFoldModelsAnswer) {
  // For each variant (and a class weight), every row's answers from the out-of-fold scores
  // equal predict and predict_proba of the model trained on the other folds.
  const Dataset all = test::blobs(3, 40, 6, 9, 1.6);
  std::vector<std::size_t> keep;
  for (std::size_t r = 0; r < all.n_rows; ++r)
    if (all.labels[r] != 2 || r % 3 == 0) keep.push_back(r);  // imbalanced: class weights matter
  const Dataset data = all.subset(keep);
  const std::uint32_t k = 4;
  const auto folds = stratified_folds(data.labels, data.classes.size(), k, 3);
  const FlyCvEvaluator ev(data, folds, k);
  for (const char* variant : {"paper", "zsign", "zsign-q+paper"}) {
    for (const char* weight : {"none", "balanced"}) {
      HyperParams h;
      h.variant = parse_variant(variant);
      h.class_weight = ClassWeight::parse(weight);
      h.gamma = 0.3;
      const FlyConfig config =
          h.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
      const Calibration calibration{0.37, 0.1, CalibrationSource::Given, 0};  // w > 0: priors matter
      const FoldAnswers a =
          out_of_fold_answers(data, config, ev.out_of_fold_scores(config), folds, k, calibration);
      for (const FoldRows& fr : fold_rows(folds, k)) {
        FlyNN model(config, data.classes);
        model.fit(data.subset(fr.train));
        model.set_calibration(calibration);
        const Dataset test = data.subset(fr.test);
        const std::vector<std::uint32_t> predicted = model.predict(test);
        const std::vector<double> proba = model.predict_proba(test);
        for (std::size_t i = 0; i < fr.test.size(); ++i) {
          const std::size_t r = fr.test[i];
          ASSERT_EQ(a.predicted[r], predicted[i]) << variant << " " << weight << " row " << r;
          for (std::size_t l = 0; l < 3; ++l)
            ASSERT_NEAR(a.proba[r * 3 + l], proba[i * 3 + l], 1e-12)
                << variant << " " << weight << " row " << r;
        }
      }
    }
  }
}

TEST(EvalClassificationReport, PageShowsTheJsonNumbers) {
  const ClassificationReport r = small_report();
  const nlohmann::json j = to_json(r);
  const std::string html = report_html(r, draw_report_figures(r));
  const test::PageCheck check = test::check_page_against_json(html, j);
  EXPECT_TRUE(check.mismatches.empty()) << check.mismatches.front();
  for (const std::string& p : test::required_pointers(j))
    EXPECT_NE(std::find(check.pointers.begin(), check.pointers.end(), p), check.pointers.end())
        << p;
  // Self-contained: figures inline, no script, nothing fetched.
  EXPECT_NE(html.find("data:image/png;base64,"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // The check catches a page that shows another number than the JSON (its control).
  nlohmann::json other = j;
  other["accuracy"] = 0.5;
  EXPECT_FALSE(test::check_page_against_json(html, other).mismatches.empty());
}

TEST(EvalClassificationReport, FiguresArePngImages) {
  ClassificationReportBuilder b({"no", "yes"});
  b.add({0, 0, 1, 1}, {0, 1, 0, 1}, {0.9, 0.1, 0.6, 0.4, 0.65, 0.35, 0.2, 0.8});
  const std::vector<ReportFigure> figures = draw_report_figures(std::move(b).finish("t", "d"));
  std::vector<std::string> names;
  for (const ReportFigure& f : figures) {
    names.push_back(f.file);
    ASSERT_GT(f.png.size(), 1000u) << f.file;
    EXPECT_EQ(f.png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << f.file;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"confusion_matrix.png", "reliability.png", "roc.png",
                                             "precision_recall.png"}));
}

TEST(EvalClassificationReport, FolderIsWrittenAtOnceAndNeverOverOtherFiles) {
  test::TempDir dir;
  const ClassificationReport r = small_report();
  const std::string out = dir.file("nested/report");
  const std::vector<std::string> files = write_report(r, out);
  EXPECT_EQ(files, (std::vector<std::string>{"report.json", "report.html", "confusion_matrix.png",
                                             "reliability.png"}));
  for (const std::string& f : files) EXPECT_TRUE(fs::is_regular_file(fs::path(out) / f)) << f;
  EXPECT_EQ(nlohmann::json::parse(test::read_text(out + "/report.json")), to_json(r));
  // An earlier report is replaced; nothing is left beside it.
  write_report(r, out);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir.file("nested")))
    entries += e.path().filename() == "report" ? 1 : 100;
  EXPECT_EQ(entries, 1u);
  // A folder with other files, or a file, is refused and left as it was.
  const std::string mine = dir.file("mine");
  fs::create_directory(mine);
  test::write_text(mine + "/notes.txt", "keep");
  EXPECT_THROW(write_report(r, mine), Error);
  EXPECT_THROW(check_report_folder(mine), Error);
  EXPECT_EQ(test::read_text(mine + "/notes.txt"), "keep");
  EXPECT_THROW(write_report(r, mine + "/notes.txt"), Error);
  EXPECT_EQ(test::read_text(mine + "/notes.txt"), "keep");
  // An empty folder is fine.
  fs::create_directory(dir.file("empty"));
  EXPECT_NO_THROW(write_report(r, dir.file("empty")));
  // A failed write leaves no temporary folder behind: the parent is a file.
  EXPECT_THROW(write_report(r, mine + "/notes.txt/report"), Error);
  std::size_t in_mine = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(mine)) ++in_mine;
  EXPECT_EQ(in_mine, 1u);
}

}  // namespace
}  // namespace flynn::eval
