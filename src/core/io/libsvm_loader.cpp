// LIBSVM / svmlight parser (see loaders.hpp).
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/io/row_parser.hpp"
#include "core/io/text_scanner.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::io {

using namespace detail;

namespace {

// The LIBSVM parser (RowParser protocol, see row_parser.hpp). Rows are kept sparse while
// a chunk is read and expanded to dense when it is handed out, once its width is known:
// LoadOptions::expected_features, or else the largest index of the chunk (for a whole
// text, of the file).
class LibsvmParser final : public RowParser {
 public:
  LibsvmParser(const LoadOptions& options, std::string source)
      : options_(options),
        source_(std::move(source)),
        index_limit_(options.expected_features
                         ? static_cast<std::uint64_t>(*options.expected_features)
                         : std::numeric_limits<std::uint32_t>::max()) {}

  void begin(LineScanner&, bool) override {}
  bool has_labels() const override { return true; }
  std::size_t fixed_width() const override {
    return options_.expected_features ? *options_.expected_features : 0;
  }
  void read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) override;
  std::size_t chunk_rows() const override { return origin_.size(); }
  Dataset take_chunk(std::uint64_t max_values) override;
  void end() override {
    if (!any_content_) throw Error(source_ + ": empty file");
    if (total_rows_ == 0) throw Error(source_ + ": no data rows");
    if (widest_ == 0) throw Error(source_ + ": no feature in any row");
  }

 private:
  // One line's label and entries into the chunk; false for a line without a label (blank
  // or a comment). `line_max`: its largest index.
  bool parse_line(std::string_view line, std::uint64_t no, std::uint64_t& line_max);
  // An entry's 1-based index, after `prev` and within index_limit_.
  std::uint64_t parse_index(std::string_view key, std::uint64_t prev, std::uint64_t no, std::size_t field) const;

  const LoadOptions& options_;
  std::string source_;
  std::uint64_t index_limit_;
  bool any_content_ = false;
  std::uint64_t total_rows_ = 0;  // rows of all chunks handed out
  std::uint64_t widest_ = 0;      // the widest chunk handed out
  // The current chunk, sparse: entries of all its rows, expanded to dense by take_chunk.
  std::vector<std::uint32_t> idx_;
  std::vector<float> val_;
  std::vector<std::size_t> row_end_;  // end offset into idx_/val_ per row
  std::vector<std::uint64_t> origin_;
  std::vector<std::uint32_t> labels_;
  LabelInterner interner_;
  std::uint64_t max_index_ = 0;  // of the current chunk
};

bool is_separator(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

void LibsvmParser::read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t) {
  std::string_view line;
  while (origin_.size() < max_rows) {
    const LineScanner before = lines;  // to give a line back when the chunk is full
    if (!lines.next(line)) break;
    if (!is_blank(line)) any_content_ = true;
    if (const void* hash = std::memchr(line.data(), '#', line.size())) {
      line = line.substr(0, static_cast<std::size_t>(static_cast<const char*>(hash) - line.data()));
    }
    const std::uint64_t no = lines.line_number();
    const std::size_t entries_before = idx_.size();
    std::uint64_t line_max = 0;
    if (!parse_line(line, no, line_max)) continue;  // blank or comment-only line
    // Without a fixed width, a row that would widen the chunk past its dense budget
    // starts the next chunk instead.
    const std::uint64_t width = std::max(max_index_, line_max);
    if (!options_.expected_features && !origin_.empty() && (origin_.size() + 1) * width > chunk_cells_) {
      idx_.resize(entries_before);
      val_.resize(entries_before);
      labels_.pop_back();
      lines = before;
      break;
    }
    max_index_ = width;
    row_end_.push_back(idx_.size());
    origin_.push_back(no);
  }
}

