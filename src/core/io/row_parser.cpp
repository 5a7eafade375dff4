// parse_text (a whole text as one chunk) and the parser factory.
#include "core/io/row_parser.hpp"

#include "flynn/error.hpp"

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
