#pragma once
// The dataset manifest of an evaluation data directory (../shared/data/openml/MANIFEST.tsv):
// a tab-separated table with a header row naming at least the columns
//   did   name   L   n   d
// (OpenML id, name, classes, rows, columns INCLUDING the class column) and optionally
// source, sha256, notes. Each dataset's file is <did>_<name>.csv.gz (or .csv) beside it:
// a CSV with a header row and the class in the last column.
#include <cstddef>
#include <string>
#include <vector>
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

struct ManifestEntry {
  std::string did;           ///< OpenML dataset id, as written
  std::string name;          ///< OpenML name
  std::size_t classes = 0;   ///< L
  std::size_t rows = 0;      ///< n
  std::size_t columns = 0;   ///< d of the manifest: features + the class column
  std::string source, sha256, notes;  ///< optional columns ("" when absent)
  std::string path;          ///< the data file found for it, "" when none exists
  std::size_t line = 0;      ///< 1-based line in MANIFEST.tsv

  /// "<did>_<name>": the dataset's key in reports and result files.
  std::string id() const { return did + "_" + name; }
  /// Feature columns: columns − 1.
  std::size_t features() const { return columns > 0 ? columns - 1 : 0; }
};

struct Manifest {
  std::string dir;                     ///< the data directory
  std::string file;                    ///< dir/MANIFEST.tsv
  std::vector<ManifestEntry> entries;  ///< in file order
};

/// Reads dir/MANIFEST.tsv and locates each entry's file: dir/<did>_<name>.csv.gz, then
/// .csv, then the only file named "<did>_*" (entries without a file keep path = "" and are
/// reported as missing by the caller). Throws flynn::Error with the file name (and line)
/// when the directory or manifest is missing, a required column is absent, a row has too
/// few fields, a count is not a positive integer, or the manifest lists no dataset.
Manifest read_manifest(const std::string& dir);

/// The entries named in a comma-separated list, in manifest order; an item matches an
/// entry's did, name or id (<did>_<name>), so "madelon", "1485" and "1485_madelon" all
/// select the same entry (a name shared by several entries selects all of them). An
/// empty list selects everything. Throws flynn::Error naming the items that match nothing.
std::vector<ManifestEntry> select_entries(const Manifest& manifest, const std::string& list);

}  // namespace flynn::harness