bool LibsvmParser::parse_line(std::string_view line, std::uint64_t no, std::uint64_t& line_max) {
  std::size_t i = 0, field = 0;
  const std::size_t n = line.size();
  std::uint64_t prev = 0;
  bool has_label = false;
  while (true) {
    while (i < n && is_separator(line[i])) ++i;
    if (i >= n) break;
    std::size_t j = i;
    while (j < n && !is_separator(line[j])) ++j;
    const std::string_view tok = line.substr(i, j - i);
    i = j;
    ++field;
    const std::size_t colon = tok.find(':');
    if (field == 1) {
      if (colon != std::string_view::npos) {
        throw Error(where(source_, no, field) + "missing label: the line starts with " + quote_text(tok) +
                    " (expected 'label index:value ...')");
      }
      labels_.push_back(interner_.intern(tok));  // the interner normalises the spelling
      has_label = true;
      continue;
    }
    if (colon == std::string_view::npos)
      throw Error(where(source_, no, field) + quote_text(tok) + " is not an index:value pair");
    const std::string_view key = tok.substr(0, colon);
    const std::string_view value = tok.substr(colon + 1);
    if (key == "qid") continue;  // svmlight query id: irrelevant to classification
    const std::uint64_t k = parse_index(key, prev, no, field);
    prev = k;
    float v;
    const NumStatus st = parse_float(value, v);
    if (st != NumStatus::Ok) throw_bad_number(source_, no, field, value, st);
    if (v != 0.0f) {
      idx_.push_back(static_cast<std::uint32_t>(k - 1));
      val_.push_back(v);
    }
    if (k > line_max) line_max = k;
  }
  return has_label;
}

std::uint64_t LibsvmParser::parse_index(std::string_view key, std::uint64_t prev, std::uint64_t no,
                                        std::size_t field) const {
  std::uint64_t k = 0;
  bool ok = !key.empty();
  for (char c : key) {
    if (c < '0' || c > '9') {
      ok = false;
      break;
    }
    k = k * 10 + static_cast<std::uint64_t>(c - '0');
    if (k > std::numeric_limits<std::uint32_t>::max())
      throw Error(where(source_, no, field) + "feature index " + quote_text(key) + " is too large");
  }
  if (!ok) throw Error(where(source_, no, field) + quote_text(key) + " is not a feature index");
  if (k == 0) throw Error(where(source_, no, field) + "feature index 0: indices are 1-based");
  if (k <= prev) {
    throw Error(where(source_, no, field) + "feature index " + std::to_string(k) +
                (k == prev ? " is repeated" : " after " + std::to_string(prev)) +
                ": indices must be strictly ascending");
  }
  if (k > index_limit_) {
    throw Error(where(source_, no, field) + "feature index " + std::to_string(k) + " exceeds the model's " +
                std::to_string(index_limit_) + " features");
  }
  return k;
}

Dataset LibsvmParser::take_chunk(std::uint64_t max_values) {
  Dataset ds;
  ds.source = source_;
  ds.n_rows = origin_.size();
  ds.n_features = options_.expected_features ? *options_.expected_features
                                             : static_cast<std::size_t>(max_index_);
  const std::uint64_t cells = checked_cells(ds.n_rows, ds.n_features, max_values, source_);
  ds.features.assign(static_cast<std::size_t>(cells), 0.0f);
  std::size_t e = 0;
  for (std::size_t r = 0; r < ds.n_rows; ++r) {
    float* row = ds.row(r);
    for (; e < row_end_[r]; ++e) row[idx_[e]] = val_[e];
  }
  ds.has_labels = true;
  ds.labels = std::move(labels_);
  ds.classes = interner_.finish(ds.labels);
  ds.row_origin = std::move(origin_);
  total_rows_ += ds.n_rows;
  if (ds.n_features > widest_) widest_ = ds.n_features;
  idx_.clear();
  val_.clear();
  row_end_.clear();
  origin_.clear();
  labels_.clear();
  interner_ = LabelInterner{};
  max_index_ = 0;
  return ds;
}

}  // namespace

namespace detail {

std::unique_ptr<RowParser> make_libsvm_parser(const LoadOptions& options,
                                              const std::string& source) {
  return std::make_unique<LibsvmParser>(options, source);
}

}  // namespace detail

Dataset parse_libsvm(std::string_view text, const LoadOptions& options, const std::string& source) {
  LibsvmParser parser(options, source);
  return parse_text(parser, text, options);
}

}  // namespace flynn::io
