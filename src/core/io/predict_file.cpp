#include "flynn/io/predict_file.hpp"

#include <utility>

#include "flynn/metrics.hpp"

namespace flynn::io {

LoadOptions model_load_options(LoadOptions options, const FlyNN& model) {
  options.expected_features = model.config().input_dim;
  options.schema = &model.table_schema();
  options.require_labels = false;
  return options;
}

std::vector<std::uint32_t> truth_ids(const Dataset& data, const LabelSet& model_labels,
                                     std::size_t* unknown) {
  std::vector<std::uint32_t> ids(data.n_rows);
  std::size_t missing = 0;
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    const long id = model_labels.find(data.classes.name(data.labels[r]));
    missing += id < 0;
    ids[r] = id < 0 ? kUnknownLabel : static_cast<std::uint32_t>(id);
  }
  if (unknown) *unknown = missing;
  return ids;
}

double FilePrediction::accuracy() const {
  return rows ? static_cast<double>(correct) / static_cast<double>(rows) : 0.0;
}

FilePrediction predict_file(RowStream& rows, const FlyNN& model,
                            const FilePredictionOptions& options,
                            const std::function<void(const PredictedChunk&)>& each_chunk) {
  PredictOptions po = options.predict;
  FilePrediction tally;
  Dataset chunk;
  std::vector<double> proba;
  std::vector<std::uint32_t> truth;
  while (rows.next(chunk)) {
    po.first_row = tally.rows;
    // Each row is hashed and scored once; classes and probabilities both come from the scores.
    std::vector<double> scores = model.scores(chunk, po);
    const std::vector<std::uint32_t> predicted = model.choose_classes(scores, chunk.n_rows, po);
    if (options.proba) {
      model.to_probabilities(scores, chunk.n_rows);
      proba = std::move(scores);
    }
    truth.clear();
    if (chunk.has_labels) {
      std::size_t unknown = 0;
      truth = truth_ids(chunk, model.labels(), &unknown);
      tally.correct += count_correct(truth, predicted);
      tally.unknown += unknown;
    }
    if (each_chunk) each_chunk(PredictedChunk{chunk, tally.rows, predicted, proba, truth});
    tally.rows += chunk.n_rows;
    if (options.progress && rows.file_size()) options.progress(rows.bytes_read(), rows.file_size());
  }
  tally.labelled = rows.has_labels();
  return tally;
}

}  // namespace flynn::io
