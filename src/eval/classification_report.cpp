#include "flynn/eval/classification_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::eval {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Row indices by decreasing score (ties in row order), after the checks both curves share.
std::vector<std::size_t> by_decreasing_score(const std::vector<double>& scores,
                                             const std::vector<bool>& positive,
                                             std::size_t& n_positive) {
  if (scores.size() != positive.size())
    throw Error(fmt::format("curve: {} scores for {} rows", scores.size(), positive.size()));
  n_positive = static_cast<std::size_t>(std::count(positive.begin(), positive.end(), true));
  if (n_positive == 0 || n_positive == positive.size())
    throw Error("curve: needs rows of both the positive and the other class");
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

// Calls visit(threshold, true positives, false positives) at each distinct score, from the
// highest down: the counts of calling every row with at least that score positive.
template <typename Visit>
void for_each_threshold(const std::vector<double>& scores, const std::vector<bool>& positive,
                        const std::vector<std::size_t>& order, Visit visit) {
  std::uint64_t tp = 0, fp = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    (positive[order[i]] ? tp : fp) += 1;
    if (i + 1 == order.size() || scores[order[i + 1]] != scores[order[i]])
      visit(scores[order[i]], tp, fp);
  }
}

// Keeps at most kReportMaxCurvePoints of the parallel vectors: the first, the last and
// evenly spaced ones between (what a figure can show).
void thin(std::vector<double>& a, std::vector<double>& b, std::vector<double>& c) {
  const std::size_t n = a.size();
  if (n <= kReportMaxCurvePoints) return;
  std::vector<double> ka, kb, kc;
  for (std::size_t j = 0; j < kReportMaxCurvePoints; ++j) {
    const std::size_t i = j * (n - 1) / (kReportMaxCurvePoints - 1);
    ka.push_back(a[i]);
    kb.push_back(b[i]);
    kc.push_back(c[i]);
  }
  a.swap(ka);
  b.swap(kb);
  c.swap(kc);
}

}  // namespace

RocCurve roc_curve(const std::vector<double>& scores, const std::vector<bool>& positive) {
  std::size_t P = 0;
  const std::vector<std::size_t> order = by_decreasing_score(scores, positive, P);
  const double N = static_cast<double>(positive.size() - P);
  RocCurve c;
  c.false_positive_rate = {0.0};
  c.true_positive_rate = {0.0};
  c.threshold = {kInfinity};
  for_each_threshold(scores, positive, order, [&](double t, std::uint64_t tp, std::uint64_t fp) {
    const double x = static_cast<double>(fp) / N,
                 y = static_cast<double>(tp) / static_cast<double>(P);
    c.auc += (x - c.false_positive_rate.back()) * (y + c.true_positive_rate.back()) / 2.0;
    c.false_positive_rate.push_back(x);
    c.true_positive_rate.push_back(y);
    c.threshold.push_back(t);
  });
  thin(c.false_positive_rate, c.true_positive_rate, c.threshold);
  return c;
}

PrecisionRecallCurve precision_recall_curve(const std::vector<double>& scores,
                                            const std::vector<bool>& positive) {
  std::size_t P = 0;
  const std::vector<std::size_t> order = by_decreasing_score(scores, positive, P);
  PrecisionRecallCurve c;
  c.precision = {1.0};
  c.recall = {0.0};
  c.threshold = {kInfinity};
  for_each_threshold(scores, positive, order, [&](double t, std::uint64_t tp, std::uint64_t fp) {
    const double r = static_cast<double>(tp) / static_cast<double>(P);
    const double p = static_cast<double>(tp) / static_cast<double>(tp + fp);
    c.average_precision += (r - c.recall.back()) * p;
    c.precision.push_back(p);
    c.recall.push_back(r);
    c.threshold.push_back(t);
  });
  thin(c.precision, c.recall, c.threshold);
  return c;
}

ClassificationReportBuilder::ClassificationReportBuilder(std::vector<std::string> classes) {
  if (classes.size() < 2) throw Error("a classification report needs at least two classes");
  const std::size_t L = classes.size();
  report_.classes = std::move(classes);
  report_.tally = ClassTally(L);
  if (L <= kReportMaxConfusionClasses) report_.confusion.assign(L * L, 0);
}

void ClassificationReportBuilder::add(const std::vector<std::uint32_t>& truth,
                                      const std::vector<std::uint32_t>& predicted,
                                      const std::vector<double>& proba) {
  const std::size_t L = report_.classes.size(), n = truth.size();
  if (predicted.size() != n || proba.size() != n * L)
    throw Error(fmt::format("report: {} labels, {} predictions and {} probabilities for {} classes",
                            n, predicted.size(), proba.size(), L));
  if (n == 0) return;
  for (std::size_t r = 0; r < n; ++r) {
    if (truth[r] >= L || predicted[r] >= L)
      throw Error(fmt::format("report: class id {} outside the {} classes",
                              std::max(truth[r], predicted[r]), L));
    report_.tally.add(truth[r], predicted[r]);
    if (!report_.confusion.empty()) ++report_.confusion[truth[r] * L + predicted[r]];
    report_.reliability.add(proba.data() + r * L, L, truth[r]);
    if (L == 2) {
      positive_score_.push_back(proba[r * L + 1]);
      positive_.push_back(truth[r] == 1);
    }
  }
  // The library's one log-loss (calibration.hpp), summed chunk by chunk.
  log_loss_sum_ += log_loss(proba, L, truth) * static_cast<double>(n);
}

