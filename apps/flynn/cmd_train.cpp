// flynn train: learn a model from a data file and save it.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"

namespace flynn::cli {

namespace {

struct TrainOptions {
  std::string data, test, model, labels;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
};

void run_train(const TrainOptions& o) {
  const auto t_load = std::chrono::steady_clock::now();
  io::LoadOptions load = o.format.load_options();
  io::ensure_output_is_not_an_input(o.model, {o.data, o.test}, "model");
  Dataset data = io::load_dataset(o.data, load);
  if (!data.has_labels)
    throw Error(fmt::format("{}: training data needs a label column", o.data));
  data.require_trainable();
  const LabelSet labels = training_labels(o.labels, data);
  const double load_seconds = seconds_since(t_load);

  const FlyConfig config =
      o.hyper.params().resolve(static_cast<std::uint32_t>(data.n_features), labels.size());
  FlyNN model(config, labels, o.common.threads);
  const auto t_train = std::chrono::steady_clock::now();
  {
    ProgressBar bar("training", !o.common.quiet);
    model.fit(data, bar.callback());
  }
  model.set_table_schema(data.schema);
  const double train_seconds = seconds_since(t_train);
  io::save_model(model, o.model);
  // A device such as /dev/null has no size to report.
  std::error_code size_error;
  const auto model_bytes = std::filesystem::file_size(o.model, size_error);

  nlohmann::json j = {{"command", "train"},
                      {"data", o.data},
                      {"rows", data.n_rows},
                      {"features", data.n_features},
                      {"classes", labels.names()},
                      {"config", config_json(config)},
                      {"load_seconds", load_seconds},
                      {"train_seconds", train_seconds},
                      {"model", o.model},
                      {"model_bytes", model_bytes}};
  if (!data.schema.empty()) {
    j["table"] = {{"columns", data.schema.columns.size()}, {"named", data.schema.named}};
    std::size_t categorical = 0;
    for (const auto& c : data.schema.columns) categorical += c.categorical();
    j["table"]["categorical_columns"] = categorical;
    if (!data.schema.id_name.empty()) j["table"]["id_column"] = data.schema.id_name;
  }
  if (!o.test.empty()) {
    const io::LoadOptions tl = model_load_options(load, model);
    const Dataset test = io::load_dataset(o.test, tl);
    const auto t_pred = std::chrono::steady_clock::now();
    PredictOptions po;
    po.threads = o.common.threads;
    ProgressBar bar("predicting", !o.common.quiet);
    po.progress = bar.callback();
    const auto predicted = model.predict(test, po);
    bar.finish();
    j["test"] = {{"data", o.test}, {"rows", test.n_rows}, {"predict_seconds", seconds_since(t_pred)}};
    if (test.has_labels) j["test"]["accuracy"] = flynn::accuracy(truth_ids(test, labels), predicted);
  }
  if (o.common.json) {
    print_json(j);
    return;
  }
  std::cout << fmt::format("trained on {} rows × {} features, {} classes in {:.3f} s\n",
                           data.n_rows, data.n_features, labels.size(), train_seconds)
            << fmt::format("config: {}\n", config.describe())
            << fmt::format("model: {} ({})\n", o.model, human_bytes(model_bytes));
  if (j.contains("test")) {
    const auto& t = j["test"];
    std::cout << fmt::format("test: {} rows predicted in {:.3f} s", t["rows"].get<std::size_t>(),
                             t["predict_seconds"].get<double>());
    if (t.contains("accuracy")) std::cout << fmt::format(", accuracy {:.4f}", t["accuracy"].get<double>());
    std::cout << "\n";
  }
}

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a FlyNN model on a labelled data file");
  cmd->add_option("--data", o->data, "Training data (CSV[.gz], ARFF, IDX[.gz], LIBSVM)")->required();
  cmd->add_option("--test", o->test, "Optional test data: accuracy and prediction time are reported");
  cmd->add_option("--model", o->model, "Output model file (written atomically)")->required();
  cmd->add_option("--labels", o->labels,
                  "Label list L1,L2,... fixing class ids (default: sorted labels of the data)");
  o->hyper.add_to(cmd);
  o->format.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_train(*o); });
}

const RegisterCommand registered(10, add_train_command);

}  // namespace

}  // namespace flynn::cli
