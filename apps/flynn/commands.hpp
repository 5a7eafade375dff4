#pragma once
// Each subcommand registers itself on the top-level app; its callback runs during parse.
#include <CLI/CLI.hpp>

namespace flynn::cli {

void add_train_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_demo_command(CLI::App& app);

}  // namespace flynn::cli
