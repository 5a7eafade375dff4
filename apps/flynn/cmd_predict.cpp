// flynn predict: classify the rows of a data file with a saved model.
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/detail/csv_cells.hpp"
#include "flynn/experiments/calibration.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"

namespace flynn::cli {

namespace {

struct PredictCmdOptions {
  std::string model, data, out, tie_break = "lowest";
  std::uint64_t tie_seed = 0;
  bool proba = false;
  CommonOptions common;
  DataOptions format;
};

// The first column: the data's row ids (named after its id column, or "id") when it has
// them, else the 1-based row number.
void write_predictions(std::ostream& out, const FlyNN& model, const Dataset& data,
                       const std::vector<std::uint32_t>& pred, const std::vector<double>& proba) {
  const LabelSet& labels = model.labels();
  const bool ids = !data.row_ids.empty();
  out << (ids ? io::csv_field(data.schema.id_name.empty() ? "id" : data.schema.id_name) : "row")
      << ",prediction";
  if (!proba.empty())
    for (const auto& name : labels.names()) out << "," << io::csv_field("p_" + name);
  out << "\n";
  for (std::size_t r = 0; r < pred.size(); ++r) {
    if (ids)
      out << io::csv_field(data.row_ids[r]);
    else
      out << r + 1;
    out << "," << io::csv_field(labels.name(pred[r]));
    if (!proba.empty())
      for (std::size_t l = 0; l < labels.size(); ++l)
        out << "," << fmt::format("{:.6g}", proba[r * labels.size() + l]);
    out << "\n";
  }
}

void run_predict(const PredictCmdOptions& o) {
  if (!o.out.empty()) io::ensure_output_is_not_an_input(o.out, {o.data, o.model}, "predictions");
  const FlyNN model = io::load_model(o.model, o.common.threads);
  const io::LoadOptions load = model_load_options(o.format.load_options(), model);
  const Dataset data = io::load_dataset(o.data, load);

  PredictOptions po;
  po.threads = o.common.threads;
  if (o.tie_break == "random") {
    po.tie_break = TieBreak::Random;
  } else if (o.tie_break != "lowest") {
    throw Error(fmt::format("--tie-break: '{}' is not one of lowest, random", o.tie_break));
  }
  po.tie_seed = o.tie_seed;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> pred;
  std::vector<double> proba;
  {
    ProgressBar bar("predicting", !o.common.quiet);
    po.progress = bar.callback();
    pred = model.predict(data, po);
    if (o.proba) {
      // Calibrated probabilities (experiments/calibration.hpp): the class frequencies weigh
      // softmax(−score/(ρ·t)), t the model's (`flynn tune` fits it). A model file's t = 1
      // means none was fitted (files from `train`, or older): then the default t, chosen on
      // the held-out study's selection half.
      po.progress = nullptr;
      const double t = model.temperature() == 1.0 ? experiments::kDefaultTemperature : model.temperature();
      proba = experiments::scores_to_probabilities(model.scores(data, po), model.labels().size(),
                                                   model.config().rho, t,
                                                   experiments::class_priors(model.counts().rows_per_class()));
    }
  }
  const double seconds = seconds_since(t0);

  nlohmann::json j = {{"command", "predict"}, {"model", o.model},  {"data", o.data},
                      {"rows", data.n_rows},  {"seconds", seconds}};
  if (data.has_labels) {
    std::size_t unknown = 0;
    const std::vector<std::uint32_t> truth = truth_ids(data, model.labels(), &unknown);
    const double acc = flynn::accuracy(truth, pred);
    j["accuracy"] = acc;
    // The count behind the fraction (exact: acc·n with n ≤ 2^53 rows).
    j["correct"] = static_cast<std::size_t>(std::llround(acc * static_cast<double>(data.n_rows)));
    if (unknown) j["rows_with_unknown_label"] = unknown;
  }
  if (!o.out.empty()) {
    io::write_file_atomic(o.out, [&](std::ostream& s) { write_predictions(s, model, data, pred, proba); });
    j["out"] = o.out;
  } else if (!o.common.json) {
    write_predictions(std::cout, model, data, pred, proba);
  } else {
    std::vector<std::string> names;
    for (auto p : pred) names.push_back(model.labels().name(p));
    j["predictions"] = names;
    if (!data.row_ids.empty()) j["ids"] = data.row_ids;
  }
  if (o.common.json) {
    print_json(j);
    return;
  }
  // With predictions on stdout, the summary goes to stderr so the CSV stays clean.
  std::ostream& summary = o.out.empty() ? std::cerr : std::cout;
  summary << fmt::format("predicted {} rows in {:.3f} s", data.n_rows, seconds);
  if (j.contains("accuracy"))
    summary << fmt::format(", accuracy {:.4f} ({}/{})", j["accuracy"].get<double>(),
                           j["correct"].get<std::size_t>(), data.n_rows);
  if (j.contains("rows_with_unknown_label"))
    summary << fmt::format(" ({} rows have labels the model does not know)",
                           j["rows_with_unknown_label"].get<std::size_t>());
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
  o->format.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_predict(*o); });
}

const RegisterCommand registered(20, add_predict_command);

}  // namespace

}  // namespace flynn::cli
