// CSV parser (see loaders.hpp for the accepted dialect).
#include <algorithm>
#include <cstring>
#include <deque>
#include <string>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/load_notes.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/header_decision.hpp"
#include "core/io/row_parser.hpp"
#include "core/io/table_encoder.hpp"
#include "core/io/text_scanner.hpp"

namespace flynn::io {

using namespace detail;

namespace {

// Trim for CSV fields: spaces and tabs, except the delimiter itself (a tab delimiter must
// keep empty fields).
std::string_view trim_field(std::string_view s, char delim) {
  auto blank = [delim](char c) { return c != delim && is_blank_char(c); };
  std::size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// Splits one line into trimmed fields. A quoted field is returned with its quotes (so the
// caller can tell it was quoted); see unquote(). Throws on an unterminated quote or text
// after a closing quote.
void split_line(std::string_view line, char delim, std::vector<std::string_view>& fields,
                const std::string& source, std::uint64_t line_no) {
  fields.clear();
  if (std::memchr(line.data(), '"', line.size()) == nullptr) {
    // Fast path: no quotes anywhere.
    std::size_t start = 0;
    while (true) {
      const void* hit = std::memchr(line.data() + start, delim, line.size() - start);
      const std::size_t end =
          hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - line.data()) : line.size();
      fields.push_back(trim_field(line.substr(start, end - start), delim));
      if (!hit) return;
      start = end + 1;
    }
  }
  auto blank = [delim](char c) { return c != delim && is_blank_char(c); };
  std::size_t i = 0;
  const std::size_t n = line.size();
  while (true) {
    while (i < n && blank(line[i])) ++i;
    if (i < n && line[i] == '"') {
      const std::size_t open = i;
      std::size_t j = i + 1;
      while (true) {
        if (j >= n) {
          throw Error(where(source, line_no, fields.size() + 1) +
                      "unterminated quoted field (quoted fields cannot span lines)");
        }
        if (line[j] == '"') {
          if (j + 1 < n && line[j + 1] == '"') {
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      fields.push_back(line.substr(open, j + 1 - open));
      i = j + 1;
      while (i < n && blank(line[i])) ++i;
      if (i < n && line[i] != delim) {
        throw Error(where(source, line_no, fields.size()) + "unexpected " +
                    quote_text(line.substr(i, 1)) + " after a closing quote");
      }
    } else {
      std::size_t j = i;
      while (j < n && line[j] != delim) ++j;
      fields.push_back(trim_field(line.substr(i, j - i), delim));
      i = j;
    }
    if (i >= n) return;
    ++i;  // skip the delimiter; a trailing delimiter yields a final empty field
    if (i == n) {
      fields.emplace_back();
      return;
    }
  }
}

bool is_quoted(std::string_view f) { return f.size() >= 2 && f.front() == '"' && f.back() == '"'; }

// The text of a field: quotes removed and "" collapsed (into `scratch` only when needed).
std::string_view unquote(std::string_view f, std::string& scratch) {
  if (!is_quoted(f)) return f;
  std::string_view inner = f.substr(1, f.size() - 2);
  if (inner.find('"') == std::string_view::npos) return inner;
  scratch.clear();
  for (std::size_t k = 0; k < inner.size(); ++k) {
    scratch += inner[k];
    if (inner[k] == '"' && k + 1 < inner.size() && inner[k + 1] == '"') ++k;
  }
  return scratch;
}

char detect_delimiter(std::string_view line) {
  std::size_t comma = 0, semi = 0, tab = 0;
  bool in_quotes = false;
  for (char c : line) {
    if (c == '"') in_quotes = !in_quotes;  // "" toggles twice: stays correct
    if (in_quotes) continue;
    if (c == ',')
      ++comma;
    else if (c == ';')
      ++semi;
    else if (c == '\t')
      ++tab;
  }
  if (semi > comma && semi >= tab) return ';';
  if (tab > comma && tab > semi) return '\t';
  return ',';
}

std::string delimiter_name(char d) {
  if (d == '\t') return "tab";
  return std::string("'") + d + "'";
}

}  // namespace

namespace {

// The text of every field of a row (unquoted; scratch holds the un-doubled quotes).
void cells_of(const std::vector<std::string_view>& fields, std::vector<std::string>& scratch,
              std::vector<std::string_view>& cells) {
  if (scratch.size() < fields.size()) scratch.resize(fields.size());
  cells.resize(fields.size());
  for (std::size_t j = 0; j < fields.size(); ++j) cells[j] = unquote(fields[j], scratch[j]);
}

// The CSV parser (RowParser protocol, see row_parser.hpp). begin() decides the delimiter,
// the column count, whether line 1 is a header and the table layout (label, id, feature
// columns; the model's schema at prediction); read_rows() turns data lines into features
// with a TableRowEncoder. In training, text in a numeric column throws
// TextInNumericColumn: the whole-file parse_csv then learns the categorical columns with
// learn_categories() and encodes again with use_schema().
class CsvParser final : public RowParser {
 public:
  CsvParser(const LoadOptions& options, std::string source)
      : options_(options), source_(std::move(source)) {}

  /// Training: encode with this schema (categorical columns learned by a previous pass)
  /// instead of discovering one. Call before begin().
  void use_schema(TableSchema schema) { learned_ = std::move(schema); }
  /// Training: rows feed a TableSchemaBuilder instead of being encoded (the chunk stays
  /// empty); learned_schema() and observed_rows() give the result. Call before begin().
  void learn_categories() { learning_ = true; }
  /// The schema the rows observed so far call for (learn_categories() mode).
  TableSchema learned_schema() const { return builder_->finish(); }
  /// Data rows observed (learn_categories() mode).
  std::uint64_t observed_rows() const { return observed_rows_; }

  void begin(LineScanner& lines, bool at_end) override;
  bool has_labels() const override { return labelled_; }
  std::size_t fixed_width() const override { return n_features_; }
  void read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) override;
  std::size_t chunk_rows() const override { return chunk_.rows.n_rows; }
  Dataset take_chunk(std::uint64_t max_values) override;
  void end() override {
    if (chunk_.total_rows == 0 && observed_rows_ == 0)
      throw Error(source_ + ": no data rows (only a header line)");
  }

 private:
  // begin()'s phases: line 1, the header decision, the encoder for the table's layout.
  struct FirstLine {
    std::uint64_t line_no;
    LineScanner after;  // the text after line 1 (the header look-ahead reads a copy)
    char delim;
    std::vector<std::string_view> fields;  // split, still quoted (views of the text)
    std::vector<std::string> names;        // unquoted
  };
  // The rows below line 1 decide_header looks at, unquoted.
  struct Lookahead {
    std::vector<std::vector<std::string_view>> rows;
    std::deque<std::string> unquoted;  // cells whose quotes held "" (stable addresses)
    bool complete = false;             // decide_header's `complete`
  };
  FirstLine read_first_line(LineScanner& lines, bool at_end) const;
  bool decide_header_of(const FirstLine& first, bool at_end) const;
  Lookahead read_lookahead(LineScanner peek, char delim, std::size_t ncols, bool at_end) const;
  void set_up_encoder(bool header);
  // Appends one data row (its fields split) to the chunk.
  void parse_row(const std::vector<std::string_view>& f, std::uint64_t line_no);
  void reset_chunk();
  // The error text of a row whose label cell `name` is missing (table_schema.hpp: is_missing_cell).
  std::string missing_label(std::string_view name) const;

  const LoadOptions& options_;
  std::string source_;
  std::optional<TableSchema> learned_;  // use_schema()
  bool learning_ = false;               // learn_categories()
  char delim_ = ',';
  std::size_t ncols_ = 0;
  std::vector<std::string> names_;  // the header's column names; empty without a header
  TableLayout layout_;
  // The schema rows are encoded with: the model's at prediction, else the one learned
  // (numeric columns, or use_schema()'s). encoder_ refers to it.
  TableSchema schema_;
  bool schema_in_chunks_ = false;  // whether chunks carry schema_ (Dataset::schema)
  std::unique_ptr<TableRowEncoder> encoder_;
  std::optional<TableSchemaBuilder> builder_;  // learn_categories()
  std::uint64_t observed_rows_ = 0;
  bool labelled_ = false;
  std::size_t n_features_ = 0;
  TableChunk chunk_;
  std::vector<std::string_view> fields_, cells_;
  std::vector<std::string> cell_scratch_;
};

std::string CsvParser::missing_label(std::string_view name) const {
  // A missing class ("NA", "?", empty) is refused rather than learned as a class of its own.
  const std::string what = name.empty() ? std::string("empty label") : "missing label " + quote_text(name);
  const std::string column = layout_.label < names_.size() ? quote_text(names_[layout_.label])
                                                           : "(column " + std::to_string(layout_.label + 1) + ")";
  return what + " in the label column " + column +
         ": every row needs its class. If this is not the class column, choose the label column with "
         "--label-col; else remove the rows without a class";
}

void CsvParser::reset_chunk() { chunk_.reset(source_, n_features_, labelled_); }

void CsvParser::begin(LineScanner& lines, bool at_end) {
  FirstLine first = read_first_line(lines, at_end);
  const bool header = decide_header_of(first, at_end);
  names_ = header ? std::move(first.names) : std::vector<std::string>{};
  layout_ = resolve_table_layout(names_, first.fields.size(), options_, source_, first.line_no);
  if (layout_.labelled() && first.fields.size() < 2) {
    throw Error(where(source_, first.line_no) + "1 column (delimiter " +
                delimiter_name(first.delim) +
                "): need at least one feature column besides the label column");
  }
  set_up_encoder(header);
  delim_ = first.delim;
  ncols_ = first.fields.size();
  labelled_ = layout_.labelled();
  n_features_ = encoder_->n_features();
  chunk_.total_rows = 0;
  reset_chunk();
  fields_.reserve(ncols_);
  if (!header) parse_row(first.fields, first.line_no);
}

CsvParser::FirstLine CsvParser::read_first_line(LineScanner& lines, bool at_end) const {
  std::string_view line;
  bool found = false;
  while (lines.next(line)) {
    if (!is_blank(line)) {
      found = true;
      break;
    }
  }
  if (!found) {
    if (!at_end) throw NeedMoreText{};
    throw Error(source_ + ": empty file");
  }
  FirstLine first{lines.line_number(), lines, ',', {}, {}};
  first.delim = options_.delimiter ? options_.delimiter : detect_delimiter(line);
  split_line(line, first.delim, first.fields, source_, first.line_no);
  first.names.resize(first.fields.size());
  std::string scratch;
  for (std::size_t j = 0; j < first.fields.size(); ++j)
    first.names[j] = std::string(unquote(first.fields[j], scratch));
  return first;
}

bool CsvParser::decide_header_of(const FirstLine& first, bool at_end) const {
  const HeaderByOptions by_options =
      header_by_options(options_, options_.schema, first.names, source_);
  if (by_options.header) return *by_options.header;
  // Line 1 and a bounded look-ahead of the rows below it decide (header_decision.hpp).
  const std::vector<std::string_view> first_cells(first.names.begin(), first.names.end());
  const Lookahead below = read_lookahead(first.after, first.delim, first_cells.size(), at_end);
  const HeaderDecision decision = decide_header(first_cells, below.rows, by_options.excluded,
                                                by_options.label, below.complete);
  if (decision.need_more) throw NeedMoreText{};
  if (decision.guessed) send_note(source_ + ": " + decision.reason);
  return decision.header;
}

CsvParser::Lookahead CsvParser::read_lookahead(LineScanner peek, char delim, std::size_t ncols,
                                               bool at_end) const {
  Lookahead below;
  const std::size_t want = header_lookahead_rows(ncols);
  std::string_view next;
  std::vector<std::string_view> f;
  bool stopped = false;  // a row that does not split ends the look-ahead
  while (below.rows.size() < want && peek.next(next)) {
    if (is_blank(next)) continue;
    if (below.rows.empty()) {
      // Line 2's quoting errors are reported here, as they always were.
      split_line(next, delim, f, source_, peek.line_number());
    } else {
      try {
        split_line(next, delim, f, source_, peek.line_number());
      } catch (const Error&) {
        stopped = true;  // reported when that row is read
        break;
      }
    }
    std::vector<std::string_view>& cells = below.rows.emplace_back(f.size());
    for (std::size_t j = 0; j < f.size(); ++j) {
      std::string scratch;
      cells[j] = unquote(f[j], scratch);
      if (!scratch.empty() && cells[j].data() == scratch.data())
        cells[j] = below.unquoted.emplace_back(std::move(scratch));
    }
  }
  // The decision may depend on the rows below: it says when it must wait for more.
  below.complete = below.rows.size() == want || stopped || at_end;
  return below;
}

void CsvParser::set_up_encoder(bool header) {
  const TableSchema* model_schema = options_.schema;  // non-null: prediction
  const bool predicting = model_schema != nullptr;
  // The encoder refers to schema_: drop it before schema_ changes (begin() may run again).
  encoder_.reset();
  builder_.reset();
  observed_rows_ = 0;
  const bool model_columns = predicting && !model_schema->empty();
  TableRowEncoder::Mode mode = TableRowEncoder::Mode::Discovering;
  if (model_columns) {
    schema_ = *model_schema;
    schema_.id_name = layout_.id != TableLayout::npos && header ? names_[layout_.id] : std::string();
  } else if (learned_ && !predicting) {
    schema_ = *learned_;
    mode = TableRowEncoder::Mode::Training;
  } else {
    schema_ = numeric_schema(layout_, names_);
  }
  if (predicting) {
    // impute = false: missing cells the model has no means for stay NaN for the caller.
    mode = options_.impute || !schema_.fill.empty() ? TableRowEncoder::Mode::Prediction
                                                    : TableRowEncoder::Mode::Training;
  }
  // Prediction keeps the model's schema (with this file's id column); training hands the
  // learned one on (the caller completes it with the training means), except that under
  // --missing error|zero a schema with nothing to remember is dropped, as parse_csv always did.
  schema_in_chunks_ = model_columns ||
                      (!predicting && (options_.missing == MissingPolicy::Mean ||
                                       schema_worth_keeping(schema_, 0)));
  encoder_ = std::make_unique<TableRowEncoder>(layout_, schema_, options_.missing, source_, mode);
  if (learning_) builder_.emplace(layout_, names_, source_);
}

void CsvParser::parse_row(const std::vector<std::string_view>& f, std::uint64_t line_no) {
  if (f.size() != ncols_) {
    throw Error(where(source_, line_no) + std::to_string(f.size()) +
                (f.size() == 1 ? " field" : " fields") + ", expected " + std::to_string(ncols_) +
                " (ragged row)");
  }
  cells_of(f, cell_scratch_, cells_);
  if (builder_) {
    builder_->observe(cells_, line_no);
    ++observed_rows_;
    return;
  }
  if (labelled_) {
    const std::string_view name = cells_[layout_.label];
    if (is_missing_cell(name)) throw Error(where(source_, line_no, layout_.label + 1) + missing_label(name));
    chunk_.rows.labels.push_back(chunk_.interner.intern(name));
  }
  if (layout_.id != TableLayout::npos) chunk_.rows.row_ids.emplace_back(cells_[layout_.id]);
  const std::size_t at = chunk_.rows.features.size();
  chunk_.rows.features.resize(at + n_features_);
  encoder_->encode(cells_, line_no, chunk_.rows.features.data() + at);
  chunk_.rows.row_origin.push_back(line_no);
  ++chunk_.rows.n_rows;
}

void CsvParser::read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t) {
  if (!builder_) {
    // Reserve: at most one row per line (and max_rows), and every value takes at least
    // two bytes.
    const std::string_view rest = lines.rest();
    const std::size_t room = max_rows - std::min(max_rows, chunk_.rows.n_rows);
    const std::size_t est_rows = std::min<std::size_t>(
        room, static_cast<std::size_t>(std::count(rest.begin(), rest.end(), '\n')) + 1);
    const std::size_t est_values = std::min(est_rows * n_features_, rest.size() / 2 + ncols_);
    chunk_.rows.features.reserve(chunk_.rows.features.size() + est_values);
    const std::size_t est_lines = std::min(est_rows, rest.size() / 2 + 1);
    chunk_.rows.row_origin.reserve(chunk_.rows.row_origin.size() + est_lines);
    if (labelled_) chunk_.rows.labels.reserve(chunk_.rows.labels.size() + est_lines);
  }
  std::string_view line;
  while (chunk_.rows.n_rows < max_rows && lines.next(line)) {
    if (is_blank(line)) continue;
    split_line(line, delim_, fields_, source_, lines.line_number());
    parse_row(fields_, lines.line_number());
  }
}

Dataset CsvParser::take_chunk(std::uint64_t) {
  Dataset out = chunk_.take(schema_in_chunks_ ? &schema_ : nullptr);
  reset_chunk();
  return out;
}

}  // namespace

namespace detail {

std::unique_ptr<RowParser> make_csv_parser(const LoadOptions& options, const std::string& source) {
  return std::make_unique<CsvParser>(options, source);
}

}  // namespace detail

Dataset parse_csv(std::string_view text, const LoadOptions& options, const std::string& source) {
  Dataset ds;
  try {
    CsvParser parser(options, source);
    ds = parse_text(parser, text, options);
  } catch (const TextInNumericColumn&) {
    // Some feature column holds text: find the categorical columns and their categories
    // in one pass, then encode again with them.
    CsvParser learner(options, source);
    learner.learn_categories();
    LineScanner lines(text);
    learner.begin(lines, /*at_end=*/true);
    learner.read_rows(lines, std::numeric_limits<std::size_t>::max(), 0);
    TableSchema schema = learner.learned_schema();
    const std::uint64_t rows = learner.observed_rows();
    // One-hot blocks are the one place where a table's dense size can outgrow its text
    // (many text columns with many categories): bounded like sparse rows.
    const std::uint64_t limit = value_limit(options, text.size());
    if (rows * schema.n_features() > limit) {
      throw Error(source + ": " + std::to_string(rows) + " rows x " +
                  std::to_string(schema.n_features()) +
                  " features after one-hot encoding the text columns is too large to load (limit " +
                  std::to_string(limit) + " values for this input); leave text columns out with "
                  "--ignore-cols");
    }
    CsvParser parser(options, source);
    parser.use_schema(std::move(schema));
    ds = parse_text(parser, text, options);
  }
  // Training under --missing mean: the means of the whole file fill its missing cells.
  if (!options.schema && options.missing == MissingPolicy::Mean && options.impute)
    complete_table(ds, ImputationSums::of(ds));
  return ds;
}

}  // namespace flynn::io
