// flynn info: what a model file holds.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::cli {

namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
  InputLimitOption input_limit;  ///< --max-input-bytes
  ModelMemoryOption model_memory;  ///< --max-model-memory
};

void run_info(const InfoOptions& o) {
  const std::uint64_t limit = o.input_limit.bytes();
  const std::string bytes = io::read_model_file(o.model, limit);
  // info builds only the count table, so only that is held to --max-model-memory; the
  // whole footprint is reported instead, with whether predict would accept it, so a
  // suspicious file can be inspected without being loaded.
  const io::ModelMemoryLimit memory = o.model_memory.limit(ModelUse::Inspect);
  const io::ModelContents mc = io::parse_model(bytes, o.model, limit, memory);
  // One thread's scratch, as the loader estimates it (io::ModelMemoryLimit).
  const ModelFootprint use = model_footprint(mc.config, mc.labels.size(), ModelUse::Predict, 1);
  const std::uint64_t memory_limit =
      memory.bytes ? memory.bytes : default_model_memory_limit(bytes.size());
  const ClassCounts& counts = mc.counts;
  const std::size_t L = mc.labels.size();
  nlohmann::json classes = nlohmann::json::array();
  for (std::size_t l = 0; l < L; ++l) {
    const std::uint32_t* c = counts.of_class(l);
    std::uint64_t nonzero = 0, max = 0;
    for (std::uint32_t i = 0; i < mc.config.m; ++i) {
      nonzero += c[i] != 0;
      max = std::max<std::uint64_t>(max, c[i]);
    }
    classes.push_back({{"label", mc.labels.name(l)},
                       {"rows", counts.rows_per_class()[l]},
                       {"nonzero_units", nonzero},
                       {"max_count", max}});
  }
  // The version this file was written in (parse_model accepted it), not the newest one.
  std::uint32_t file_version = 0;
  for (int i = 0; i < 4; ++i)
    file_version |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  nlohmann::json j = {{"model", o.model},
                      {"format_version", file_version},
                      {"file_bytes", bytes.size()},
                      {"crc32", fmt::format("{:08x}", io::model_checksum(bytes))},
                      {"config", config_json(mc.config)},
                      {"training_rows", counts.total_rows()},
                      {"classes", classes},
                      {"differentially_private", mc.provenance.differentially_private},
                      {"footprint",
                       {{"predict_bytes", use.total()},
                        {"counts_bytes", use.counts},
                        {"score_table_bytes", use.score_table},
                        {"lifting_matrix_bytes", use.lifting_matrix},
                        {"sparse_lists_bytes", use.sparse_lists},
                        {"feature_state_bytes", use.feature_state},
                        {"thread_scratch_bytes", use.thread_scratch},
                        {"limit_bytes", memory_limit},
                        {"within_limit", use.total() <= memory_limit},
                        {"build_operations", use.build_operations},
                        {"additions_per_row", use.additions_per_row}}}};
  if (mc.provenance.differentially_private)
    j["dp"] = {{"epsilon", mc.provenance.epsilon},
               {"T", mc.provenance.dp_T},
               {"parties", mc.provenance.dp_parties}};
  const TableSchema& table = mc.schema;
  if (!table.empty()) {
    nlohmann::json cols = nlohmann::json::array();
    for (std::size_t k = 0; k < table.columns.size(); ++k) {
      const TableColumn& c = table.columns[k];
      nlohmann::json col = {{"name", c.name}};
      if (c.categorical()) col["categories"] = c.categories;
      cols.push_back(col);
    }
    j["table"] = {{"named", table.named},          {"columns", cols},
                  {"label_column", table.label_name}, {"id_column", table.id_name},
                  {"fill_means", table.fill}};
  }
  if (o.json) {
    print_json(j);
    return;
  }
  std::cout << fmt::format("model:    {} ({}, format v{}, crc32 {})\n", o.model,
                           human_bytes(bytes.size()), file_version,
                           j["crc32"].get<std::string>())
            << fmt::format("config:   {}\n", mc.config.describe())
            << (mc.provenance.differentially_private
                    ? fmt::format("training: rows not released (differentially private release: "
                                  "epsilon={}, T={}, parties={})\n",
                                  mc.provenance.epsilon, mc.provenance.dp_T, mc.provenance.dp_parties)
                    : fmt::format("training: {} rows\n", counts.total_rows()))
            << fmt::format("classes:  {}\n", L)
            << fmt::format("memory:   an estimated {} to load and predict, {} the limit of {}{}\n",
                           use.describe(), use.total() <= memory_limit ? "within" : "ABOVE",
                           memory_size_text(memory_limit),
                           use.total() <= memory_limit ? "" : " (predict refuses it)")
            << fmt::format("work:     {} additions per row hashed (m × s), {} operations to "
                           "build\n",
                           use.additions_per_row, use.build_operations);
  if (!table.empty()) {
    std::size_t categorical = 0;
    for (const TableColumn& c : table.columns) categorical += c.categorical();
    std::cout << fmt::format("table:    {} feature columns ({}), {} categorical{}{}{}\n",
                             table.columns.size(), table.named ? "matched by name" : "by position",
                             categorical,
                             table.id_name.empty() ? "" : ", id column " + table.id_name,
                             table.label_name.empty() ? "" : ", label column " + table.label_name,
                             table.fill.empty() ? "" : ", missing cells filled with training means");
  }
  for (const auto& c : classes)
    std::cout << fmt::format("  {:<20} rows {:>9}  non-zero units {:>9}  max count {}\n",
                             c["label"].get<std::string>(), c["rows"].get<std::uint64_t>(),
                             c["nonzero_units"].get<std::uint64_t>(), c["max_count"].get<std::uint64_t>());
}

void add_info_command(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Show a model file's configuration, classes and counts");
  cmd->add_option("--model", o->model, "Model file")->required();
  o->input_limit.add_to(cmd);
  o->model_memory.add_to(cmd);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] { run_info(*o); });
}

const RegisterCommand registered(40, add_info_command);

}  // namespace

}  // namespace flynn::cli
