#pragma once
// What `flynn update`, `flynn forget` and `flynn merge` share: reading labelled rows for
// an existing model, and writing the edited model with the same report in each.
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "flynn/classifier.hpp"

namespace flynn::cli {

/// Loads `path` as labelled rows for `model`: the model's d features per row plus a label
/// column. Throws flynn::Error naming the file when the rows have no labels.
Dataset load_labelled_rows(const FlyNN& model, const std::string& path, const DataOptions& format,
                           const char* purpose);

/// Writes `model` atomically to `out` (nothing is written when an earlier step threw),
/// then prints `report` (plus the model's classes, rows per class and file size) as JSON
/// with --json, or as a few lines of text.
void save_and_report(const FlyNN& model, const std::string& out, nlohmann::json report,
                     const CommonOptions& common);

}  // namespace flynn::cli
