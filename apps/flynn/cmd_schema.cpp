// flynn schema: writes a public table schema from a public sample of the table, for the
// federated commands' --schema (eval::write_public_schema_file).
#include <iostream>
#include <memory>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/eval/public_schema_file.hpp"

namespace flynn::cli {

namespace {

struct SchemaOptions {
  eval::PublicSchemaRequest request;
  DataOptions format;
};

void add_schema_command(CLI::App& app) {
  auto o = std::make_shared<SchemaOptions>();
  CLI::App* cmd = app.add_subcommand(
      "schema",
      "Write a public table schema (columns, categories, label, d) from a public sample, for "
      "the federated commands' --schema (needed under DP for tables with text columns)");
  bind_options(cmd, eval::public_schema_fields(), o->request);
  o->format.add_to(cmd);
  cmd->callback([o] {
    const eval::Report r = eval::write_public_schema_file(o->request, o->format.load_options());
    if (!o->request.quiet) std::cout << r.text;
  });
}

const RegisterCommand registered(45, add_schema_command);

}  // namespace

}  // namespace flynn::cli
