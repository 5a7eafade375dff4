#include "flynn/harness/manifest.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return out;
}

std::size_t parse_count(const std::string& text, const std::string& file, std::size_t line,
                        const char* column) {
  std::size_t v = 0;
  const auto* end = text.data() + text.size();
  const auto res = std::from_chars(text.data(), end, v);
  if (res.ec != std::errc() || res.ptr != end || v == 0)
    throw Error(fmt::format("{}:{}: column {}: '{}' is not a positive integer", file, line, column, text));
  return v;
}

std::string find_data_file(const fs::path& dir, const ManifestEntry& e) {
  for (const char* ext : {".csv.gz", ".csv"}) {
    const fs::path p = dir / (e.id() + ext);
    if (fs::is_regular_file(p)) return p.string();
  }
  std::string found;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir, ec)) {
    const std::string fname = item.path().filename().string();
    if (fname.rfind(e.did + "_", 0) == 0 && item.is_regular_file()) {
      if (!found.empty()) return "";  // ambiguous: better reported missing than guessed
      found = item.path().string();
    }
  }
  return found;
}

}  // namespace

Manifest read_manifest(const std::string& dir) {
  Manifest m;
  m.dir = dir;
  const fs::path file = fs::path(dir) / "MANIFEST.tsv";
  m.file = file.string();
  if (!fs::is_directory(dir)) throw Error(fmt::format("data directory {} does not exist", dir));
  std::ifstream in(file);
  if (!in)
    throw Error(fmt::format("{}: not found; the data directory must hold a MANIFEST.tsv with the "
                            "columns did, name, L, n, d (as ../shared/data/openml does)",
                            m.file));
  std::string line;
  std::size_t line_no = 0;
  std::map<std::string, std::size_t> col;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> f = split_tabs(line);
    if (col.empty()) {
      for (std::size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      for (const char* need : {"did", "name", "L", "n", "d"})
        if (!col.count(need))
          throw Error(fmt::format("{}:{}: the header has no '{}' column (need did, name, L, n, d, "
                                  "tab-separated)",
                                  m.file, line_no, need));
      continue;
    }
    std::size_t max_needed = 0;
    for (const char* need : {"did", "name", "L", "n", "d"}) max_needed = std::max(max_needed, col[need]);
    if (f.size() <= max_needed)
      throw Error(fmt::format("{}:{}: {} fields, the header needs at least {}", m.file, line_no,
                              f.size(), max_needed + 1));
    ManifestEntry e;
    e.line = line_no;
    e.did = f[col["did"]];
    e.name = f[col["name"]];
    if (e.did.empty() || e.name.empty())
      throw Error(fmt::format("{}:{}: empty did or name", m.file, line_no));
    e.classes = parse_count(f[col["L"]], m.file, line_no, "L");
    e.rows = parse_count(f[col["n"]], m.file, line_no, "n");
    e.columns = parse_count(f[col["d"]], m.file, line_no, "d");
    auto opt = [&](const char* name) {
      const auto it = col.find(name);
      return it != col.end() && it->second < f.size() ? f[it->second] : std::string();
    };
    e.source = opt("source");
    e.sha256 = opt("sha256");
    e.notes = opt("notes");
    e.path = find_data_file(dir, e);
    m.entries.push_back(std::move(e));
  }
  if (col.empty()) throw Error(fmt::format("{}: empty file", m.file));
  if (m.entries.empty()) throw Error(fmt::format("{}: lists no dataset", m.file));
  return m;
}

std::vector<ManifestEntry> select_entries(const Manifest& manifest, const std::string& list) {
  if (list.empty()) return manifest.entries;
  std::vector<std::string> items;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b != std::string::npos) items.push_back(item.substr(b, e - b + 1));
  }
  std::vector<bool> chosen(manifest.entries.size(), false);
  std::vector<std::string> unknown;
  for (const std::string& it : items) {
    bool any = false;
    for (std::size_t i = 0; i < manifest.entries.size(); ++i) {
      const ManifestEntry& e = manifest.entries[i];
      if (it == e.did || it == e.name || it == e.id()) chosen[i] = any = true;
    }
    if (!any) unknown.push_back(it);
  }
  if (!unknown.empty()) {
    std::string names;
    for (const auto& u : unknown) names += (names.empty() ? "" : ", ") + u;
    throw Error(fmt::format("--datasets: no dataset in {} matches {}", manifest.file, names));
  }
  std::vector<ManifestEntry> out;
  for (std::size_t i = 0; i < manifest.entries.size(); ++i)
    if (chosen[i]) out.push_back(manifest.entries[i]);
  return out;
}

}  // namespace flynn::harness
