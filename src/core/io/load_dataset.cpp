// Format names and detection, label-column parsing, IDX labels discovery, load_dataset.
#include <filesystem>
#include <string>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/row_parser.hpp"
#include "core/io/text_scanner.hpp"

namespace flynn::io {

using namespace detail;
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string file_name_of(const std::string& path) { return fs::path(path).filename().string(); }

// "foo.gz" → "foo" (case-insensitive suffix).
std::string strip_gz(const std::string& name) {
  return ends_with(lower(name), ".gz") ? name.substr(0, name.size() - 3) : name;
}

// The conventional labels file name for an images file (same directory, same .gz
// spelling), or "" when the name does not follow the MNIST convention.
std::string conventional_labels_name(const std::string& images_path) {
  const fs::path p(images_path);
  const std::string name = p.filename().string();
  const bool gz = ends_with(lower(name), ".gz");
  const std::string base = strip_gz(name);
  const std::string lbase = lower(base);
  // "...images" + ("-" | ".") + "idx" + digits + "-ubyte"
  for (std::size_t pos = lbase.rfind("images"); pos != std::string::npos;
       pos = pos == 0 ? std::string::npos : lbase.rfind("images", pos - 1)) {
    std::size_t i = pos + 6;
    if (i >= lbase.size() || (lbase[i] != '-' && lbase[i] != '.')) continue;
    ++i;
    if (lbase.compare(i, 3, "idx") != 0) continue;
    std::size_t j = i + 3;
    while (j < lbase.size() && lbase[j] >= '0' && lbase[j] <= '9') ++j;
    if (j == i + 3 || lbase.compare(j, 6, "-ubyte") != 0) continue;
    std::string out = base.substr(0, pos) +
                      (base.compare(pos, 6, "IMAGES") == 0 ? "LABELS" : "labels") + base[pos + 6] +
                      base.substr(i, 3) + "1" + base.substr(j);
    if (gz) out += name.substr(name.size() - 3);
    return (p.parent_path() / out).string();
  }
  return "";
}

}  // namespace

Format parse_format(const std::string& name) {
  const std::string n = lower(name);
  if (n == "auto") return Format::Auto;
  if (n == "csv") return Format::Csv;
  if (n == "arff") return Format::Arff;
  if (n == "idx") return Format::Idx;
  if (n == "libsvm" || n == "svmlight") return Format::Libsvm;
  throw Error("unknown data format " + quote_text(name) +
              " (expected auto, csv, arff, idx, libsvm or svmlight)");
}

const char* format_name(Format f) {
  switch (f) {
    case Format::Auto: return "auto";
    case Format::Csv: return "csv";
    case Format::Arff: return "arff";
    case Format::Idx: return "idx";
    case Format::Libsvm: return "libsvm";
  }
  return "?";
}

Format detect_format(const std::string& path) {
  const std::string name = lower(strip_gz(file_name_of(path)));
  if (ends_with(name, ".arff")) return Format::Arff;
  if (ends_with(name, ".libsvm") || ends_with(name, ".svm") || ends_with(name, ".svmlight"))
    return Format::Libsvm;
  if (ends_with(name, ".idx")) return Format::Idx;
  for (std::size_t pos = name.find("idx"); pos != std::string::npos;
       pos = name.find("idx", pos + 1)) {
    std::size_t j = pos + 3;
    while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
    if (name.compare(j, 6, "-ubyte") == 0) return Format::Idx;
  }
  return Format::Csv;
}

LabelColumn LabelColumn::parse(const std::string& text) {
  LabelColumn lc;
  const std::string_view t = trim(text);
  if (t.empty())
    throw Error("empty label column (expected last, none, a column number or a column name)");
  if (iequals(t, "last")) return lc;
  if (iequals(t, "none")) {
    lc.kind = Kind::None;
    return lc;
  }
  long long k = 0;
  if (parse_int64(t, k)) {
    if (k == 0)
      throw Error(
          "label column 0: columns are numbered from 1 (negative numbers count from the end)");
    lc.kind = Kind::Index;
    lc.index = static_cast<long>(k);
    return lc;
  }
  lc.kind = Kind::Name;
  lc.name = std::string(t);
  return lc;
}

