#pragma once
// What `flynn update`, `flynn forget` and `flynn merge` share: how their rows are read, and
// writing the edited model with the same report in each.
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "flynn/classifier.hpp"
#include "flynn/io/train_file.hpp"

namespace flynn::cli {

/// How update and forget read their --data (io::learn_file, io::forget_file): the data
/// flags, progress on `bar`, and the flag that adds classes named in the refusal of a label
/// the model lacks.
io::FileEditOptions edit_options(const DataOptions& format, const ProgressBar& bar);

/// Writes `model` atomically to `out` (nothing is written when an earlier step threw),
/// then prints `report` (plus the model's classes, rows per class and file size) as JSON
/// with --json, or as a few lines of text.
void save_and_report(const FlyNN& model, const std::string& out, nlohmann::json report,
                     const CommonOptions& common);

}  // namespace flynn::cli
