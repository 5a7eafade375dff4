// flynn train: learn a model from a data file and save it.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/row_stream.hpp"

namespace flynn::cli {

namespace {

struct TrainOptions {
  std::string data, test, model, labels;
  std::size_t chunk_rows = io::ChunkLimits{}.max_rows;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  FeatureStatsOption feature_stats;
};

// A trained model and what the summary reports about its training data.
struct Trained {
  FlyNN model;
  std::uint64_t rows = 0;
  std::size_t n_features = 0;
  double load_seconds = 0, train_seconds = 0;
};

// The untrained model for data of `n_features` features and these classes, holding
// --feature-stats' public statistics when given (then the rows' own are never computed).
FlyNN make_model(const TrainOptions& o, std::size_t n_features, const LabelSet& labels,
                 const std::optional<FeatureStats>& public_stats) {
  const FlyConfig config =
      o.hyper.params().resolve(static_cast<std::uint32_t>(n_features), labels.size());
  FlyNN model(config, labels, o.common.threads);
  if (public_stats) {
    try {
      io::check_feature_stats_fit(*public_stats, config);
    } catch (const Error& e) {
      throw Error(fmt::format("--feature-stats {}: {}", o.feature_stats.path, e.what()));
    }
    model.set_feature_stats(*public_stats);
  }
  return model;
}

// Data that can be read only once (a pipe, standard input): loaded whole, then fitted.
Trained train_in_memory(const TrainOptions& o, const io::LoadOptions& load,
                        const std::optional<FeatureStats>& public_stats) {
  const auto t_load = std::chrono::steady_clock::now();
  Dataset data = io::load_dataset(o.data, load);
  if (!data.has_labels)
    throw Error(fmt::format("{}: training data needs a label column", o.data));
  data.require_trainable();
  const LabelSet labels = training_labels(o.labels, data);
  Trained t{make_model(o, data.n_features, labels, public_stats), data.n_rows, data.n_features,
            seconds_since(t_load), 0};
  const auto t_train = std::chrono::steady_clock::now();
  {
    ProgressBar bar("training", !o.common.quiet);
    // partial_fit on the new model is fit(), except that it keeps public statistics.
    t.model.partial_fit(data, bar.callback());
  }
  t.model.set_table_schema(data.schema);
  t.train_seconds = seconds_since(t_train);
  return t;
}

// What the first pass over a training file learns, all of it needed before counting: the
// row count, the width, the classes and the exact feature sums (FeatureSums add up the
// same in any order, so these equal the sums of the whole file).
struct TrainingSurvey {
  std::uint64_t rows = 0;
  std::size_t n_features = 0;
  bool fixed_width = true;  // false: LIBSVM chunks are as wide as their own largest index
  std::set<std::string> class_names;
  std::optional<FeatureSums> sums;  // only when the width is known from the start
                                    // and no value is missing
  // The table schema of the chunks (column names, id column; empty for positional data).
  TableSchema schema;
  // --missing mean: the sums of the non-missing values, whose means fill the missing ones.
  std::optional<ImputationSums> imputation;
  // Whether chunks hold missing values (NaN) to fill with schema.fill before use.
  bool fill_chunks = false;
};

TrainingSurvey survey(const TrainOptions& o, const io::LoadOptions& load,
                      const io::ChunkLimits& limits, const std::optional<LabelSet>& fixed_labels,
                      bool want_sums) {
  io::RowStream rows(o.data, load, limits);
  TrainingSurvey s;
  s.n_features = rows.n_features();
  s.fixed_width = s.n_features != 0;
  if (want_sums && s.fixed_width) s.sums.emplace(static_cast<std::uint32_t>(s.n_features));
  ProgressBar bar("reading", !o.common.quiet);
  Dataset chunk;
  bool first = true;
  while (rows.next(chunk)) {
    if (first) {
      // Every chunk of a file carries the same schema (decided with its header).
      s.schema = chunk.schema;
      if (load.missing == MissingPolicy::Mean && load.impute && !s.schema.empty())
        s.imputation.emplace(static_cast<std::uint32_t>(chunk.n_features));
      first = false;
    }
    if (s.imputation)
      for (std::size_t r = 0; r < chunk.n_rows; ++r) s.imputation->add_row(chunk.row(r));
    // --labels must name every class: refused here, naming the first row that is not.
    if (fixed_labels && chunk.has_labels) chunk.class_ids_in(*fixed_labels);
    s.class_names.insert(chunk.classes.names().begin(), chunk.classes.names().end());
    if (s.sums)
      for (std::size_t r = 0; r < chunk.n_rows; ++r) s.sums->add_row(chunk.row(r));
    s.n_features = std::max(s.n_features, chunk.n_features);
    s.rows += chunk.n_rows;
    if (bar.callback() && rows.file_size()) bar.callback()(rows.bytes_read(), rows.file_size());
  }
  if (!rows.has_labels())
    throw Error(fmt::format("{}: training data needs a label column", o.data));
  if (s.class_names.size() < 2) {
    // Dataset::require_trainable's check and message, on a stand-in of the file's labels
    // (built only on this error path).
    Dataset all_one_class;
    all_one_class.source = o.data;
    all_one_class.has_labels = true;
    all_one_class.n_rows = static_cast<std::size_t>(s.rows);
    all_one_class.classes = LabelSet(std::vector<std::string>(s.class_names.begin(), s.class_names.end()));
    all_one_class.labels.assign(all_one_class.n_rows, 0);
    all_one_class.require_trainable();
  }
  if (s.imputation) {
    // What parse_csv / parse_arff's complete_table gives the whole file: the means of the
    // non-missing values as fill values (or no schema when there is nothing to keep).
    s.schema = io::completed_schema(std::move(s.schema), *s.imputation);
    if (s.imputation->missing_cells() > 0) {
      // The sums took the missing values as NaN: sum the filled rows again.
      s.fill_chunks = true;
      s.sums.reset();
    }
  }
  return s;
}

// A regular file, read twice in bounded chunks: a first pass for the classes, the width and
// the feature statistics, a second that counts chunk by chunk (counts are sums). The model
// equals fit() on the whole file: the same statistics from the same exact sums, the same
// integer counts.
Trained train_streaming(const TrainOptions& o, const io::LoadOptions& load,
                        const std::optional<FeatureStats>& public_stats) {
  io::ChunkLimits limits;
  limits.max_rows = o.chunk_rows;
  std::optional<LabelSet> fixed_labels;
  if (!o.labels.empty()) fixed_labels = LabelSet::parse_list(o.labels);

  const auto t_load = std::chrono::steady_clock::now();
  TrainingSurvey s;
  try {
    // Public statistics make the rows' own sums unnecessary.
    s = survey(o, load, limits, fixed_labels, /*want_sums=*/!public_stats);
  } catch (const io::TextInNumericColumn&) {
    // A text column to one-hot encode: its categories must be known before any row is
    // encoded, which whole-file loading learns in a pass of its own. Such tables are
    // trained in memory.
    return train_in_memory(o, load, public_stats);
  }
  const LabelSet labels =
      fixed_labels ? *fixed_labels
                   : LabelSet::sorted(std::vector<std::string>(s.class_names.begin(), s.class_names.end()));
  Trained t{make_model(o, s.n_features, labels, public_stats), s.rows, s.n_features, seconds_since(t_load), 0};

  // LIBSVM without a fixed width: read again at the file's width, which makes every chunk
  // as wide as load_dataset's rows.
  io::LoadOptions counting = load;
  if (!s.fixed_width) counting.expected_features = s.n_features;
  const auto t_train = std::chrono::steady_clock::now();
  if (t.model.config().variant.standardize && !public_stats) {
    if (!s.sums) {
      io::RowStream rows(o.data, counting, limits);
      s.sums.emplace(static_cast<std::uint32_t>(s.n_features));
      Dataset chunk;
      while (rows.next(chunk)) {
        if (s.fill_chunks) fill_missing(chunk, s.schema.fill);
        for (std::size_t r = 0; r < chunk.n_rows; ++r) s.sums->add_row(chunk.row(r));
      }
    }
    t.model.set_feature_stats(s.sums->stats());
  }
  {
    io::RowStream rows(o.data, counting, limits);
    ProgressBar bar("training", !o.common.quiet);
    Dataset chunk;
    while (rows.next(chunk)) {
      if (s.fill_chunks) fill_missing(chunk, s.schema.fill);
      t.model.partial_fit(chunk);
      if (bar.callback() && rows.file_size()) bar.callback()(rows.bytes_read(), rows.file_size());
    }
  }
  t.model.set_table_schema(std::move(s.schema));
  t.train_seconds = seconds_since(t_train);
  return t;
}

// Accuracy on --test, read in chunks like `flynn predict`.
nlohmann::json test_report(const TrainOptions& o, const FlyNN& model, const io::LoadOptions& load) {
  const io::LoadOptions tl = model_load_options(load, model);
  io::ChunkLimits limits;
  limits.max_rows = o.chunk_rows;
  io::RowStream rows(o.test, tl, limits);
  const auto t_pred = std::chrono::steady_clock::now();
  PredictOptions po;
  po.threads = o.common.threads;
  ProgressBar bar("predicting", !o.common.quiet);
  std::uint64_t n = 0, correct = 0;
  Dataset chunk;
  while (rows.next(chunk)) {
    const auto predicted = model.predict(chunk, po);
    if (chunk.has_labels) {
      const auto truth = truth_ids(chunk, model.labels());
      for (std::size_t r = 0; r < predicted.size(); ++r) correct += truth[r] == predicted[r];
    }
    n += chunk.n_rows;
    if (bar.callback() && rows.file_size()) bar.callback()(rows.bytes_read(), rows.file_size());
  }
  bar.finish();
  nlohmann::json j = {{"data", o.test}, {"rows", n}, {"predict_seconds", seconds_since(t_pred)}};
  if (rows.has_labels()) j["accuracy"] = static_cast<double>(correct) / static_cast<double>(n);
  return j;
}

void run_train(const TrainOptions& o) {
  const io::LoadOptions load = o.format.load_options();
  io::ensure_output_is_not_an_input(o.model, {o.data, o.test}, "model");
  // Only a regular file can be read twice; anything else (a pipe, standard input) is
  // loaded into memory once.
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(o.data, ec);
  // Read before the data, so that a bad statistics file stops the command at once.
  const std::optional<FeatureStats> public_stats = o.feature_stats.load(o.format.max_input_bytes());
  const Trained t =
      regular ? train_streaming(o, load, public_stats) : train_in_memory(o, load, public_stats);
  const FlyNN& model = t.model;
  const FlyConfig& config = model.config();
  const LabelSet& labels = model.labels();

  const auto t_save = std::chrono::steady_clock::now();
  io::save_model(model, o.model);
  const double save_seconds = seconds_since(t_save);
  // A device such as /dev/null has no size to report.
  std::error_code size_error;
  const auto model_bytes = std::filesystem::file_size(o.model, size_error);

  nlohmann::json j = {{"command", "train"},
                      {"data", o.data},
                      {"rows", t.rows},
                      {"features", t.n_features},
                      {"classes", labels.names()},
                      {"config", config_json(config)},
                      {"load_seconds", t.load_seconds},
                      {"train_seconds", t.train_seconds},
                      {"model", o.model},
                      {"model_bytes", model_bytes},
                      {"save_seconds", save_seconds}};
  const TableSchema& schema = model.table_schema();
  if (!schema.empty()) {
    j["table"] = {{"columns", schema.columns.size()}, {"named", schema.named}};
    std::size_t categorical = 0;
    for (const auto& c : schema.columns) categorical += c.categorical();
    j["table"]["categorical_columns"] = categorical;
    if (!schema.id_name.empty()) j["table"]["id_column"] = schema.id_name;
  }
  if (!o.test.empty()) j["test"] = test_report(o, model, load);
  if (o.common.json) {
    print_json(j);
    return;
  }
  std::cout << fmt::format("trained on {} rows × {} features, {} classes in {:.3f} s\n",
                           t.rows, t.n_features, labels.size(), t.train_seconds)
            << fmt::format("config: {}\n", config.describe())
            << fmt::format("model: {} ({})\n", o.model, human_bytes(model_bytes));
  if (j.contains("test")) {
    const auto& tj = j["test"];
    std::cout << fmt::format("test: {} rows predicted in {:.3f} s", tj["rows"].get<std::size_t>(),
                             tj["predict_seconds"].get<double>());
    if (tj.contains("accuracy")) std::cout << fmt::format(", accuracy {:.4f}", tj["accuracy"].get<double>());
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
  // Hidden: rows per chunk of the streamed input (memory tuning, and tests that check
  // chunked training equals whole-file training).
  cmd->add_option("--chunk-rows", o->chunk_rows, "Rows read and counted at a time")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->group("");
  o->hyper.add_to(cmd);
  o->format.add_to(cmd);
  o->feature_stats.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_train(*o); });
}

const RegisterCommand registered(10, add_train_command);

}  // namespace

}  // namespace flynn::cli
