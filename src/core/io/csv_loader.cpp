// CSV parser (see loaders.hpp for the accepted dialect).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/row_parser.hpp"
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

// A numeric field: unquoted and trimmed inside the quotes as well.
std::string_view number_text(std::string_view f) {
  return is_quoted(f) ? trim(f.substr(1, f.size() - 2)) : f;
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

// The CSV parser (RowParser protocol, see row_parser.hpp). begin() decides the delimiter,
// the column count, the label column and whether line 1 is a header; read_rows() parses
// data lines.
class CsvParser final : public RowParser {
 public:
  CsvParser(const LoadOptions& options, std::string source)
      : options_(options), source_(std::move(source)) {}

  void begin(LineScanner& lines, bool at_end) override;
  bool has_labels() const override { return labelled_; }
  std::size_t fixed_width() const override { return n_features_; }
  void read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) override;
  std::size_t chunk_rows() const override { return chunk_.n_rows; }
  Dataset take_chunk(std::uint64_t max_values) override;
  void end() override {
    if (total_rows_ == 0) throw Error(source_ + ": no data rows (only a header line)");
  }

 private:
  // Appends one data row (its fields split) to the chunk.
  void parse_row(const std::vector<std::string_view>& f, std::uint64_t line_no);
  void reset_chunk();

  const LoadOptions& options_;
  std::string source_;
  char delim_ = ',';
  std::size_t ncols_ = 0;
  std::size_t label_idx_ = 0;  // the label column's 0-based index; ncols_ when unlabelled
  bool labelled_ = false;
  std::size_t n_features_ = 0;
  std::uint64_t total_rows_ = 0;  // rows of all chunks handed out
  Dataset chunk_;
  LabelInterner interner_;
  std::vector<std::string_view> fields_;
  std::string scratch_;
};

void CsvParser::reset_chunk() {
  chunk_ = Dataset{};
  chunk_.source = source_;
  chunk_.n_features = n_features_;
  chunk_.has_labels = labelled_;
  interner_ = LabelInterner{};
}

void CsvParser::begin(LineScanner& lines, bool at_end) {
  using Kind = LabelColumn::Kind;
  const std::string& source = source_;
  const LoadOptions& options = options_;
  std::string_view line;

  // First non-blank line: decides the delimiter, the column count and the header.
  bool found = false;
  while (lines.next(line)) {
    if (!is_blank(line)) {
      found = true;
      break;
    }
  }
  if (!found) {
    if (!at_end) throw NeedMoreText{};
    throw Error(source + ": empty file");
  }
  const std::uint64_t first_line_no = lines.line_number();
  const std::string_view first_line = line;

  const char delim = options.delimiter ? options.delimiter : detect_delimiter(first_line);
  std::vector<std::string_view> first;
  split_line(first_line, delim, first, source, first_line_no);
  const std::size_t ncols = first.size();

  const LabelColumn& lc = options.label_column;
  bool labelled = lc.kind != Kind::None;
  if (options.expected_features) {
    const std::size_t d = *options.expected_features;
    if (ncols == d) {
      if (lc.kind == Kind::Index || lc.kind == Kind::Name) {
        throw Error(where(source, first_line_no) + std::to_string(ncols) +
                    " columns, the model expects " + std::to_string(d) +
                    " features: no room for the label column that was given");
      }
      labelled = false;
    } else if (ncols == d + 1 && lc.kind != Kind::None) {
      labelled = true;
    } else {
      throw Error(where(source, first_line_no) + std::to_string(ncols) +
                  " columns, model expects " + std::to_string(d) + " features" +
                  (lc.kind == Kind::None
                       ? std::string(" (label column 'none')")
                       : " (or " + std::to_string(d + 1) + " with a label column)"));
    }
  }
  if (labelled && ncols < 2) {
    throw Error(where(source, first_line_no) + "1 column (delimiter " + delimiter_name(delim) +
                "): need at least one feature column besides the label column");
  }

  // The label column's 0-based index; ncols when unlabelled. Name is resolved after the
  // header has been identified.
  std::size_t label_idx = ncols;
  if (labelled) {
    if (lc.kind == Kind::Last) {
      label_idx = ncols - 1;
    } else if (lc.kind == Kind::Index) {
      const long k = lc.index;
      const long n = static_cast<long>(ncols);
      if (k == 0 || k > n || k < -n) {
        throw Error(where(source, first_line_no) + "label column " + std::to_string(k) +
                    " is out of range (" + std::to_string(ncols) + " columns)");
      }
      label_idx = static_cast<std::size_t>(k > 0 ? k - 1 : n + k);
    }
  }

  // Header decision.
  bool header = false;
  if (lc.kind == Kind::Name && labelled) {
    if (options.header == LoadOptions::Header::No) {
      throw Error(source + ": the label column is given by name (" + quote_text(lc.name) +
                  ") but the file is read without a header");
    }
    header = true;
  } else if (options.header == LoadOptions::Header::Yes) {
    header = true;
  } else if (options.header == LoadOptions::Header::Auto) {
    bool feature_text = false, label_text = false;
    float tmp;
    for (std::size_t j = 0; j < ncols; ++j) {
      const bool numeric = looks_numeric(parse_float(number_text(first[j]), tmp));
      if (numeric) continue;
      if (j == label_idx)
        label_text = true;
      else
        feature_text = true;
    }
    header = feature_text;
    if (!feature_text && label_text) {
      // "1,2,class" vs "1,2,cat": a header iff the next row's label is a number.
      LineScanner peek = lines;
      std::string_view next;
      std::vector<std::string_view> f2;
      bool peeked = false;
      while (peek.next(next)) {
        if (is_blank(next)) continue;
        split_line(next, delim, f2, source, peek.line_number());
        header =
            label_idx < f2.size() && looks_numeric(parse_float(number_text(f2[label_idx]), tmp));
        peeked = true;
        break;
      }
      if (!peeked && !at_end) throw NeedMoreText{};
    }
  }

  std::string& scratch = scratch_;
  if (labelled && lc.kind == Kind::Name) {
    std::size_t hits = 0;
    for (std::size_t j = 0; j < ncols; ++j) {
      if (unquote(first[j], scratch) == lc.name) {
        if (hits++ == 0) label_idx = j;
      }
    }
    if (hits == 0) {
      throw Error(where(source, first_line_no) + "no column named " + quote_text(lc.name) +
                  " in the header");
    }
    if (hits > 1) {
      throw Error(where(source, first_line_no) + "column name " + quote_text(lc.name) +
                  " appears " + std::to_string(hits) + " times in the header");
    }
  }

  delim_ = delim;
  ncols_ = ncols;
  label_idx_ = label_idx;
  labelled_ = labelled;
  n_features_ = labelled ? ncols - 1 : ncols;
  total_rows_ = 0;
  reset_chunk();
  fields_.reserve(ncols);
  if (!header) parse_row(first, first_line_no);
}

