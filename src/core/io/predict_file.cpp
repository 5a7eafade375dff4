#include "flynn/io/predict_file.hpp"

#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "flynn/detail/csv_cells.hpp"
#include "flynn/metrics.hpp"

namespace flynn::io {

using flynn::detail::csv_field;

LoadOptions model_load_options(LoadOptions options, const FlyNN& model) {
  options.expected_features = model.config().input_dim;
  options.schema = &model.table_schema();
  options.require_labels = false;
  if (!options.missing_given && model.missing_policy()) options.missing = *model.missing_policy();
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
    // Each row is hashed and scored once; the classes are those of highest probability.
    std::vector<double> p = model.scores(chunk, po);
    model.to_probabilities(p, chunk.n_rows);
    const std::vector<std::uint32_t> predicted = model.classes_of_probabilities(p, chunk.n_rows, po);
    if (options.proba) proba = std::move(p);
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

std::string predictions_csv_header(const FlyNN& model, const Dataset& first_chunk, bool proba) {
  const std::string& id_name = first_chunk.schema.id_name;
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "," + string&&.
  std::string line = first_chunk.row_ids.empty() ? std::string("row")
                                                 : csv_field(id_name.empty() ? "id" : id_name);
  line += ",prediction";
  if (proba) {
    for (const auto& name : model.labels().names()) {
      line += ',';
      line += csv_field(std::string("p_").append(name));
    }
  }
  line += '\n';
  return line;
}

void write_predictions_csv(std::ostream& out, const FlyNN& model, const PredictedChunk& chunk) {
  const LabelSet& labels = model.labels();
  const bool ids = !chunk.rows.row_ids.empty();
  std::string text;
  for (std::size_t r = 0; r < chunk.classes.size(); ++r) {
    if (ids)
      text += csv_field(chunk.rows.row_ids[r]);
    else
      fmt::format_to(std::back_inserter(text), "{}", chunk.first_row + 1 + r);
    fmt::format_to(std::back_inserter(text), ",{}", csv_field(labels.name(chunk.classes[r])));
    if (!chunk.proba.empty())
      for (std::size_t l = 0; l < labels.size(); ++l)
        // Shortest text that reads back as the same double: the printed probabilities
        // rank the classes as the model does, so the prediction is their first maximum.
        fmt::format_to(std::back_inserter(text), ",{}", chunk.proba[r * labels.size() + l]);
    text += '\n';
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

}  // namespace flynn::io
