// flynn federated serve: the coordinator of a cross-silo federation over gRPC with mutual
// TLS (not a party: it relays the collectives, sums masked vectors, enforces deadlines).
// Its flags and what they mean: flynn/federated/grpc_commands.hpp.
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/build_config.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/eval/federated_report.hpp"
#include "flynn/federated/grpc_commands.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

using namespace flynn::federated;

struct ServeOptions {
  ServeRequest request;
  CommonOptions common;
  HyperParamOptions hyper;
  DpOptions dp;
  bool verbose = false;
};

void serve_command(const ServeOptions& o) {
  CoordinatorOptions c = o.request.options(o.hyper.params(), o.dp.params());
  c.log = [quiet = o.common.quiet](const std::string& line) {
    if (quiet) return;
    std::fprintf(stderr, "flynn serve: %s\n", line.c_str());
    std::fflush(stderr);
  };
  route_grpc_log(o.verbose, c.log);
  Coordinator coordinator(c);
  // Always printed (also with --quiet): with port 0 it is how one learns the port.
  std::fprintf(stderr, "flynn serve: listening on %s (port %d), waiting for %d part%s\n", c.listen.c_str(),
               coordinator.port(), c.parties, c.parties == 1 ? "y" : "ies");
  std::fflush(stderr);
  const CoordinatorOutcome out = coordinator.run();
  const std::string& model = o.request.model;
  if (c.wants_model) io::write_file_atomic(model, out.model_file);
  if (o.common.json) {
    nlohmann::json j = eval::coordinator_json(out, c.secure_aggregation);
    j.update({{"command", "federated serve"}, {"listen", c.listen}, {"port", coordinator.port()},
              {"model", model.empty() ? nlohmann::json(nullptr) : nlohmann::json(model)}});
    print_json(j);
    return;
  }
  std::cout << eval::coordinator_text(out, c.secure_aggregation);
  if (!model.empty()) std::cout << fmt::format("model: {}\n", model);
}

void add_federated_serve(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "serve",
      "Coordinate a federation of separately started parties over gRPC with mutual TLS (the coordinator is not "
      "a party; see docs/guide/federated.md)");
  bind_options(cmd, serve_option_fields(), o->request);
  o->hyper.add_to(cmd);
  o->hyper.option("seed")->description(
      "Seed of the lifting matrix (default: party 0 draws one and every party uses it)");
  o->dp.add_to(cmd, "Privacy budget epsilon of the federation; enables the DP release");
  o->common.add_to(cmd);
  cmd->add_flag("--verbose", o->verbose, "Also print gRPC's own log lines (without it, only a failed TLS handshake "
                                         "is reported, as one line naming its cause)");
  cmd->callback([o] { serve_command(*o); });
}

const RegisterCommand registered(61, add_federated_serve);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