void CsvParser::parse_row(const std::vector<std::string_view>& f, std::uint64_t line_no) {
  if (f.size() != ncols_) {
    throw Error(where(source_, line_no) + std::to_string(f.size()) +
                (f.size() == 1 ? " field" : " fields") + ", expected " + std::to_string(ncols_) +
                " (ragged row)");
  }
  for (std::size_t j = 0; j < ncols_; ++j) {
    if (j == label_idx_) {
      const std::string_view name = unquote(f[j], scratch_);
      if (name.empty()) throw Error(where(source_, line_no, j + 1) + "empty label");
      chunk_.labels.push_back(interner_.intern(name));
      continue;
    }
    const std::string_view t = number_text(f[j]);
    float v;
    const NumStatus st = parse_float(t, v);
    if (st != NumStatus::Ok) throw_bad_number(source_, line_no, j + 1, t, st);
    chunk_.features.push_back(v);
  }
  chunk_.row_origin.push_back(line_no);
  ++chunk_.n_rows;
}

void CsvParser::read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t) {
  {
    // Reserve: at most one row per line (and max_rows), and every value takes at least
    // two bytes.
    const std::string_view rest = lines.rest();
    const std::size_t room = max_rows - std::min(max_rows, chunk_.n_rows);
    const std::size_t est_rows = std::min<std::size_t>(
        room, static_cast<std::size_t>(std::count(rest.begin(), rest.end(), '\n')) + 1);
    const std::size_t est_values = std::min(est_rows * n_features_, rest.size() / 2 + ncols_);
    chunk_.features.reserve(chunk_.features.size() + est_values);
    const std::size_t est_lines = std::min(est_rows, rest.size() / 2 + 1);
    chunk_.row_origin.reserve(chunk_.row_origin.size() + est_lines);
    if (labelled_) chunk_.labels.reserve(chunk_.labels.size() + est_lines);
  }
  std::string_view line;
  while (chunk_.n_rows < max_rows && lines.next(line)) {
    if (is_blank(line)) continue;
    split_line(line, delim_, fields_, source_, lines.line_number());
    parse_row(fields_, lines.line_number());
  }
}

Dataset CsvParser::take_chunk(std::uint64_t) {
  if (labelled_) chunk_.classes = interner_.finish(chunk_.labels);
  total_rows_ += chunk_.n_rows;
  Dataset out = std::move(chunk_);
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
  CsvParser parser(options, source);
  return parse_text(parser, text, options);
}

}  // namespace flynn::io
