#include "flynn/eval/predict_and_write.hpp"

#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
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
       "mix fitted at training on the rows' leave-one-out scores (docs/probabilities.md); the prediction is the class "
       "of highest probability",
       &R::proba},
      {"--tie-break",
       "Equal probabilities: 'lowest' (first class in the label list, default) or 'random' (seeded, as the reference)",
       &R::tie_break},
      {"--tie-seed", "Seed for --tie-break random", &R::tie_seed},
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

// Predicts the file, writing each chunk's lines to `out` (none when null) before the next
// is read.
PredictTally predict_stream(io::RowStream& rows, const FlyNN& model, const io::FilePredictionOptions& fo,
                            bool proba, std::ostream* out, const std::string& out_name) {
  PredictTally tally;
  bool header_written = false;
  static_cast<io::FilePrediction&>(tally) = io::predict_file(rows, model, fo, [&](const io::PredictedChunk& c) {
    if (out && !header_written) *out << io::predictions_csv_header(model, c.rows, proba);
    header_written = true;
    if (out) {
      io::write_predictions_csv(*out, model, c);
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

  const auto t0 = std::chrono::steady_clock::now();
  PredictTally tally;
  if (!o.out.empty()) {
    io::write_file_atomic(o.out, [&](std::ostream& s) { tally = predict_stream(rows, model, fo, o.proba, &s, o.out); });
  } else {
    tally = predict_stream(rows, model, fo, o.proba, how.csv, "standard output");
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
  return r;
}

}  // namespace flynn::eval
