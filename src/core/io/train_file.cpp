// Training from a data file (see train_file.hpp): `flynn train`'s two-pass streaming
// trainer, shared with Python's flynn.fit_file.
#include "flynn/io/train_file.hpp"

#include "flynn/detail/cpu_time.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/io/load_notes.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/predict_file.hpp"
#include "flynn/io/table_columns.hpp"

#include "core/io/table_encoder.hpp"

namespace flynn::io {

namespace {

using flynn::detail::seconds_since;

// A phase of the training, from its construction to its end: the reporter hears of both
// (options.progress, called with the phase's name, then with ""), so that what it shows
// for a phase (a progress bar) lasts exactly as long as the phase.
class Phase {
 public:
  Phase(const FileTrainingOptions& o, std::string_view name) : o_(o) {
    if (o_.progress) callback_ = o_.progress(name);
  }
  ~Phase() {
    if (o_.progress) o_.progress({});
  }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;
  const ProgressFn& callback() const { return callback_; }

 private:
  const FileTrainingOptions& o_;
  ProgressFn callback_;
};

// Reports a stream's progress through the file (when the callback and the size exist);
// a callback that returns false cancels the training (ProgressFn's contract).
void report(const ProgressFn& progress, const RowStream& rows) {
  if (progress && rows.file_size() && !progress(rows.bytes_read(), rows.file_size()))
    throw Cancelled();
}

// The untrained model for data of `n_features` features and these classes, holding the
// public statistics when given (then the rows' own are never computed).
FlyNN make_model(const FileTrainingOptions& o, std::size_t n_features, const LabelSet& labels) {
  const FlyConfig config = o.hyper.resolve(static_cast<std::uint32_t>(n_features), labels.size());
  FlyNN model(config, labels, o.threads);
  if (o.public_stats) {
    try {
      check_feature_stats_fit(*o.public_stats, config);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", o.public_stats_source, e.what()));
    }
    model.set_feature_stats(*o.public_stats);
  }
  return model;
}

// What the rows reach the kernels as, and the kernel the first of them takes
// (FileTrainingResult::row_elements, row_path); after training (a standardising model
// has its statistics by then).
void note_row_path(FileTrainingResult& t, const DataView& rows) {
  t.row_elements = rows.bytes() ? "uint8" : "float32";
  t.row_path = t.model.hasher().row_path(rows);
}

// Data that can be read only once (a pipe, standard input), or a table with text columns:
// loaded whole, then fitted.
FileTrainingResult train_in_memory(const std::string& path, const FileTrainingOptions& o) {
  const auto t_load = std::chrono::steady_clock::now();
  Dataset data = load_dataset(path, o.load);
  if (!data.has_labels) throw Error(fmt::format("{}: training data needs a label column", path));
  data.require_trainable();
  const LabelSet labels = o.labels ? *o.labels : data.classes;
  const double load_seconds = seconds_since(t_load);
  const auto t_train = std::chrono::steady_clock::now();
  FileTrainingResult t{.model = make_model(o, data.n_features, labels),
                       .rows = data.n_rows,
                       .n_features = data.n_features,
                       .load_seconds = load_seconds};
  // partial_fit on the new model, then the calibration, is fit(), except that it keeps
  // public statistics.
  {
    const Phase phase(o, "training");
    CalibrationSample sample(t.model.config(), data.n_rows);
    t.model.partial_fit(data, phase.callback(), &sample);
    t.model.calibrate(sample);
  }
  note_row_path(t, DataView(data));
  t.model.set_table_schema(data.schema);
  t.model.set_missing_policy(o.load.missing);
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
  std::map<std::string, std::uint64_t> class_rows;  // rows per class name
  std::optional<FeatureSums> sums;  // only when the width is known from the start
                                    // and no value is missing
  // The table schema of the chunks (column names, id column; empty for positional data).
  TableSchema schema;
  // --missing mean: the sums of the non-missing values, whose means fill the missing ones.
  std::optional<ImputationSums> imputation;
  // Whether chunks hold missing values (NaN) to fill with schema.fill before use.
  bool fill_chunks = false;
};

std::vector<std::string> class_names(const TrainingSurvey& s) {
  std::vector<std::string> names;
  for (const auto& [name, n] : s.class_rows) names.push_back(name);
  return names;
}

TrainingSurvey survey(RowStream& rows, const std::string& path, const FileTrainingOptions& o,
                      bool want_sums) {
  TrainingSurvey s;
  s.n_features = rows.n_features();
  s.fixed_width = s.n_features != 0;
  if (want_sums && s.fixed_width)
    s.sums.emplace(static_cast<std::uint32_t>(s.n_features), o.hyper.resolve_value_transform());
  const Phase phase(o, "reading");
  Dataset chunk;
  bool first = true;
  while (rows.next(chunk)) {
    if (first) {
      // Every chunk of a file carries the same schema (decided with its header).
      s.schema = chunk.schema;
      if (o.load.missing == MissingPolicy::Mean && o.load.impute && !s.schema.empty())
        s.imputation.emplace(static_cast<std::uint32_t>(chunk.n_features));
      first = false;
    }
    if (s.imputation)
      for (std::size_t r = 0; r < chunk.n_rows; ++r) s.imputation->add_row(chunk.row(r));
    // The fixed labels must name every class: refused here, naming the first row that is not.
    if (o.labels && chunk.has_labels) chunk.class_ids_in(*o.labels);
    if (chunk.has_labels) {
      const std::vector<std::uint64_t> per_class = rows_per_class(chunk.labels, chunk.classes.size());
      for (std::size_t l = 0; l < per_class.size(); ++l) s.class_rows[chunk.classes.name(l)] += per_class[l];
    }
    if (s.sums)
      for (std::size_t r = 0; r < chunk.n_rows; ++r) s.sums->add_row(chunk.row(r));
    s.n_features = std::max(s.n_features, chunk.n_features);
    s.rows += chunk.n_rows;
    report(phase.callback(), rows);
  }
  if (!rows.has_labels()) throw Error(fmt::format("{}: training data needs a label column", path));
  if (s.class_rows.size() < 2) {
    // Dataset::require_trainable's check and message, on a stand-in of the file's labels
    // (built only on this error path).
    Dataset all_one_class;
    all_one_class.source = path;
    all_one_class.has_labels = true;
    all_one_class.n_rows = static_cast<std::size_t>(s.rows);
    all_one_class.classes = LabelSet(class_names(s));
    all_one_class.labels.assign(all_one_class.n_rows, 0);
    all_one_class.require_trainable();
  }
  std::vector<std::uint64_t> sizes;
  for (const auto& [name, n] : s.class_rows) sizes.push_back(n);
  const std::string warning = label_column_warning(path, s.schema.label_name, sizes);
  if (!warning.empty()) send_warning(warning);
  if (s.imputation) {
    // What parse_csv / parse_arff's complete_table gives the whole file: the means of the
    // non-missing values as fill values (or no schema when there is nothing to keep).
    s.schema = completed_schema(std::move(s.schema), *s.imputation);
    if (s.imputation->missing_cells() > 0) {
      // The sums took the missing values as NaN: sum the filled rows again.
      s.fill_chunks = true;
      s.sums.reset();
    }
  }
  return s;
}

// A file the stream holds whole (IDX): fitted on all of its rows at once, where they lie
// (uint8 images as bytes), as a caller's array would be; one read of the file.
FileTrainingResult train_whole(const std::string& path, const RowStream::WholeFile& whole,
                               const FileTrainingOptions& o,
                               std::chrono::steady_clock::time_point t_load) {
  const Dataset& records = *whole.records;
  if (!records.has_labels) throw Error(fmt::format("{}: training data needs a label column", path));
  // The streaming survey's order: a label missing from --labels first, naming its record.
  std::vector<std::uint32_t> class_ids;
  if (o.labels) class_ids = records.row_class_ids_in(*o.labels);
  records.require_trainable();
  const LabelSet labels = o.labels ? *o.labels : records.classes;
  if (!o.labels) class_ids = records.row_class_ids_in(labels);
  const double load_seconds = seconds_since(t_load);
  const auto t_train = std::chrono::steady_clock::now();
  FileTrainingResult t{.model = make_model(o, whole.rows.n_cols(), labels),
                       .rows = records.n_rows,
                       .n_features = whole.rows.n_cols(),
                       .load_seconds = load_seconds};
  {
    // partial_fit on the new model, then the calibration, is fit(), except that it keeps
    // public statistics.
    const Phase phase(o, "training");
    CalibrationSample sample(t.model.config(), whole.rows.n_rows());
    t.model.partial_fit(whole.rows, class_ids, phase.callback(), &sample);
    t.model.calibrate(sample);
  }
  t.model.set_missing_policy(o.load.missing);
  t.train_seconds = seconds_since(t_train);
  note_row_path(t, whole.rows);
  return t;
}

// Whether the model of these hyper-parameters, for rows of `n_features` features (0:
// not known yet), standardises and so needs the rows' feature sums: when unsure, yes.
bool needs_sums(const FileTrainingOptions& o, std::size_t n_features) {
  if (o.public_stats) return false;  // public statistics replace the rows' own
  if (n_features == 0) return true;
  return o.hyper.resolve_variant(static_cast<std::uint32_t>(n_features)).standardize;
}

// A regular file, read twice in bounded chunks: a first pass for the classes, the width and
// the feature statistics, a second that counts chunk by chunk (counts are sums). The model
// equals fit() on the whole file: the same statistics from the same exact sums, the same
// integer counts. A file the stream holds whole (IDX) is read once and fitted at once.
FileTrainingResult train_streaming(const std::string& path, const FileTrainingOptions& o) {
  ChunkLimits limits;
  limits.max_rows = o.chunk_rows;

  const auto t_load = std::chrono::steady_clock::now();
  TrainingSurvey s;
  try {
    RowStream rows(path, o.load, limits);
    if (const std::optional<RowStream::WholeFile> whole = rows.whole_file())
      return train_whole(path, *whole, o, t_load);
    s = survey(rows, path, o, needs_sums(o, rows.n_features()));
  } catch (const detail::TextInNumericColumn&) {
    // A text column to one-hot encode: its categories must be known before any row is
    // encoded, which whole-file loading learns in a pass of its own. Such tables are
    // trained in memory.
    return train_in_memory(path, o);
  }
  const LabelSet labels =
      o.labels ? *o.labels
               : LabelSet::sorted(class_names(s));
  const double load_seconds = seconds_since(t_load);
  const auto t_train = std::chrono::steady_clock::now();
  FileTrainingResult t{.model = make_model(o, s.n_features, labels),
                       .rows = s.rows,
                       .n_features = s.n_features,
                       .load_seconds = load_seconds};

  // LIBSVM without a fixed width: read again at the file's width, which makes every chunk
  // as wide as load_dataset's rows.
  LoadOptions counting = o.load;
  if (!s.fixed_width) counting.expected_features = s.n_features;
  if (t.model.config().variant.standardize && !o.public_stats) {
    if (!s.sums) {
      RowStream rows(path, counting, limits);
      s.sums.emplace(static_cast<std::uint32_t>(s.n_features), t.model.config().value_transform);
      Dataset chunk;
      while (rows.next(chunk)) {
        if (s.fill_chunks) fill_missing(chunk, s.schema.fill);
        for (std::size_t r = 0; r < chunk.n_rows; ++r) s.sums->add_row(chunk.row(r));
      }
    }
    t.model.set_feature_stats(s.sums->stats());
  }
  {
    RowStream rows(path, counting, limits);
    const Phase phase(o, "training");
    // The rows the calibration scores, chosen as fit() chooses them (a function of each
    // row and the file's row count), whichever chunk holds them.
    CalibrationSample sample(t.model.config(), s.rows);
    Dataset chunk;
    while (rows.next(chunk)) {
      if (s.fill_chunks) fill_missing(chunk, s.schema.fill);
      t.model.partial_fit(chunk, {}, &sample);
      if (t.row_elements.empty()) note_row_path(t, DataView(chunk));
      report(phase.callback(), rows);
    }
    t.model.calibrate(sample);
  }
  t.model.set_table_schema(std::move(s.schema));
  t.model.set_missing_policy(o.load.missing);
  t.train_seconds = seconds_since(t_train);
  return t;
}

}  // namespace

const OptionTable<LoadFlags>& load_flag_fields() {
  using F = LoadFlags;
  const char* g = "Data format";
  static const OptionTable<F> table = {
      {"--format", "csv, arff, idx, libsvm or auto (from the file name)", &F::format, g},
      {"--label-col",
       "Class column: 'last' (default), 1-based number, negative from the end, a header name, or 'none'",
       &F::label_col, g},
      {"--header", "CSV header line: auto, yes, no", &F::header, g},
      {"--delimiter", "CSV delimiter (default: detect , ; or tab)", &F::delimiter, g},
      {"--idx-labels", "IDX labels file (default: the *-labels-idx1-ubyte file beside the images)", &F::idx_labels,
       g},
      {"--id-col",
       "Row id column (name or 1-based number): never a feature, passed through to the predictions", &F::id_col, g},
      {"--feature-cols",
       "Only these columns are features: names, 1-based numbers or ranges (3-7), comma-separated",
       &F::feature_cols, g},
      {"--ignore-cols", "Columns to leave out: names, 1-based numbers or ranges (3-7), comma-separated",
       &F::ignore_cols, g},
      {"--missing",
       "Missing cells (empty, NA, ?, nan): mean (default: the training mean, stored in the model), zero, or error",
       &F::missing, g},
  };
  return table;
}

LoadOptions load_options(const LoadFlags& flags) {
  LoadOptions o;
  o.format = parse_format(flags.format);
  o.label_column = LabelColumn::parse(flags.label_col);
  if (flags.header == "auto") {
    o.header = LoadOptions::Header::Auto;
  } else if (flags.header == "yes") {
    o.header = LoadOptions::Header::Yes;
  } else if (flags.header == "no") {
    o.header = LoadOptions::Header::No;
  } else {
    throw Error(fmt::format("--header: '{}' is not one of auto, yes, no", flags.header));
  }
  if (flags.delimiter == "\\t" || flags.delimiter == "tab") {
    o.delimiter = '\t';
  } else if (flags.delimiter.size() == 1) {
    o.delimiter = flags.delimiter[0];
  } else if (!flags.delimiter.empty()) {
    throw Error(fmt::format("--delimiter: '{}' must be one character (or 'tab')", flags.delimiter));
  }
  o.idx_labels = flags.idx_labels;
  o.max_input_bytes = flags.max_input_bytes;
  if (!flags.id_col.empty()) {
    try {
      o.id_column = LabelColumn::parse(flags.id_col);
    } catch (const Error& e) {
      throw Error(fmt::format("--id-col: {}", e.what()));
    }
  }
  o.feature_columns = ColumnSelector::parse(flags.feature_cols, "--feature-cols");
  o.ignore_columns = ColumnSelector::parse(flags.ignore_cols, "--ignore-cols");
  o.missing = parse_missing_policy(flags.missing);
  return o;
}

FileTrainingResult train_from_file(const std::string& path, const FileTrainingOptions& options) {
  // Only a regular file can be read twice; anything else (a pipe, standard input) is
  // loaded into memory once.
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  return regular ? train_streaming(path, options) : train_in_memory(path, options);
}

namespace {

Error needs_labels(const std::string& path, const char* purpose, const FlyNN& model) {
  return Error(fmt::format("{}: {} needs a label column (the model has d = {} features)", path,
                           purpose, model.config().input_dim));
}

// The file as rows of `model`, in chunks; refuses data without a label column.
RowStream open_labelled_rows(const FlyNN& model, const std::string& path,
                             const FileEditOptions& o, const char* purpose) {
  ChunkLimits limits;
  limits.max_rows = o.chunk_rows;
  RowStream rows(path, model_load_options(o.load, model), limits);
  if (!rows.has_labels())
    throw needs_labels(path, purpose, model);
  return rows;
}

// Refuses rows of a class the model's label list lacks, before any is learned.
void require_known_labels(const FlyNN& model, const Dataset& rows, const std::string& path,
                          const FileEditOptions& o) {
  for (const std::string& name : rows.classes.names())
    if (model.labels().find(name) < 0)
      throw Error(fmt::format("{}: label '{}' is not one of the model's classes ({}); to add "
                              "classes {}",
                              path, name, model.labels().joined(), o.add_classes_hint));
}

}  // namespace

std::uint64_t learn_file(FlyNN& model, const std::string& path, const FileEditOptions& o) {
  // A standardising model without statistics learns them from its first rows
  // (FlyNN::partial_fit): those of the whole file, so it is read whole.
  if (model.config().variant.standardize && model.feature_stats().empty()) {
    const Dataset data = load_dataset(path, model_load_options(o.load, model));
    if (!data.has_labels)
      throw needs_labels(path, "update", model);
    require_known_labels(model, data, path, o);
    model.partial_fit(data, o.progress);
    return data.n_rows;
  }
  RowStream rows = open_labelled_rows(model, path, o, "update");
  std::uint64_t n = 0;
  Dataset chunk;
  while (rows.next(chunk)) {
    require_known_labels(model, chunk, path, o);
    model.partial_fit(chunk);
    n += chunk.n_rows;
    report(o.progress, rows);
  }
  return n;
}

std::uint64_t forget_file(FlyNN& model, const std::string& path, const FileEditOptions& o) {
  RowStream rows = open_labelled_rows(model, path, o, "forget");
  ClassCounts removed(model.labels().size(), model.config().cells());
  std::uint64_t n = 0;
  Dataset chunk;
  while (rows.next(chunk)) {
    removed += model.count(chunk);
    n += chunk.n_rows;
    report(o.progress, rows);
  }
  model.forget_counts(removed);  // throws, model unchanged, for impossible rows
  return n;
}

}  // namespace flynn::io
