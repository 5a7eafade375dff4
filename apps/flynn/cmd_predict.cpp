// flynn predict: classify the rows of a data file with a saved model.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/predict_file.hpp"
#include "flynn/io/row_stream.hpp"

namespace flynn::cli {

namespace {

struct PredictCmdOptions {
  std::string model, data, out, tie_break = "lowest";
  std::uint64_t tie_seed = 0;
  std::size_t chunk_rows = io::ChunkLimits{}.max_rows;
  bool proba = false;
  CommonOptions common;
  DataOptions format;
  ModelMemoryOption model_memory;  ///< --max-model-memory
};

// What `flynn predict` shows: the file's tally and, with --json and no --out, the
// predicted names (and the rows' ids, when the data has them).
struct PredictTally : io::FilePrediction {
  std::vector<std::string> names, ids;
};

// Predicts the file (io::predict_file), writing each chunk's lines to `out` (none when
// null) before the next is read.
PredictTally predict_stream(io::RowStream& rows, const FlyNN& model, const PredictCmdOptions& o,
                            std::ostream* out, bool keep_names) {
  io::FilePredictionOptions fo;
  fo.predict.threads = o.common.threads;
  if (o.tie_break == "random") {
    fo.predict.tie_break = TieBreak::Random;
  } else if (o.tie_break != "lowest") {
    throw Error(fmt::format("--tie-break: '{}' is not one of lowest, random", o.tie_break));
  }
  fo.predict.tie_seed = o.tie_seed;
  // Calibrated probabilities (flynn/scoring.hpp) at the model's temperature (`flynn tune`
  // fits one; otherwise the default).
  fo.proba = o.proba;
  ProgressBar bar("predicting", !o.common.quiet);
  fo.progress = bar.callback();
  PredictTally tally;
  bool header_written = false;
  static_cast<io::FilePrediction&>(tally) =
      io::predict_file(rows, model, fo, [&](const io::PredictedChunk& c) {
        if (out && !header_written) *out << io::predictions_csv_header(model, c.rows, o.proba);
        header_written = true;
        if (out) io::write_predictions_csv(*out, model, c);
        if (keep_names) {
          for (auto p : c.classes) tally.names.push_back(model.labels().name(p));
          tally.ids.insert(tally.ids.end(), c.rows.row_ids.begin(), c.rows.row_ids.end());
        }
        // A failed write (full disk, closed pipe) ends the work now rather than at the end.
        if (out && !*out) throw Error("writing to standard output failed (predictions)");
      });
  if (out && !header_written) *out << io::predictions_csv_header(model, Dataset{}, o.proba);
  return tally;
}

void run_predict(const PredictCmdOptions& o) {
  if (!o.out.empty()) io::ensure_output_is_not_an_input(o.out, {o.data, o.model}, "predictions");
  const FlyNN model = io::load_model(o.model, o.common.threads, o.format.max_input_bytes(),
                                     o.model_memory.limit(ModelUse::Predict));
  const io::LoadOptions load = io::model_load_options(o.format.load_options(), model);
  io::ChunkLimits limits;
  limits.max_rows = o.chunk_rows;
  // Opening reads the header, so a file that cannot be read fails before any output.
  io::RowStream rows(o.data, load, limits);

  const auto t0 = std::chrono::steady_clock::now();
  PredictTally tally;
  if (!o.out.empty()) {
    io::write_file_atomic(o.out, [&](std::ostream& s) { tally = predict_stream(rows, model, o, &s, false); });
  } else if (!o.common.json) {
    tally = predict_stream(rows, model, o, &std::cout, false);
  } else {
    tally = predict_stream(rows, model, o, nullptr, true);
  }
  const double seconds = seconds_since(t0);

  nlohmann::json j = {{"command", "predict"}, {"model", o.model},  {"data", o.data},
                      {"rows", tally.rows},   {"seconds", seconds}};
  if (tally.labelled) {
    j["accuracy"] = tally.accuracy();
    j["correct"] = tally.correct;
    if (tally.unknown) j["rows_with_unknown_label"] = tally.unknown;
  }
  if (!o.out.empty()) {
    j["out"] = o.out;
  } else if (o.common.json) {
    j["predictions"] = tally.names;
    if (!tally.ids.empty()) j["ids"] = tally.ids;
  }
  if (o.common.json) {
    print_json(j);
    return;
  }
  // With predictions on stdout, the summary goes to stderr so the CSV stays clean.
  std::ostream& summary = o.out.empty() ? std::cerr : std::cout;
  summary << fmt::format("predicted {} rows in {:.3f} s", tally.rows, seconds);
  if (j.contains("accuracy"))
    summary << fmt::format(", accuracy {:.4f} ({}/{})", j["accuracy"].get<double>(),
                           tally.correct, tally.rows);
  if (tally.unknown)
    summary << fmt::format(" ({} rows have labels the model does not know)", tally.unknown);
  summary << "\n";
}

void add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict", "Classify rows with a saved model (the label column is optional)");
  cmd->add_option("--model", o->model, "Model file from 'flynn train'")->required();
  cmd->add_option("--data", o->data, "Rows to classify (with or without the label column)")->required();
  cmd->add_option("--out", o->out, "Write predictions CSV here (default: stdout)");
  cmd->add_flag("--proba", o->proba, "Add calibrated class probabilities (prior-weighted softmax(-score/(rho*t)), see docs/evaluation.md) to the CSV");
  cmd->add_option("--tie-break", o->tie_break,
                  "Equal scores: 'lowest' (first class in the label list, default) or 'random' "
                  "(seeded, as the reference)");
  cmd->add_option("--tie-seed", o->tie_seed, "Seed for --tie-break random");
  // Hidden: rows per chunk of the streamed input (memory tuning, and tests that check
  // chunked results equal whole-file ones).
  cmd->add_option("--chunk-rows", o->chunk_rows, "Rows read and predicted at a time")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->group("");
  o->format.add_to(cmd);
  o->model_memory.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_predict(*o); });
}

const RegisterCommand registered(20, add_predict_command);

}  // namespace

}  // namespace flynn::cli