std::string idx_labels_path_for(const std::string& images_path) {
  const std::string conv = conventional_labels_name(images_path);
  if (conv.empty()) return "";
  const bool gz = ends_with(lower(conv), ".gz");
  const std::string other = gz ? conv.substr(0, conv.size() - 3) : conv + ".gz";
  std::error_code ec;
  for (const std::string& c : {conv, other})
    if (fs::is_regular_file(c, ec)) return c;
  return "";
}

namespace detail {

namespace {

bool looks_like_idx(std::string_view bytes) {
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0 || bytes[3] == 0) return false;
  switch (static_cast<unsigned char>(bytes[2])) {
    case 0x08:
    case 0x09:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x0E: return true;
    default: return false;
  }
}

}  // namespace

Format sniff_format(std::string_view head, bool at_end) {
  if (!at_end && head.size() < 4) throw NeedMoreText{};
  if (looks_like_idx(head)) return Format::Idx;
  // Only complete lines count while the text goes on: a partial line could still turn
  // out to be "@relation".
  if (!at_end) {
    const std::size_t nl = head.rfind('\n');
    head = nl == std::string_view::npos ? std::string_view{} : head.substr(0, nl + 1);
  }
  LineScanner lines(head);
  std::string_view line;
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    return istarts_with(t, "@relation") ? Format::Arff : Format::Csv;
  }
  if (!at_end) throw NeedMoreText{};
  return Format::Csv;
}

Format resolve_format(const std::string& path, Format requested, std::string_view head,
                      bool at_end) {
  if (requested != Format::Auto) return requested;
  const Format by_name = detect_format(path);
  return by_name == Format::Csv ? sniff_format(head, at_end) : by_name;
}

IdxImages load_idx(const std::string& path, std::string bytes, const LoadOptions& options) {
  std::string labels_path = options.idx_labels;
  if (labels_path.empty()) labels_path = idx_labels_path_for(path);
  std::string label_bytes;
  if (labels_path.empty()) {
    if (options.require_labels) {
      const std::string conv = conventional_labels_name(path);
      throw Error(path + ": no labels file for these IDX images" +
                  (conv.empty()
                       ? std::string(" (the name does not follow the MNIST convention)")
                       : " (looked for " + conv + " and its " +
                             (ends_with(lower(conv), ".gz") ? "uncompressed" : ".gz") +
                             " spelling)") +
                  "; name the labels file explicitly (load option idx_labels)");
    }
  } else {
    label_bytes = read_file(labels_path, options.max_input_bytes);
    if (label_bytes.empty()) throw Error(labels_path + ": empty file");
  }
  IdxImages idx(std::move(bytes), label_bytes, path, labels_path);
  if (options.expected_features && idx.n_features() != *options.expected_features) {
    throw Error(path + ": " + std::to_string(idx.n_features()) +
                " values per record, model expects " +
                std::to_string(*options.expected_features) + " features");
  }
  return idx;
}

}  // namespace detail

Dataset load_dataset(const std::string& path, const LoadOptions& options) {
  std::string bytes = read_file(path, options.max_input_bytes);
  const Format format = resolve_format(path, options.format, bytes, /*at_end=*/true);
  if (format == Format::Idx) {
    const IdxImages idx = load_idx(path, std::move(bytes), options);
    return idx.dataset(0, idx.n_rows());
  }
  // The whole-file parsers: beyond one chunk of rows, a table may need a pass that learns
  // its categorical columns (parse_csv) and the means that fill its missing cells.
  switch (format) {
    case Format::Csv: return parse_csv(bytes, options, path);
    case Format::Arff: return parse_arff(bytes, options, path);
    case Format::Libsvm: return parse_libsvm(bytes, options, path);
    case Format::Idx:
    case Format::Auto: break;
  }
  std::unique_ptr<RowParser> parser = make_row_parser(format, options, path);
  return parse_text(*parser, bytes, options);
}

}  // namespace flynn::io
