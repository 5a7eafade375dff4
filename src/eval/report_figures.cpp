// The report's figures, drawn with cairo into PNG images (report_canvas.hpp). Without
// cairo (FLYNN_HAVE_CAIRO 0) draw_report_figures says so instead.
#include "flynn/build_config.hpp"
#include "flynn/eval/report_files.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"

#if FLYNN_HAVE_CAIRO
#include "report_canvas.hpp"
#endif

namespace flynn::eval {

#if FLYNN_HAVE_CAIRO

namespace {

using namespace canvas;

// The colour of a share in [0, 1]: white to a dark blue.
Colour share_colour(double v) {
  const Colour dark{0.031, 0.271, 0.580};
  return {1.0 + (dark.r - 1.0) * v, 1.0 + (dark.g - 1.0) * v, 1.0 + (dark.b - 1.0) * v};
}

// Cell texts of the confusion matrix: count and row share while they fit, the count alone
// for more classes, nothing beyond.
void confusion_cell_text(const Image& im, const ClassificationReport& r,
                         const std::vector<double>& share, std::size_t t, std::size_t p, double cx,
                         double cy, double cell) {
  const std::size_t L = r.classes.size(), i = t * L + p;
  if (cell < 18) return;
  im.colour(share[i] > 0.55 ? Colour{1, 1, 1} : kInk);
  const double size = std::min(12.0, cell / 3.2);
  if (cell >= 44) {
    im.text(fmt::format("{}", r.confusion[i]), cx, cy - size * 0.55, size, {0.5, 0.5}, true);
    im.text(fmt::format("{:.1f}%", 100.0 * share[i]), cx, cy + size * 0.75, size * 0.85,
            {0.5, 0.5});
  } else {
    im.text(fmt::format("{}", r.confusion[i]), cx, cy, size, {0.5, 0.5});
  }
}

// The font size of the class names along the matrix (0: the cells leave no room for them).
double label_size(double cell) { return cell < 9 ? 0.0 : std::min(11.0, cell * 0.7); }

// The widest class name as drawn along the matrix.
double widest_label(const Image& im, const ClassificationReport& r, double size) {
  double w = 0;
  if (size > 0)
    for (const std::string& c : r.classes) w = std::max(w, im.text_width(shorten(c, 16), size));
  return w;
}

// Class names along both sides of the matrix (when the cells leave room for them).
void confusion_labels(const Image& im, const ClassificationReport& r, double left, double top,
                      double cell) {
  const std::size_t L = r.classes.size();
  const double size = label_size(cell);
  if (size == 0) return;
  im.colour(kInk);
  for (std::size_t l = 0; l < L; ++l) {
    const std::string name = shorten(r.classes[l], 16);
    const double c = static_cast<double>(l) * cell + cell / 2;
    im.text(name, left - 6, top + c, size, {1.0, 0.5});
    im.text(name, left + c, top + static_cast<double>(L) * cell + 6, size, {1.0, 0.5}, false, 45.0);
  }
}

ReportFigure confusion_figure(const ClassificationReport& r) {
  const std::size_t L = r.classes.size();
  const double cell = std::clamp(480.0 / static_cast<double>(L), 4.0, 90.0);
  const Image measure(1, 1);
  const double label = widest_label(measure, r, label_size(cell));
  const double side = cell * static_cast<double>(L), left = std::max(80.0, label + 48), top = 56;
  const double bottom = label * 0.75 + 50;  // the slanted column names, then the axis title
  Image im(static_cast<int>(std::max(520.0, left + side + 40)),
           static_cast<int>(top + side + bottom));
  const std::vector<double> share = normalised_confusion(r);
  for (std::size_t t = 0; t < L; ++t)
    for (std::size_t p = 0; p < L; ++p) {
      const double x = left + static_cast<double>(p) * cell,
                   y = top + static_cast<double>(t) * cell;
      im.colour(share_colour(share[t * L + p]));
      im.fill_rect(x, y, cell, cell);
      confusion_cell_text(im, r, share, t, p, x + cell / 2, y + cell / 2, cell);
    }
  im.colour(kGrey);
  cairo_set_line_width(im.cr(), 0.8);
  cairo_rectangle(im.cr(), left, top, side, side);
  cairo_stroke(im.cr());
  confusion_labels(im, r, left, top, cell);
  im.colour(kInk);
  im.text("Confusion matrix", 16, 14, 15, {0.0, 0.0}, true);
  im.text("rows: true class; columns: predicted class; colour: share of the row", 16, 34, 11,
          {0.0, 0.0});
  im.text("predicted class", left + side / 2, static_cast<double>(im.height()) - 16, 12,
          {0.5, 1.0});
  im.text("true class", left - label - 30, top + side / 2, 12, {0.5, 0.0}, false, 90.0);
  return {"confusion_matrix.png",
          "Confusion matrix: rows are the true classes, columns the predicted ones; each cell "
          "gives its rows "
          "and its share of the row.",
          im.png(), im.width(), im.height()};
}

// The bins' accuracy (bars) against their mean confidence (markers), on `f`.
void reliability_bars(const Image& im, const Frame& f, const ConfidenceBins& bins) {
  for (const ConfidenceBin& b : bins.bins()) {
    if (b.rows == 0) continue;
    const double x0 = f.x(b.lower) + 1, x1 = f.x(b.upper) - 1;
    im.colour(kBlue, 0.85);
    im.fill_rect(x0, f.y(b.accuracy()), x1 - x0, f.y(0) - f.y(b.accuracy()));
    im.colour(kOrange);
    im.line(x0, f.y(b.mean_confidence()), x1, f.y(b.mean_confidence()), 2.5);
  }
}

// The share of rows in each bin, under the diagram.
void confidence_histogram(const Image& im, const Frame& f, const ConfidenceBins& bins) {
  double top = 0;
  for (const ConfidenceBin& b : bins.bins()) top = std::max(top, static_cast<double>(b.rows));
  Frame h = f;
  h.y_max = top / static_cast<double>(std::max<std::uint64_t>(1, bins.rows()));
  h.y_max = h.y_max > 0 ? h.y_max * 1.1 : 1.0;
  im.colour(kGrey, 0.8);
  for (const ConfidenceBin& b : bins.bins()) {
    const double share =
        static_cast<double>(b.rows) / static_cast<double>(std::max<std::uint64_t>(1, bins.rows()));
    im.fill_rect(h.x(b.lower) + 1, h.y(share), h.x(b.upper) - h.x(b.lower) - 2,
                 h.y(0) - h.y(share));
  }
  draw_axes(im, h, unit_ticks(), {0.0, h.y_max / 1.1}, {1, 2},
            "confidence (probability of the top class)", "share of rows");
}

ReportFigure reliability_figure(const ClassificationReport& r) {
  Image im(560, 620);
  const Frame f{80, 60, 450, 340, 0, 1, 0, 1};
  draw_axes(im, f, unit_ticks(), unit_ticks(), {1, 1}, "", "accuracy of the top class");
  im.colour(kGrey);
  im.line(f.x(0), f.y(0), f.x(1), f.y(1), 1.2, true);
  reliability_bars(im, f, r.reliability);
  draw_legend(im, f,
              {{"accuracy of the bin's rows", kBlue, false, true},
               {"their mean confidence", kOrange},
               {"perfect calibration", kGrey, true}},
              false, false);
  confidence_histogram(im, Frame{80, 450, 450, 110, 0, 1, 0, 1}, r.reliability);
  im.colour(kInk);
  im.text(fmt::format("Reliability: ECE = {:.4f} ({} bins)", r.reliability.ece(),
                      r.reliability.bins().size()),
          16, 16, 15, {0.0, 0.0}, true);
  return {"reliability.png",
          "Reliability diagram: rows binned by the probability of their top class; for each bin, "
          "the share of "
          "rows whose top class is right (bars) against their mean probability (lines). Below: the "
          "share of rows "
          "in each bin.",
          im.png(), im.width(), im.height()};
}

// A curve on the unit square, as a polyline. `step`: point i's y holds from x[i − 1] to
// x[i] (a vertical move, then a horizontal one), so the area under the drawn
// precision-recall curve is the average precision.
void curve(const Image& im, const Frame& f, const std::vector<double>& xs,
           const std::vector<double>& ys, bool step) {
  std::vector<double> x, y;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (step && i > 0) {
      x.push_back(f.x(xs[i - 1]));
      y.push_back(f.y(ys[i]));
    }
    x.push_back(f.x(xs[i]));
    y.push_back(f.y(ys[i]));
  }
  im.colour(kBlue);
  im.polyline(x, y, 2.2);
}

ReportFigure roc_figure(const ClassificationReport& r) {
  const BinaryCurves& b = *r.binary;
  Image im(520, 500);
  const Frame f{80, 60, 410, 370, 0, 1, 0, 1};
  draw_axes(im, f, unit_ticks(), unit_ticks(), {1, 1}, "false-positive rate", "true-positive rate");
  im.colour(kGrey);
  im.line(f.x(0), f.y(0), f.x(1), f.y(1), 1.2, true);
  curve(im, f, b.roc.false_positive_rate, b.roc.true_positive_rate, false);
  draw_legend(im, f,
              {{fmt::format("ROC, AUC = {:.4f}", b.roc.auc), kBlue}, {"chance", kGrey, true}}, true,
              true);
  im.colour(kInk);
  im.text(fmt::format("ROC curve, positive class '{}'", shorten(r.classes[b.positive], 24)), 16, 16,
          15, {0.0, 0.0}, true);
  return {
      "roc.png",
      fmt::format(
          "ROC curve of the probability of class '{}': each point calls every row at or above a "
          "threshold positive.",
          r.classes[b.positive]),
      im.png(), im.width(), im.height()};
}

ReportFigure precision_recall_figure(const ClassificationReport& r) {
  const BinaryCurves& b = *r.binary;
  Image im(520, 500);
  const Frame f{80, 60, 410, 370, 0, 1, 0, 1.02};
  draw_axes(im, f, unit_ticks(), unit_ticks(), {1, 1}, "recall", "precision");
  im.colour(kGrey);
  im.line(f.x(0), f.y(b.prevalence), f.x(1), f.y(b.prevalence), 1.2, true);
  curve(im, f, b.precision_recall.recall, b.precision_recall.precision, true);
  draw_legend(im, f,
              {{fmt::format("AP = {:.4f}", b.precision_recall.average_precision), kBlue},
               {fmt::format("share of positives = {:.4f}", b.prevalence), kGrey, true}},
              false, true);
  im.colour(kInk);
  im.text(fmt::format("Precision-recall, positive class '{}'", shorten(r.classes[b.positive], 24)),
          16, 16, 15, {0.0, 0.0}, true);
  return {
      "precision_recall.png",
      fmt::format(
          "Precision-recall curve of the probability of class '{}'; AP is the average precision.",
          r.classes[b.positive]),
      im.png(), im.width(), im.height()};
}

}  // namespace

void require_report_figures() {}

std::vector<ReportFigure> draw_report_figures(const ClassificationReport& r) {
  std::vector<ReportFigure> figures;
  if (!r.confusion.empty()) figures.push_back(confusion_figure(r));
  figures.push_back(reliability_figure(r));
  if (r.binary) {
    figures.push_back(roc_figure(r));
    figures.push_back(precision_recall_figure(r));
  }
  return figures;
}

#else

void require_report_figures() {
  throw Error(
      "reports draw their figures with cairo, and this flynn was built without it: install "
      "Debian's "
      "libcairo2-dev (scripts/setup.sh) and rebuild");
}

std::vector<ReportFigure> draw_report_figures(const ClassificationReport&) {
  require_report_figures();
  return {};
}

#endif

}  // namespace flynn::eval
