#include "flynn/eval/predict_and_write.hpp"

#include <chrono>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/classification_report.hpp"
#include "flynn/eval/report_files.hpp"
#include "flynn/io/predict_file.hpp"
#include "flynn/io/row_stream.hpp"

namespace flynn::eval {

const OptionTable<PredictFileRequest>& predict_file_fields() {
  using R = PredictFileRequest;
  static const OptionTable<R> fields = {
      {"--model", "Model file from 'flynn train'", &R::model, {}, true},
      {"--data", "Rows to classify (with or without the label column)", &R::data, {}, true},
      {"--out", "Write predictions CSV here (default: stdout)", &R::out},
      {"--proba",
       "Add the class probabilities to the CSV: softmax(-score/(rho*t)) mixed with the class frequencies, t and the "
       "mix fitted at training on the rows' leave-one-out scores (docs/guide/probabilities.md); the prediction is the class "
       "of highest probability",
       &R::proba},
      {"--tie-break",
       "Equal probabilities: 'lowest' (first class in the label list, default) or 'random' (seeded, as the reference)",
       &R::tie_break},
      {"--tie-seed", "Seed for --tie-break random", &R::tie_seed},
      {"--report",
       "Write a classification report of the predictions into this folder (needs the label column): confusion "
       "matrix, per-class precision/recall/F1, reliability diagram, ROC and precision-recall curves for two "
       "classes (report.html, report.json, PNG figures; docs/guide/reports.md)",
       &R::report},
      // Hidden: memory tuning, and tests that check chunked results equal whole-file ones.
      {"--chunk-rows", "Rows read and predicted at a time", &R::chunk_rows, {}, false, 1, double(1u << 30), true},
  };
  return fields;
}

namespace {

// The file's tally and, when kept, the predicted names (and the rows' ids).
struct PredictTally : io::FilePrediction {
  std::vector<std::string> names, ids;
};

// The rows of a chunk whose label the model knows, into the report; the others counted as
// left out.
void add_to_report(ClassificationReportBuilder& report, const io::PredictedChunk& c, std::size_t L) {
  std::vector<std::uint32_t> truth, predicted;
  std::vector<double> proba;
  for (std::size_t r = 0; r < c.truth.size(); ++r) {
    if (c.truth[r] == io::kUnknownLabel) continue;
    truth.push_back(c.truth[r]);
    predicted.push_back(c.classes[r]);
    proba.insert(proba.end(), c.proba.begin() + static_cast<std::ptrdiff_t>(r * L),
                 c.proba.begin() + static_cast<std::ptrdiff_t>((r + 1) * L));
  }
  report.exclude(c.truth.size() - truth.size());
  report.add(truth, predicted, proba);
}

// Predicts the file, writing each chunk's lines to `out` (none when null) before the next
// is read, and adding its rows to `report` (when given; the options then ask for the
// probabilities, which the CSV holds only with `proba`).
PredictTally predict_stream(io::RowStream& rows, const FlyNN& model, const io::FilePredictionOptions& fo,
                            bool proba, std::ostream* out, const std::string& out_name,
                            ClassificationReportBuilder* report) {
  PredictTally tally;
  bool header_written = false;
  static const std::vector<double> no_proba;
  static_cast<io::FilePrediction&>(tally) = io::predict_file(rows, model, fo, [&](const io::PredictedChunk& c) {
    if (report) add_to_report(*report, c, model.labels().size());
    if (out && !header_written) *out << io::predictions_csv_header(model, c.rows, proba);
    header_written = true;
    if (out) {
      io::write_predictions_csv(*out, model, proba ? c : io::PredictedChunk{c.rows, c.first_row, c.classes, no_proba, c.truth});
      // A failed write (full disk, closed pipe) ends the work now rather than at the end.
      if (!*out) throw Error(fmt::format("writing to {} failed (predictions)", out_name));
    } else {
      for (auto p : c.classes) tally.names.push_back(model.labels().name(p));
      tally.ids.insert(tally.ids.end(), c.rows.row_ids.begin(), c.rows.row_ids.end());
    }
  });
  if (out && !header_written) *out << io::predictions_csv_header(model, Dataset{}, proba);
  return tally;
}

// The report of the predictions, with the model and the data it judged.
ClassificationReport predict_report(ClassificationReportBuilder&& report, const PredictFileRequest& o,
                                    const FlyNN& model) {
  ClassificationReport r = std::move(report).finish(
      fmt::format("flynn predict: {}", o.data),
      fmt::format("The model's answers for the rows of {} (the class predict returns, and the probabilities "
                  "predict_proba returns at the model's temperature {:.4g}), judged against their labels.",
                  o.data, model.temperature()));
  r.facts = {{"model", o.model}, {"data", o.data}, {"configuration", model.config().describe()}};
  if (o.tie_break != "lowest") r.facts["tie break"] = o.tie_break;
  return r;
}

}  // namespace

Report predict_and_write(const PredictFileRequest& o, const PredictFileRun& how) {
  if (!o.out.empty()) io::ensure_output_is_not_an_input(o.out, {o.data, o.model}, "predictions");
  io::FilePredictionOptions fo;
  fo.predict.threads = how.threads;
  if (o.tie_break == "random") {
    fo.predict.tie_break = TieBreak::Random;
  } else if (o.tie_break != "lowest") {
    throw Error(fmt::format("--tie-break: '{}' is not one of lowest, random", o.tie_break));
  }
  fo.predict.tie_seed = o.tie_seed;
  // The model's calibrated probabilities (flynn/calibration.hpp), of which the prediction
  // is the first largest.
  fo.proba = o.proba;
  fo.progress = how.progress;
  const FlyNN model = io::load_model(o.model, how.threads, how.max_input_bytes, how.model_memory);
  io::ChunkLimits limits;
  limits.max_rows = o.chunk_rows;
  // Opening reads the header, so a file that cannot be read fails before any output.
  io::RowStream rows(o.data, io::model_load_options(how.load, model), limits);
  std::optional<ClassificationReportBuilder> report;
  if (!o.report.empty()) {
    if (!rows.has_labels())
      throw Error(fmt::format("--report needs the rows' classes, and {} has no label column (see --label-col)", o.data));
    check_report_folder(o.report);
    report.emplace(model.labels().names());
    fo.proba = true;
  }
  ClassificationReportBuilder* to_report = report ? &*report : nullptr;

  const auto t0 = std::chrono::steady_clock::now();
  PredictTally tally;
  if (!o.out.empty()) {
    io::write_file_atomic(o.out, [&](std::ostream& s) { tally = predict_stream(rows, model, fo, o.proba, &s, o.out, to_report); });
  } else {
    tally = predict_stream(rows, model, fo, o.proba, how.csv, "standard output", to_report);
  }
  const double seconds = detail::seconds_since(t0);

  Report r;
  r.json = {{"command", "predict"}, {"model", o.model}, {"data", o.data}, {"rows", tally.rows}, {"seconds", seconds}};
  r.text = fmt::format("predicted {} rows in {:.3f} s", tally.rows, seconds);
  if (tally.labelled) {
    r.json["accuracy"] = tally.accuracy();
    r.json["correct"] = tally.correct;
    if (tally.unknown) r.json["rows_with_unknown_label"] = tally.unknown;
    r.text += fmt::format(", accuracy {:.4f} ({}/{})", tally.accuracy(), tally.correct, tally.rows);
  }
  if (tally.unknown) r.text += fmt::format(" ({} rows have labels the model does not know)", tally.unknown);
  r.text += "\n";
  if (!o.out.empty()) {
    r.json["out"] = o.out;
  } else if (!how.csv) {
    r.json["predictions"] = tally.names;
    if (!tally.ids.empty()) r.json["ids"] = tally.ids;
  }
  if (report) attach_report(r, predict_report(std::move(*report), o, model), o.report);
  return r;
}

}  // namespace flynn::eval
