#include "flynn/eval/train_and_save.hpp"

#include <chrono>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/auto_config.hpp"
#include "flynn/eval/auto_report.hpp"
#include "flynn/eval/evaluation_report.hpp"
#include "flynn/eval/model_summary.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/row_stream.hpp"

namespace flynn::eval {

const OptionTable<TrainFileRequest>& train_file_fields() {
  using R = TrainFileRequest;
  static const OptionTable<R> fields = {
      {"--data", "Training data (CSV[.gz], ARFF, IDX[.gz], LIBSVM)", &R::data, {}, true},
      {"--test", "Optional test data: accuracy, log-loss, ECE and prediction time are reported", &R::test},
      {"--model", "Output model file (written atomically)", &R::model, {}, true},
      {"--labels", "Label list L1,L2,... fixing class ids (default: sorted labels of the data)", &R::labels},
      {"--auto",
       "Choose the variant, m and γ first: a few candidates around the default, by 3-fold CV on the "
       "training rows (the whole file in memory); the default stays unless another is better by more "
       "than half a standard error",
       &R::auto_config},
      // Hidden: memory tuning, and tests that check chunked training equals whole-file training.
      {"--chunk-rows", "Rows read and counted at a time", &R::chunk_rows, {}, false, 1, double(1u << 30), true},
  };
  return fields;
}

Report train_and_save(const TrainFileRequest& o, io::FileTrainingOptions training) {
  io::ensure_output_is_not_an_input(o.model, {o.data, o.test}, "model");
  if (!o.labels.empty()) training.labels = LabelSet::parse_list(o.labels);
  training.chunk_rows = o.chunk_rows;
  std::optional<AutoChoice> choice;
  if (o.auto_config) {
    if (training.public_stats)
      throw Error("--auto cross-validates with the rows' own statistics: it cannot be combined with "
                  "--feature-stats");
    Dataset data = io::load_dataset(o.data, training.load);
    if (training.labels) data.relabel(*training.labels);
    ProgressFn progress = training.progress ? training.progress("choosing") : ProgressFn{};
    AutoOptions options;
    options.threads = training.threads;
    options.metric = auto_metric(training.hyper);
    choice = choose_auto_config(data, training.hyper, options, progress);
    if (training.progress) training.progress("");
    training.hyper = hyper_params_of(choice->config);
  }
  const io::FileTrainingResult t = io::train_from_file(o.data, training);
  const FlyNN& model = t.model;

  const auto t_save = std::chrono::steady_clock::now();
  io::save_model(model, o.model);
  const double save_seconds = detail::seconds_since(t_save);
  // A device such as /dev/null has no size to report.
  std::error_code size_error;
  const auto model_bytes = std::filesystem::file_size(o.model, size_error);

  Report out;
  nlohmann::json& j = out.json;
  j = {{"command", "train"},
       {"data", o.data},
       {"rows", t.rows},
       {"features", t.n_features},
       {"classes", model.labels().names()},
       {"config", config_json(model.config())},
       {"load_seconds", t.load_seconds},
       {"train_seconds", t.train_seconds},
       {"row_elements", t.row_elements},
       {"row_path", t.row_path},
       {"model", o.model},
       {"model_bytes", model_bytes},
       {"save_seconds", save_seconds}};
  if (choice) j["auto"] = auto_choice_json(*choice);
  const TableSchema& schema = model.table_schema();
  if (!schema.empty()) {
    j["table"] = {{"columns", schema.columns.size()}, {"named", schema.named}};
    std::size_t categorical = 0;
    for (const auto& c : schema.columns) categorical += c.categorical();
    j["table"]["categorical_columns"] = categorical;
    if (!schema.id_name.empty()) j["table"]["id_column"] = schema.id_name;
  }
  out.text = fmt::format("trained on {} rows × {} features, {} classes in {:.3f} s (read in {:.3f} s; {} rows, {} kernel)\n",
                         t.rows, t.n_features, model.labels().size(), t.train_seconds, t.load_seconds,
                         t.row_elements, t.row_path);
  if (choice) out.text += auto_choice_text(*choice);
  out.text += fmt::format("config: {}\n", model.config().describe());
  const Report paper_half = paper_half_report(model.config(), model.feature_stats());
  if (!paper_half.json.is_null()) j["paper_half"] = paper_half.json;
  out.text += paper_half.text;
  out.text += fmt::format("model: {} ({})\n", o.model, human_bytes(model_bytes));
  if (!o.test.empty()) {
    // Read in chunks as `flynn predict` reads it, and judged as `flynn tune --test` judges.
    io::ChunkLimits limits;
    limits.max_rows = o.chunk_rows;
    io::RowStream rows(o.test, io::model_load_options(training.load, model), limits);
    const auto t_pred = std::chrono::steady_clock::now();
    ProgressFn progress = training.progress ? training.progress("predicting") : ProgressFn{};
    const TestFileEvaluation e = evaluate_test_file(rows, model, training.threads, progress);
    if (training.progress) training.progress("");
    nlohmann::json& tj = j["test"] = to_json(e);
    tj["data"] = o.test;
    tj["predict_seconds"] = detail::seconds_since(t_pred);
    out.text += fmt::format("test: {} rows predicted in {:.3f} s", e.prediction.rows, tj["predict_seconds"].get<double>());
    if (tj.contains("accuracy")) out.text += fmt::format(", accuracy {:.4f}", tj["accuracy"].get<double>());
    if (tj.contains("log_loss"))
      out.text += fmt::format(", log-loss {:.4f}, ECE {:.4f}", tj["log_loss"].get<double>(), tj["ece"].get<double>());
    out.text += "\n";
  }
  return out;
}

}  // namespace flynn::eval
