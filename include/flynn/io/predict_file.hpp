#pragma once
// Predicting the rows of a data file with a trained model, streaming: what `flynn predict`,
// the --test evaluation of `flynn train` and `flynn tune` do. One home for reading a file
// as the model sees it, predicting it chunk by chunk and counting the right answers.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/dataset.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/row_stream.hpp"
#include "flynn/progress.hpp"

namespace flynn::io {

/// `options` for reading rows a trained model will see (predict, update, forget, a test
/// file): the model's features (expected_features), its table schema (columns matched by
/// name, its categories and fill means), labels optional, and, unless
/// options.missing_given, the model's missing-value policy. The model must outlive them.
LoadOptions model_load_options(LoadOptions options, const FlyNN& model);

/// The class id a row's label has in a model's label list when the model does not know the
/// label: no prediction equals it, so the row counts as an error.
inline constexpr std::uint32_t kUnknownLabel = 0xffffffffu;

/// `data`'s labels as class ids of `model_labels` (kUnknownLabel for a label the model does
/// not know; `unknown`, when given, receives their number), for flynn::count_correct.
std::vector<std::uint32_t> truth_ids(const Dataset& data, const LabelSet& model_labels,
                                     std::size_t* unknown = nullptr);

/// One chunk of a file's predictions, as predict_file hands it on.
struct PredictedChunk {
  const Dataset& rows;                        ///< the chunk (its row ids, its labels)
  std::uint64_t first_row;                    ///< rows of the file before this chunk
  const std::vector<std::uint32_t>& classes;  ///< predicted class ids, into model.labels()
  const std::vector<double>& proba;           ///< rows × L probabilities; empty unless asked
  const std::vector<std::uint32_t>& truth;    ///< truth_ids of the labels; empty without
};

struct FilePredictionOptions {
  /// Threads and tie rule; first_row is set for each chunk (the random tie rule is keyed
  /// by the row's index in the file, so the choices equal one call on all rows).
  PredictOptions predict;
  /// Also compute predict_proba()'s probabilities (from the same scores: each row is
  /// hashed once).
  bool proba = false;
  /// Called with (bytes read, file size) after each chunk of a file whose size is known.
  ProgressFn progress;
};

/// What the predictions of a file add up to.
struct FilePrediction {
  std::uint64_t rows = 0;
  bool labelled = false;       ///< the file has a label column
  std::uint64_t correct = 0;   ///< labelled rows predicted right
  std::uint64_t unknown = 0;   ///< labelled rows whose class the model does not know
  /// correct / rows (rows with unknown labels are errors); 0 for no rows.
  double accuracy() const;
};

/// Reads `rows` chunk by chunk, predicts each and hands it to `each_chunk` (when given)
/// before reading the next, so memory does not grow with the number of rows. Throws
/// flynn::Error naming the file and line on bad data, and whatever each_chunk throws.
FilePrediction predict_file(RowStream& rows, const FlyNN& model,
                            const FilePredictionOptions& options,
                            const std::function<void(const PredictedChunk&)>& each_chunk = {});

/// The header line of the predictions CSV `flynn predict` writes: the first column is the
/// rows' ids (named after the data's id column, or "id") when `first_chunk` has them, else
/// "row"; then "prediction", and with `proba` one "p_CLASS" column per class.
std::string predictions_csv_header(const FlyNN& model, const Dataset& first_chunk, bool proba);

/// The CSV lines of one chunk's predictions: each row's id when the chunk has them, else its
/// 1-based number in the file; the class name; the probabilities when computed (each in
/// the shortest text that reads back as the same double, so the printed probabilities
/// rank the classes as the model does).
/// Formatted into one string and written at once.
void write_predictions_csv(std::ostream& out, const FlyNN& model, const PredictedChunk& chunk);

}  // namespace flynn::io
