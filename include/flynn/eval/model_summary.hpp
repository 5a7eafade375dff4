#pragma once
// What a model file holds (`flynn info`): its configuration, classes and counts, format
// version, checksum, estimated memory footprint against the limit a reader would apply,
// DP provenance and table columns, as JSON and as the text the CLI prints.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "flynn/eval/report.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::eval {

/// A model file's summary: `flynn info --json`, and `flynn info`'s text (one line per
/// aspect, then one per class).
using ModelFileSummary = Report;

/// The summary of the model file at `path`. Only the count table is built, so only that is
/// held to `memory` (use ModelUse::Inspect); the whole footprint is reported instead, with
/// whether `predict` would accept it under `memory.bytes` (0: the default for the file's
/// size), so a suspicious file can be inspected without being loaded. Throws flynn::Error
/// as io::read_model_file and io::parse_model do.
ModelFileSummary model_file_summary(const std::string& path, std::uint64_t max_input_bytes,
                                    const io::ModelMemoryLimit& memory);

/// What a paper-half variant's second half hashes, as a model of `config` decides it from
/// `stats` (FlyConfig::paper_half_min_columns): JSON {raw_energy_columns, min_columns,
/// hashes} and a "paper half: …" line. Empty (json null, "") without the rule or statistics.
/// `flynn info` and `flynn train` report it.
Report paper_half_report(const FlyConfig& config, const FeatureStats& stats);

/// This machine's SIMD target and FlyHash kernels (flynn/simd.hpp, after any pin): JSON
/// {simd_target, simd_pinned, cpu_targets, block_kernels, block_rows, one_row_kernel,
/// one_row_kernel_name} and simd::kernel_report_text's lines. `flynn info` without a model
/// and `flynn bench` report it.
Report machine_kernels_report();

}  // namespace flynn::eval
