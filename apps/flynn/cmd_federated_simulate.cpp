// flynn federated simulate: a federation on threads (the protocol MPI parties run), any
// split, evaluated on held-out rows (eval::simulate_files; its flags:
// flynn/eval/federated_simulation.hpp).
#include <iostream>
#include <memory>

#include "bind_options.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/eval/federated_simulation.hpp"

namespace flynn::cli {

namespace {

struct SimulateOptions {
  eval::SimulationRequest request;
  PartyOptions party;
};

void add_federated_simulate(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "simulate", "Simulate a federation: split a data set among parties that train on threads (the same "
                  "protocol as over MPI) and evaluate the aggregated model");
  bind_options(cmd, eval::simulation_option_fields(), o->request);
  o->party.add_to(cmd);
  cmd->callback([o] {
    const PartyOptions& p = o->party;
    const eval::SimulationOfFiles r = eval::simulate_files(
        o->request, p.files(o->request.data, ""), p.hyper.params(), p.dp.params(), p.common.threads);
    if (p.common.json) print_json(r.json);
    else std::cout << r.text;
  });
}

const RegisterCommand registered(61, add_federated_simulate);

}  // namespace

}  // namespace flynn::cli
