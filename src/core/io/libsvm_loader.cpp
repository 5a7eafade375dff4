// LIBSVM / svmlight parser (see loaders.hpp).
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/text_scanner.hpp"

namespace flynn::io {

using namespace detail;

Dataset parse_libsvm(std::string_view text, const LoadOptions& options, const std::string& source) {
  LineScanner lines(text);
  std::string_view line;

  // Sparse entries of all rows, expanded to dense once n_features is known.
  std::vector<std::uint32_t> idx;
  std::vector<float> val;
  std::vector<std::size_t> row_end;  // end offset into idx/val per row
  std::vector<std::uint64_t> origin;
  std::vector<std::uint32_t> labels;
  LabelInterner interner;
  std::uint64_t max_index = 0;
  const std::uint64_t index_limit = options.expected_features
                                        ? static_cast<std::uint64_t>(*options.expected_features)
                                        : std::numeric_limits<std::uint32_t>::max();
  bool any_content = false;

  auto is_sep = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; };
  while (lines.next(line)) {
    if (!is_blank(line)) any_content = true;
    if (const void* hash = std::memchr(line.data(), '#', line.size())) {
      line = line.substr(0, static_cast<std::size_t>(static_cast<const char*>(hash) - line.data()));
    }
    const std::uint64_t no = lines.line_number();
    std::size_t i = 0, field = 0;
    const std::size_t n = line.size();
    std::uint64_t prev = 0;
    bool has_label = false;
    while (true) {
      while (i < n && is_sep(line[i])) ++i;
      if (i >= n) break;
      std::size_t j = i;
      while (j < n && !is_sep(line[j])) ++j;
      const std::string_view tok = line.substr(i, j - i);
      i = j;
      ++field;
      const std::size_t colon = tok.find(':');
      if (field == 1) {
        if (colon != std::string_view::npos) {
          throw Error(where(source, no, field) + "missing label: the line starts with " +
                      quote_text(tok) + " (expected 'label index:value ...')");
        }
        labels.push_back(interner.intern(tok));  // the interner normalises the spelling
        has_label = true;
        continue;
      }
      if (colon == std::string_view::npos) {
        throw Error(where(source, no, field) + quote_text(tok) + " is not an index:value pair");
      }
      const std::string_view key = tok.substr(0, colon);
      const std::string_view value = tok.substr(colon + 1);
      if (key == "qid") continue;  // svmlight query id: irrelevant to classification
      std::uint64_t k = 0;
      bool ok = !key.empty();
      for (char c : key) {
        if (c < '0' || c > '9') {
          ok = false;
          break;
        }
        k = k * 10 + static_cast<std::uint64_t>(c - '0');
        if (k > std::numeric_limits<std::uint32_t>::max()) {
          throw Error(where(source, no, field) + "feature index " + quote_text(key) +
                      " is too large");
        }
      }
      if (!ok) throw Error(where(source, no, field) + quote_text(key) + " is not a feature index");
      if (k == 0) throw Error(where(source, no, field) + "feature index 0: indices are 1-based");
      if (k <= prev) {
        throw Error(where(source, no, field) + "feature index " + std::to_string(k) +
                    (k == prev ? " is repeated" : " after " + std::to_string(prev)) +
                    ": indices must be strictly ascending");
      }
      if (k > index_limit) {
        throw Error(where(source, no, field) + "feature index " + std::to_string(k) +
                    " exceeds the model's " + std::to_string(index_limit) + " features");
      }
      prev = k;
      float v;
      const NumStatus st = parse_float(value, v);
      if (st != NumStatus::Ok) throw_bad_number(source, no, field, value, st);
      if (v != 0.0f) {
        idx.push_back(static_cast<std::uint32_t>(k - 1));
        val.push_back(v);
      }
      if (k > max_index) max_index = k;
    }
    if (!has_label) continue;  // blank or comment-only line
    row_end.push_back(idx.size());
    origin.push_back(no);
  }
  if (!any_content) throw Error(source + ": empty file");
  if (origin.empty()) throw Error(source + ": no data rows");

  Dataset ds;
  ds.source = source;
  ds.n_rows = origin.size();
  ds.n_features =
      options.expected_features ? *options.expected_features : static_cast<std::size_t>(max_index);
  if (ds.n_features == 0) throw Error(source + ": no feature in any row");
  const std::uint64_t limit = options.max_values ? options.max_values : sparse_value_limit(text.size());
  const std::uint64_t cells = checked_cells(ds.n_rows, ds.n_features, limit, source);
  ds.features.assign(static_cast<std::size_t>(cells), 0.0f);
  std::size_t e = 0;
  for (std::size_t r = 0; r < ds.n_rows; ++r) {
    float* row = ds.row(r);
    for (; e < row_end[r]; ++e) row[idx[e]] = val[e];
  }
  ds.has_labels = true;
  ds.labels = std::move(labels);
  ds.classes = interner.finish(ds.labels);
  ds.row_origin = std::move(origin);
  return ds;
}

}  // namespace flynn::io
