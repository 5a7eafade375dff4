// flynn schema: writes a public table schema (flynn/federated/public_schema.hpp) from a
// public sample of the table — what the federated commands' --schema reads, so that under
// DP the categories and d come from public knowledge instead of the parties' rows.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/public_schema.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::cli {

namespace {

struct SchemaOptions {
  std::string data, out;
  bool fill_means = false, quiet = false;
  DataOptions format;
};

void schema_command(const SchemaOptions& o) {
  // Missing cells stay NaN: the sample's own means are fill values only on request.
  io::LoadOptions load = o.format.load_options();
  load.impute = false;
  const Dataset sample = io::load_dataset(o.data, load);
  const federated::PublicSchema schema = federated::public_schema_of(sample, o.fill_means);
  const std::string text = federated::public_schema_json(schema);
  // Read back before writing: the file must be one the federated commands accept.
  federated::parse_public_schema(text, o.out);
  io::write_file_atomic(o.out, text);
  if (o.quiet) return;
  const TableSchema& t = schema.table;
  if (t.empty()) {
    std::cout << fmt::format("schema: positional data, d = {}\n", schema.features);
  } else {
    std::size_t categorical = 0;
    for (const TableColumn& c : t.columns) categorical += c.categorical();
    std::cout << fmt::format("schema: {} feature columns ({}), {} categorical, d = {}{}{}{}\n",
                             t.columns.size(), t.named ? "matched by name" : "by position", categorical,
                             schema.features, t.label_name.empty() ? "" : ", label column " + t.label_name,
                             t.id_name.empty() ? "" : ", id column " + t.id_name,
                             t.fill.empty() ? "" : ", fill values (the sample's means)");
    for (std::size_t k = 0; k < t.columns.size(); ++k)
      if (t.columns[k].categorical())
        std::cout << fmt::format("  {}: {} categories\n",
                                 t.named ? t.columns[k].name : fmt::format("column {}", k + 1),
                                 t.columns[k].categories.size());
  }
  std::cout << fmt::format("digest: {}\nwritten: {} (its categories are those of {}: give it a public "
                           "sample, not a party's private rows)\n",
                           federated::public_schema_digest(schema), o.out, o.data);
}

void add_schema_command(CLI::App& app) {
  auto o = std::make_shared<SchemaOptions>();
  CLI::App* cmd = app.add_subcommand(
      "schema",
      "Write a public table schema (columns, categories, label, d) from a public sample, for "
      "the federated commands' --schema (needed under DP for tables with text columns)");
  cmd->add_option("--data", o->data, "A public sample of the table (CSV, ARFF, ...): its columns and categories")
      ->required();
  cmd->add_option("--out", o->out, "The schema file to write (JSON; see docs/federated.md)")->required();
  cmd->add_flag("--fill-means", o->fill_means,
                "Also store the sample's feature means as the values that fill missing cells");
  cmd->add_flag("--quiet", o->quiet, "Print nothing");
  o->format.add_to(cmd);
  cmd->callback([o] { schema_command(*o); });
}

const RegisterCommand registered(45, add_schema_command);

}  // namespace

}  // namespace flynn::cli