ClassificationReport ClassificationReportBuilder::finish(std::string title,
                                                         std::string description) && {
  const std::uint64_t n = report_.tally.rows();
  if (n == 0) throw Error("report: no labelled row to report on");
  report_.title = std::move(title);
  report_.description = std::move(description);
  report_.log_loss = log_loss_sum_ / static_cast<double>(n);
  report_.excluded_rows = excluded_;
  const std::uint64_t P = report_.tally.support(1);
  if (report_.classes.size() == 2 && P > 0 && P < n) {
    BinaryCurves b;
    b.prevalence = static_cast<double>(P) / static_cast<double>(n);
    b.roc = roc_curve(positive_score_, positive_);
    b.precision_recall = precision_recall_curve(positive_score_, positive_);
    report_.binary = std::move(b);
  }
  return std::move(report_);
}

std::vector<double> normalised_confusion(const ClassificationReport& r) {
  const std::size_t L = r.classes.size();
  std::vector<double> out(r.confusion.size(), 0.0);
  if (r.confusion.empty()) return out;
  for (std::size_t t = 0; t < L; ++t) {
    const std::uint64_t rows = r.tally.support(t);
    if (rows == 0) continue;
    for (std::size_t p = 0; p < L; ++p)
      out[t * L + p] = static_cast<double>(r.confusion[t * L + p]) / static_cast<double>(rows);
  }
  return out;
}

MetricAverages macro_average(const ClassTally& t) {
  MetricAverages a;
  std::size_t present = 0;
  for (std::size_t l = 0; l < t.n_classes(); ++l) {
    if (!t.present(l)) continue;
    a.precision += t.precision(l);
    a.recall += t.recall(l);
    ++present;
  }
  if (present == 0) return a;
  a.precision /= static_cast<double>(present);
  a.recall /= static_cast<double>(present);
  a.f1 = t.macro_f1();  // the one macro-F1 (metrics.hpp)
  return a;
}

MetricAverages weighted_average(const ClassTally& t) {
  MetricAverages a;
  if (t.rows() == 0) return a;
  for (std::size_t l = 0; l < t.n_classes(); ++l) {
    const double w = static_cast<double>(t.support(l)) / static_cast<double>(t.rows());
    a.precision += w * t.precision(l);
    a.recall += w * t.recall(l);
    a.f1 += w * t.f1(l);
  }
  return a;
}

namespace {

nlohmann::json averages_json(const MetricAverages& a) {
  return {{"precision", a.precision}, {"recall", a.recall}, {"f1", a.f1}};
}

nlohmann::json per_class_json(const ClassificationReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t l = 0; l < r.classes.size(); ++l)
    rows.push_back({{"class", r.classes[l]},
                    {"precision", r.tally.precision(l)},
                    {"recall", r.tally.recall(l)},
                    {"f1", r.tally.f1(l)},
                    {"support", r.tally.support(l)},
                    {"predicted", r.tally.predicted(l)}});
  return rows;
}

nlohmann::json confusion_json(const ClassificationReport& r) {
  const std::size_t L = r.classes.size();
  const std::vector<double> norm = normalised_confusion(r);
  nlohmann::json counts = nlohmann::json::array(), normalised = nlohmann::json::array();
  for (std::size_t t = 0; t < L; ++t) {
    counts.push_back(
        std::vector<std::uint64_t>(r.confusion.begin() + t * L, r.confusion.begin() + (t + 1) * L));
    normalised.push_back(std::vector<double>(norm.begin() + t * L, norm.begin() + (t + 1) * L));
  }
  return {{"counts", counts}, {"normalised", normalised}};
}

nlohmann::json reliability_json(const ConfidenceBins& bins) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ConfidenceBin& b : bins.bins())
    rows.push_back({{"lower", b.lower},
                    {"upper", b.upper},
                    {"rows", b.rows},
                    {"mean_confidence", b.mean_confidence()},
                    {"accuracy", b.accuracy()}});
  return {{"bins", bins.bins().size()}, {"ece", bins.ece()}, {"rows", rows}};
}

// +∞ (the curves' first threshold) as null: JSON has no infinity.
nlohmann::json thresholds_json(const std::vector<double>& t) {
  nlohmann::json out = nlohmann::json::array();
  for (double v : t) out.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
  return out;
}

nlohmann::json binary_json(const ClassificationReport& r) {
  const BinaryCurves& b = *r.binary;
  return {{"positive_class", r.classes[b.positive]},
          {"prevalence", b.prevalence},
          {"roc_auc", b.roc.auc},
          {"average_precision", b.precision_recall.average_precision},
          {"roc",
           {{"false_positive_rate", b.roc.false_positive_rate},
            {"true_positive_rate", b.roc.true_positive_rate},
            {"threshold", thresholds_json(b.roc.threshold)}}},
          {"precision_recall",
           {{"precision", b.precision_recall.precision},
            {"recall", b.precision_recall.recall},
            {"threshold", thresholds_json(b.precision_recall.threshold)}}}};
}

}  // namespace

nlohmann::json to_json(const ClassificationReport& r) {
  nlohmann::json j = {{"title", r.title},
                      {"description", r.description},
                      {"facts", r.facts},
                      {"rows", r.tally.rows()},
                      {"excluded_rows", r.excluded_rows},
                      {"classes", r.classes},
                      {"accuracy", r.tally.accuracy()},
                      {"balanced_accuracy", r.tally.balanced_accuracy()},
                      {"log_loss", r.log_loss},
                      {"ece", r.reliability.ece()},
                      {"macro_avg", averages_json(macro_average(r.tally))},
                      {"weighted_avg", averages_json(weighted_average(r.tally))},
                      {"per_class", per_class_json(r)},
                      {"reliability", reliability_json(r.reliability)}};
  if (!r.confusion.empty()) j["confusion_matrix"] = confusion_json(r);
  if (r.binary) j["binary"] = binary_json(r);
  return j;
}

}  // namespace flynn::eval
