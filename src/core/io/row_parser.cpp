// parse_text (a whole text as one chunk), the two-pass reader of the table formats
// (parse_table_text: parse_csv, parse_arff) and the parser factory.
#include "core/io/row_parser.hpp"

#include "flynn/error.hpp"
#include "core/io/table_encoder.hpp"

namespace flynn::io::detail {

std::unique_ptr<RowParser> make_row_parser(Format format, const LoadOptions& options,
                                           const std::string& source) {
  switch (format) {
    case Format::Csv: return make_csv_parser(options, source);
    case Format::Arff: return make_arff_parser(options, source);
    case Format::Libsvm: return make_libsvm_parser(options, source);
    case Format::Idx:
    case Format::Auto: break;
  }
  throw Error(source + ": format " + format_name(format) + " is not a line-based text format");
}

std::uint64_t value_limit(const LoadOptions& options, std::uint64_t input_bytes) {
  return options.max_values ? options.max_values : sparse_value_limit(input_bytes);
}

Dataset parse_text(RowParser& parser, std::string_view text, const LoadOptions& options) {
  LineScanner lines(text);
  parser.begin(lines, /*at_end=*/true);
  const std::uint64_t limit = value_limit(options, text.size());
  parser.read_rows(lines, std::numeric_limits<std::size_t>::max(), limit);
  Dataset ds = parser.take_chunk(limit);
  parser.end();
  return ds;
}

Dataset parse_table_text(const std::function<std::unique_ptr<TableParser>()>& make, std::string_view text,
                         const LoadOptions& options, const std::string& source) {
  Dataset ds;
  try {
    ds = parse_text(*make(), text, options);
  } catch (const TextInNumericColumn&) {
    // Some feature column holds text: find the categorical columns and their categories
    // in one pass, then encode again with them.
    const std::unique_ptr<TableParser> learner = make();
    learner->learn_categories();
    LineScanner lines(text);
    learner->begin(lines, /*at_end=*/true);
    learner->read_rows(lines, std::numeric_limits<std::size_t>::max(), 0);
    TableSchema schema = learner->learned_schema();
    check_one_hot_size(learner->observed_rows(), schema.n_features(), value_limit(options, text.size()), source,
                       /*in_memory=*/false);
    const std::unique_ptr<TableParser> parser = make();
    parser->use_schema(std::move(schema));
    ds = parse_text(*parser, text, options);
  }
  // Training under --missing mean: the means of the whole text fill its missing cells.
  if (!options.schema && options.missing == MissingPolicy::Mean && options.impute)
    complete_table(ds, ImputationSums::of(ds));
  return ds;
}

void TableChunk::reset(const std::string& source, std::size_t n_features, bool labelled) {
  rows = Dataset{};
  rows.source = source;
  rows.n_features = n_features;
  rows.has_labels = labelled;
  interner = LabelInterner{};
}

Dataset TableChunk::take(const TableSchema* schema) {
  if (rows.has_labels) rows.classes = interner.finish(rows.labels);
  if (schema) rows.schema = *schema;
  total_rows += rows.n_rows;
  return std::move(rows);  // the parser reset()s before the next row
}

}  // namespace flynn::io::detail

namespace flynn::io {

// The table formats' whole-text readers (loaders.hpp): one two-pass reader, two parsers.
Dataset parse_csv(std::string_view text, const LoadOptions& options, const std::string& source) {
  return detail::parse_table_text([&] { return detail::make_csv_parser(options, source); }, text, options,
                                  source);
}

Dataset parse_arff(std::string_view text, const LoadOptions& options, const std::string& source) {
  return detail::parse_table_text([&] { return detail::make_arff_parser(options, source); }, text, options,
                                  source);
}

}  // namespace flynn::io
