#include "flynn/eval/model_summary.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "flynn/eval/study_io.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/model_footprint.hpp"
#include "flynn/simd.hpp"

namespace flynn::eval {

namespace {

// How the model turns scores into probabilities (and so chooses its class), and the
// missing-value policy its predictions apply.
Report calibration_report(const io::ModelContents& mc) {
  const Calibration& c = mc.calibration;
  Report r;
  r.json = {{"temperature", c.temperature},
            {"prior_weight", c.prior_weight},
            {"source", calibration_source_name(c.source)},
            {"rows", c.rows}};
  std::string how;
  switch (c.source) {
    case CalibrationSource::LeaveOneOut:
      how = fmt::format("fitted on the leave-one-out scores of {} training rows", c.rows);
      break;
    case CalibrationSource::Given: how = "set by the caller (not fitted by this build)"; break;
    case CalibrationSource::Public:
      how = "from the release's public parameters only (differentially private: no row was scored, so the "
            "probabilities are not calibrated on data)";
      break;
    case CalibrationSource::Default: how = "none fitted: the default"; break;
  }
  r.text = fmt::format("probabilities: t = {:.4g}, prior weight {:g}; {}; predict returns the class of highest "
                       "probability\n",
                       c.temperature, c.prior_weight, how);
  if (mc.missing_policy) {
    r.json["missing"] = missing_policy_name(*mc.missing_policy);
    r.text += fmt::format("missing:  cells filled as in training (--missing {}) unless prediction says otherwise\n",
                          missing_policy_name(*mc.missing_policy));
  }
  return r;
}

// Each class's rows and the fullness of its counts: the units first, then (with pairs) the
// pair cells after them, so a user sees how full the pair block is (puma32H: every cell;
// fullness alone does not predict a loss, docs/design/defaults.md, "The paper half").
nlohmann::json classes_json(const io::ModelContents& mc) {
  const ClassCounts& counts = mc.counts;
  nlohmann::json classes = nlohmann::json::array();
  for (std::size_t l = 0; l < mc.labels.size(); ++l) {
    const std::uint32_t* c = counts.of_class(l);
    const auto count_range = [&](std::uint64_t begin, std::uint64_t end) {
      std::uint64_t nonzero = 0, max = 0;
      for (std::uint64_t i = begin; i < end; ++i) {
        nonzero += c[i] != 0;
        max = std::max<std::uint64_t>(max, c[i]);
      }
      return std::pair{nonzero, max};
    };
    const auto [nonzero, max] = count_range(0, mc.config.m);
    nlohmann::json cls = {{"label", mc.labels.name(l)},
                          {"rows", counts.rows_per_class()[l]},
                          {"nonzero_units", nonzero},
                          {"max_count", max}};
    if (mc.config.pairs != 0) {
      const auto [pair_nonzero, pair_max] = count_range(mc.config.m, mc.config.cells());
      cls["nonzero_pair_cells"] = pair_nonzero;
      cls["max_pair_count"] = pair_max;
    }
    classes.push_back(std::move(cls));
  }
  return classes;
}

nlohmann::json footprint_json(const ModelFootprint& use, std::uint64_t memory_limit) {
  return {{"predict_bytes", use.total()},
          {"counts_bytes", use.counts},
          {"score_table_bytes", use.score_table},
          {"lifting_matrix_bytes", use.lifting_matrix},
          {"sparse_lists_bytes", use.sparse_lists},
          {"one_row_plan_bytes", use.one_row_plan},
          {"feature_state_bytes", use.feature_state},
          {"thread_scratch_bytes", use.thread_scratch},
          {"limit_bytes", memory_limit},
          {"within_limit", use.total() <= memory_limit},
          {"build_operations", use.build_operations},
          {"additions_per_row", use.additions_per_row}};
}

nlohmann::json table_json(const TableSchema& table) {
  nlohmann::json cols = nlohmann::json::array();
  for (const TableColumn& c : table.columns) {
    nlohmann::json col = {{"name", c.name}};
    if (c.categorical()) col["categories"] = c.categories;
    cols.push_back(col);
  }
  return {{"named", table.named},
          {"columns", cols},
          {"label_column", table.label_name},
          {"id_column", table.id_name},
          {"fill_means", table.fill}};
}

std::string table_text(const TableSchema& table) {
  std::size_t categorical = 0;
  for (const TableColumn& c : table.columns) categorical += c.categorical();
  return fmt::format("table:    {} feature columns ({}), {} categorical{}{}{}\n", table.columns.size(),
                     table.named ? "matched by name" : "by position", categorical,
                     table.id_name.empty() ? "" : ", id column " + table.id_name,
                     table.label_name.empty() ? "" : ", label column " + table.label_name,
                     table.fill.empty() ? "" : ", missing cells filled with training means");
}

std::string classes_text(const nlohmann::json& classes) {
  std::string text;
  for (const auto& c : classes) {
    text += fmt::format("  {:<20} rows {:>9}  non-zero units {:>9}  max count {}", c["label"].get<std::string>(),
                        c["rows"].get<std::uint64_t>(), c["nonzero_units"].get<std::uint64_t>(),
                        c["max_count"].get<std::uint64_t>());
    if (c.contains("nonzero_pair_cells"))
      text += fmt::format("  non-zero pair cells {:>9}  max pair count {}",
                          c["nonzero_pair_cells"].get<std::uint64_t>(), c["max_pair_count"].get<std::uint64_t>());
    text += "\n";
  }
  return text;
}

}  // namespace

ModelFileSummary model_file_summary(const std::string& path, std::uint64_t max_input_bytes,
                                    const io::ModelMemoryLimit& memory) {
  const std::string bytes = io::read_model_file(path, max_input_bytes);
  const io::ModelContents mc = io::parse_model(bytes, path, max_input_bytes, memory);
  // One thread's scratch, as the loader estimates it (io::ModelMemoryLimit).
  const ModelFootprint use = model_footprint(mc.config, mc.labels.size(), ModelUse::Predict, 1);
  const std::uint64_t memory_limit = memory.bytes ? memory.bytes : default_model_memory_limit(bytes.size());
  const bool within = use.total() <= memory_limit;
  const nlohmann::json classes = classes_json(mc);
  const std::string crc32 = fmt::format("{:08x}", io::model_checksum(bytes));
  nlohmann::json j = {{"model", path},
                      {"format_version", mc.format_version},
                      {"file_bytes", bytes.size()},
                      {"crc32", crc32},
                      {"config", config_json(mc.config)},
                      {"training_rows", mc.counts.total_rows()},
                      {"classes", classes},
                      {"differentially_private", mc.provenance.differentially_private},
                      {"footprint", footprint_json(use, memory_limit)}};
  // What a paper-half variant's second half hashes, as the loaded model decides it.
  const Report paper_half = paper_half_report(mc.config, mc.stats);
  if (!paper_half.json.is_null()) j["paper_half"] = paper_half.json;
  const Report calibration = calibration_report(mc);
  j["calibration"] = calibration.json;
  if (mc.provenance.differentially_private)
    j["dp"] = {{"epsilon", mc.provenance.epsilon}, {"T", mc.provenance.dp_T}, {"parties", mc.provenance.dp_parties}};
  if (!mc.schema.empty()) j["table"] = table_json(mc.schema);

  std::string text = fmt::format("model:    {} ({}, format v{}, crc32 {})\n", path, human_bytes(bytes.size()),
                                 mc.format_version, crc32) +
                     fmt::format("config:   {}\n", mc.config.describe());
  text += mc.provenance.differentially_private
              ? fmt::format("training: rows not released (differentially private release: "
                            "epsilon={}, T={}, parties={})\n",
                            mc.provenance.epsilon, mc.provenance.dp_T, mc.provenance.dp_parties)
              : fmt::format("training: {} rows\n", mc.counts.total_rows());
  text += paper_half.text;
  text += calibration.text;
  text += fmt::format("classes:  {}\n", mc.labels.size());
  text += fmt::format("memory:   an estimated {} to load and predict, {} the limit of {}{}\n", use.describe(),
                      within ? "within" : "ABOVE", memory_size_text(memory_limit),
                      within ? "" : " (predict refuses it)");
  text += fmt::format("work:     {} additions per row hashed (m × s), {} operations to build\n",
                      use.additions_per_row, use.build_operations);
  if (!mc.schema.empty()) text += table_text(mc.schema);
  if (mc.config.pairs != 0)
    text += fmt::format("pairs:    {} pair cells per class after the {} units\n", mc.config.pair_cells(),
                        mc.config.m);
  text += classes_text(classes);
  return {std::move(j), std::move(text)};
}

Report paper_half_report(const FlyConfig& config, const FeatureStats& stats) {
  Report r;
  if (config.paper_half_min_columns == 0 || stats.empty()) return r;
  const double columns = raw_energy_columns(stats);
  const bool raw = paper_half_hashes_raw_row(config, stats);
  r.json = {{"raw_energy_columns", columns},
            {"min_columns", config.paper_half_min_columns},
            {"hashes", raw ? "raw row" : "standardised row"}};
  // With a value transform the statistics, and so the measure, are of the transformed values.
  const std::string rows = config.value_transform == ValueTransform::None
                               ? std::string("raw rows'")
                               : fmt::format("{}-transformed rows'", value_transform_name(config.value_transform));
  r.text = fmt::format("paper half: hashes the {} (the {} energy spreads over {:.1f} columns, {} {})\n",
                       raw ? "raw row" : "row as the first half does", rows, columns, raw ? "at least" : "fewer than",
                       config.paper_half_min_columns);
  return r;
}

Report machine_kernels_report() {
  const simd::KernelReport r = simd::kernel_report();
  return {{{"simd_target", r.target},
           {"simd_pinned", r.pinned},
           {"cpu_targets", r.cpu_targets},
           {"block_kernels", true},
           {"block_rows", r.block_rows},
           {"one_row_kernel", r.one_row},
           {"one_row_kernel_name", r.one_row_kernel}},
          simd::kernel_report_text(r)};
}

}  // namespace flynn::eval
