#pragma once
// Training a model from a data file, streaming: what `flynn train` and Python's
// flynn.fit_file do. A regular file is read twice in bounded chunks (RowStream): a first
// pass learns the rows, the width, the classes and the exact feature sums, a second counts
// chunk by chunk. Counts and statistics are exact sums, so the model equals fit() on the
// whole file, byte for byte, while memory stays that of one chunk (plus the model). IDX
// files (binary, held whole by RowStream) are read once and fitted like an in-memory
// array: the same kernels, the same time.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "flynn/classifier.hpp"
#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/row_stream.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"

namespace flynn::io {

/// LoadOptions as a user spells them: the text of the CLI's data-format flags (--format,
/// --label-col, --header, --delimiter, --idx-labels, --id-col, --feature-cols,
/// --ignore-cols, --missing), which Python's flynn.fit_file takes as keywords too.
struct LoadFlags {
  std::string format = "auto";    ///< csv, arff, idx, libsvm or auto
  std::string label_col = "last"; ///< last, a 1-based number, negative from the end, a name, none
  std::string header = "auto";    ///< auto, yes, no
  std::string delimiter;          ///< one character, "tab" or "\t"; "" = detect
  std::string idx_labels;         ///< IDX labels file ("" = beside the images)
  std::uint64_t max_input_bytes = kDefaultMaxInputBytes;
  std::string id_col;             ///< name or 1-based number ("" = none)
  std::string feature_cols;       ///< names, numbers or ranges, comma-separated ("" = all)
  std::string ignore_cols;        ///< as feature_cols
  std::string missing = "mean";   ///< mean, zero or error
};

/// The flags' table (flag, help; the "Data format" group), in the order of --help; without
/// --max-input-bytes, which is a byte size with suffixes (the CLI's InputLimitOption).
const OptionTable<LoadFlags>& load_flag_fields();

/// The LoadOptions the flags mean. Throws flynn::Error naming the flag (as the CLI spells
/// it, e.g. "--header: 'maybe' is not one of auto, yes, no") on a value it cannot take.
LoadOptions load_options(const LoadFlags& flags);

/// How to train from a file: how to read it, which model to build, and how to report.
struct FileTrainingOptions {
  /// How the file is read (format, label column, header, columns, missing cells, limits).
  LoadOptions load;
  /// The hyper-parameters, resolved for the file's width and number of classes.
  HyperParams hyper;
  /// The class list fixing class ids (`flynn train --labels`); every label of the file must
  /// be in it. Without it: the file's labels, sorted (LabelSet::sorted).
  std::optional<LabelSet> labels;
  /// Standardisation statistics from public knowledge (`--feature-stats`), used instead of
  /// the rows' own (then the rows' sums are never computed); checked against the model.
  std::optional<FeatureStats> public_stats;
  /// Names the public statistics in errors about their fit ("--feature-stats FILE").
  std::string public_stats_source = "feature statistics";
  /// Rows per chunk at most (memory: one chunk of rows at a time).
  std::size_t chunk_rows = ChunkLimits{}.max_rows;
  /// Worker threads of the model (0 = all cores); never changes the model.
  int threads = 0;
  /// Called as each phase begins, with its name ("reading": the first pass; "training":
  /// counting), returning the progress callback of that phase (may be empty), and with ""
  /// as it ends (the result is then ignored); the callback is not used after that. A
  /// callback returning false cancels the training: train_from_file throws flynn::Cancelled.
  std::function<ProgressFn(std::string_view phase)> progress;
};

/// A model trained from a file, and what a summary reports about its training data.
struct FileTrainingResult {
  FlyNN model;
  std::uint64_t rows = 0;       ///< training rows
  std::size_t n_features = 0;   ///< features per row (d)
  double load_seconds = 0;      ///< reading: the first pass (or the whole-file load)
  /// Training: making the model (its lifting matrix), counting (and the statistics pass,
  /// when one is needed): what fit() on the rows in memory costs.
  double train_seconds = 0;
  /// What the rows reach the FlyHash kernels as: "uint8" (IDX images, read in place as a
  /// caller's pixel array would be) or "float32" (parsed text).
  std::string row_elements{};
  /// The kernel the first row takes (FlyHasher::row_path: "uint8", "int16", "float", …):
  /// the same as in-process training on the same values takes.
  std::string row_path{};
};

/// Trains a model on the labelled rows of the file at `path`. A regular file is streamed
/// (read twice, in chunks of at most options.chunk_rows rows; the first pass sums the
/// features only for a standardising model), except an IDX file, which is read once and
/// fitted at once on its rows where they lie (uint8 images as bytes); anything else (a pipe,
/// standard input) can be read only once and is loaded whole, as is a table with text in a
/// numeric column (its one-hot categories must be known before any row is encoded). Either
/// way the model, its table schema (column names, categories, fill means) and its bytes
/// equal fit() on load_dataset(path, options.load). Throws flynn::Error naming the file
/// (and line) on bad data, on data without a label column or with fewer than two classes,
/// on a label missing from options.labels, and on public statistics that do not fit.
FileTrainingResult train_from_file(const std::string& path, const FileTrainingOptions& options);

/// How `flynn update`, `flynn forget` and Python read a file of labelled rows into (or out
/// of) a model they already hold.
struct FileEditOptions {
  /// How the file is read; the model's features and table are added (model_load_options).
  LoadOptions load;
  /// Rows per chunk at most (memory: one chunk of rows at a time).
  std::size_t chunk_rows = ChunkLimits{}.max_rows;
  /// Called with (bytes read, file size) after each chunk; returning false cancels
  /// (flynn::Cancelled).
  ProgressFn progress;
  /// Ends the error about a label the model does not have ("to add classes …").
  std::string add_classes_hint = "extend the model's label list first (FlyNN::add_classes)";
};

/// Learns the labelled rows of the file at `path` into `model` (FlyNN::partial_fit, chunk
/// by chunk): the counts equal partial_fit on the whole file, so training on A then
/// learning B equals training on A ∪ B. Returns the rows learned. Throws flynn::Error
/// naming the file on data without a label column, on a label the model's list lacks, on
/// bad data, and (FlyNN's rule) for a differentially private model; the model may then
/// hold part of the file's rows, so write it only after this returns.
std::uint64_t learn_file(FlyNN& model, const std::string& path, const FileEditOptions& options);

/// Removes the labelled rows of the file at `path` from `model`: their counts summed over
/// the chunks, then removed at once (FlyNN::forget_counts), so the result equals forget()
/// on the whole file and the model is unchanged when it throws (rows it cannot contain,
/// a differentially private model, bad data). Returns the rows removed.
std::uint64_t forget_file(FlyNN& model, const std::string& path, const FileEditOptions& options);

}  // namespace flynn::io
