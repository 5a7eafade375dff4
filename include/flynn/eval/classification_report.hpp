#pragma once
// A classification report: what a person checks first about a classifier's answers on
// labelled rows. The confusion matrix (counts and row-normalised), each class's precision,
// recall, F1 and support with their macro and weighted averages, accuracy, balanced
// accuracy, log-loss, the reliability of the probabilities (reliability.hpp: the bins of
// the ECE) and, for two classes, the ROC and precision-recall curves with their areas.
//
// The numbers are computed here once, from the rows' true classes, the classes predict()
// returned and the probabilities predict_proba() returned; `flynn eval`, `flynn predict`,
// `flynn tune` and Python's flynn.report only choose the rows and print or draw the result
// (report_files.hpp writes the figures, the HTML page and the JSON).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/eval/calibration.hpp"
#include "flynn/eval/reliability.hpp"
#include "flynn/metrics.hpp"

namespace flynn::eval {

/// The most classes whose confusion matrix a report holds (L² cells; beyond this the
/// matrix is neither readable nor small, and the per-class table says the same by class).
inline constexpr std::size_t kReportMaxConfusionClasses = 100;
/// The most points a report keeps of a curve (what its figure draws and its JSON holds);
/// the areas are computed on every point first.
inline constexpr std::size_t kReportMaxCurvePoints = 1000;

/// A receiver operating characteristic: at each distinct score, from the highest down,
/// the false-positive and true-positive rates of calling every row with at least that
/// score positive. The first point is (0, 0) at threshold +∞.
struct RocCurve {
  std::vector<double> false_positive_rate, true_positive_rate, threshold;
  double auc = 0.0;  ///< area under the curve (trapezoids), on every point
};

/// Precision and recall at each distinct score, from the highest down; the first point
/// is (recall 0, precision 1) at threshold +∞.
struct PrecisionRecallCurve {
  std::vector<double> precision, recall, threshold;
  /// Σ_k (recall_k − recall_{k−1})·precision_k over the thresholds: scikit-learn's
  /// average_precision_score, on every point.
  double average_precision = 0.0;
};

/// The ROC curve of `scores` (higher: more likely positive) against `positive`. Throws
/// flynn::Error on mismatched sizes or unless both kinds of row occur.
RocCurve roc_curve(const std::vector<double>& scores, const std::vector<bool>& positive);
/// The precision-recall curve, with the same checks.
PrecisionRecallCurve precision_recall_curve(const std::vector<double>& scores,
                                            const std::vector<bool>& positive);

/// A two-class report's curves, for the second class of the label list (positive, as in
/// scikit-learn's classes_[1]) scored by its probability.
struct BinaryCurves {
  std::size_t positive = 1;  ///< class id of the positive class
  double prevalence = 0.0;   ///< fraction of rows of the positive class
  RocCurve roc;
  PrecisionRecallCurve precision_recall;
};

/// Everything a report shows. Built by ClassificationReportBuilder.
struct ClassificationReport {
  std::string title;        ///< e.g. "flynn eval: credit_data.csv.gz"
  std::string description;  ///< which rows and which answers, e.g. "out-of-fold predictions ..."
  std::vector<std::string> classes;
  ClassTally tally{0};
  /// Rows of true class t predicted p at [t·L + p]; empty when L > kReportMaxConfusionClasses.
  std::vector<std::uint64_t> confusion;
  double log_loss = 0.0;
  ConfidenceBins reliability{kEceBins};  ///< the ECE's bins
  std::optional<BinaryCurves> binary;    ///< two classes, both with rows
  /// Rows left out because their label is not one of `classes` (a test file's class the
  /// model never saw: predict counts them as errors; here they have no row to go in).
  std::uint64_t excluded_rows = 0;
  /// Facts shown on the page and kept in the JSON: the command's data, model, folds,
  /// configuration (an object of strings and numbers; may be empty).
  nlohmann::json facts = nlohmann::json::object();
};

/// Collects rows, chunk by chunk, in O(L² + n) memory for two classes (each row's score
/// is kept for the curves) and O(L²) otherwise.
class ClassificationReportBuilder {
 public:
  /// Throws flynn::Error for fewer than two classes.
  explicit ClassificationReportBuilder(std::vector<std::string> classes);
  /// Adds rows: truth[i] and predicted[i] class ids < L, `proba` their n × L
  /// probabilities (row-major). Throws flynn::Error on mismatched sizes or ids.
  void add(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
           const std::vector<double>& proba);
  /// Counts rows left out (ClassificationReport::excluded_rows).
  void exclude(std::uint64_t rows) { excluded_ += rows; }
  std::uint64_t rows() const { return report_.tally.rows(); }
  /// The report; throws flynn::Error when no row was added.
  ClassificationReport finish(std::string title, std::string description) &&;

 private:
  ClassificationReport report_;
  double log_loss_sum_ = 0.0;
  std::uint64_t excluded_ = 0;
  std::vector<double> positive_score_;  // two classes: each row's probability of class 1
  std::vector<bool> positive_;          // and whether it is of class 1
};

/// The report as JSON: {"title", "description", "facts", "rows", "excluded_rows",
/// "classes", "accuracy", "balanced_accuracy", "log_loss", "ece", "macro_avg",
/// "weighted_avg" ({precision, recall, f1}), "per_class" ([{class, precision, recall, f1,
/// support, predicted}]), "confusion_matrix" ({counts, normalised}, when kept),
/// "reliability" ({bins, ece, rows: [{lower, upper, rows, mean_confidence, accuracy}]}),
/// "binary" (two classes: {positive_class, prevalence, roc_auc, average_precision, roc:
/// {false_positive_rate, true_positive_rate, threshold}, precision_recall: {precision,
/// recall, threshold}}, thresholds of +∞ as null)}. Every number the page shows is here.
nlohmann::json to_json(const ClassificationReport& report);

/// Row-normalised confusion matrix: each true class's row divided by its rows (a row of
/// zeros for a class without rows).
std::vector<double> normalised_confusion(const ClassificationReport& report);

/// Macro (mean over present classes) and weighted (by support) averages of precision,
/// recall and F1, as scikit-learn's classification_report gives them.
struct MetricAverages {
  double precision = 0.0, recall = 0.0, f1 = 0.0;
};
MetricAverages macro_average(const ClassTally& tally);
MetricAverages weighted_average(const ClassTally& tally);

}  // namespace flynn::eval
