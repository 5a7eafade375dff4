// flynn federated serve: the coordinator of a cross-silo federation over gRPC with mutual
// TLS (not a party: it relays the collectives, sums masked vectors, enforces deadlines).
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "flynn/build_config.hpp"
#include "commands.hpp"
#include "cmd_federated_common.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/federated_report.hpp"
#include "flynn/federated/grpc.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

using namespace flynn::federated;

struct ServeOptions {
  CoordinatorOptions c;
  std::string allow, labels, model, missing, secure = "on";
  double max_message_mb = static_cast<double>(kDefaultMaxMessageBytes >> 20);
  CommonOptions common;
  HyperParamOptions hyper;
  DpOptions dp;
};

void serve_command(const ServeOptions& o) {
  CoordinatorOptions c = o.c;
  if (!o.allow.empty()) c.allow = parse_name_list(o.allow);
  if (o.secure != "on" && o.secure != "off")
    throw Error(fmt::format("--secure-aggregation '{}': expected on or off", o.secure));
  c.secure_aggregation = o.secure == "on";
  c.max_message_bytes = max_message_bytes_from_mib(o.max_message_mb);
  // Everything the parties must agree on travels in the Welcome (settings.hpp).
  c.settings.labels = LabelSet::parse_list(o.labels);
  c.settings.hyper = o.hyper.params();
  if (!o.missing.empty()) c.settings.missing = parse_missing_policy(o.missing);
  c.settings.dp = o.dp.params();
  if (!o.model.empty()) {
    check_writable_output(o.model, "--model " + o.model);
    c.wants_model = true;
  }
  c.log = [quiet = o.common.quiet](const std::string& line) {
    if (quiet) return;
    std::fprintf(stderr, "flynn serve: %s\n", line.c_str());
    std::fflush(stderr);
  };
  Coordinator coordinator(c);
  // Always printed (also with --quiet): with port 0 it is how one learns the port.
  std::fprintf(stderr, "flynn serve: listening on %s (port %d), waiting for %d part%s\n", c.listen.c_str(),
               coordinator.port(), c.parties, c.parties == 1 ? "y" : "ies");
  std::fflush(stderr);
  const CoordinatorOutcome out = coordinator.run();
  if (c.wants_model) io::write_file_atomic(o.model, out.model_file);
  if (o.common.json) {
    nlohmann::json j = experiments::coordinator_json(out, c.secure_aggregation);
    j.update({{"command", "federated serve"}, {"listen", c.listen}, {"port", coordinator.port()},
              {"model", o.model.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.model)}});
    print_json(j);
    return;
  }
  std::cout << experiments::coordinator_text(out, c.secure_aggregation);
  if (!o.model.empty()) std::cout << fmt::format("model: {}\n", o.model);
}

void add_federated_serve(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CoordinatorOptions& c = o->c;
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "serve",
      "Coordinate a federation of separately started parties over gRPC with mutual TLS (the coordinator is not "
      "a party; see docs/federated.md)");
  cmd->add_option("--listen", c.listen, "HOST:PORT to listen on (port 0: any free port)")->required();
  cmd->add_option("--parties", c.parties, "Number of parties; the federation starts when all joined")->required();
  cmd->add_option("--ca", c.tls.ca, "CA certificate (PEM) that signed every party's certificate")->required();
  cmd->add_option("--cert", c.tls.cert, "The coordinator's certificate (PEM)")->required();
  cmd->add_option("--key", c.tls.key, "The coordinator's private key (PEM)")->required();
  cmd->add_option("--allow", o->allow,
                  "Comma-separated certificate CNs allowed to join (default: any certificate of the CA)");
  cmd->add_option("--deadline", c.deadline_seconds,
                  "Seconds every phase may take: all parties joining, and each collective from its first "
                  "contribution (default 300)");
  cmd->add_option("--join-timeout", c.join_timeout_seconds,
                  "Seconds a connection may take from connecting to an accepted Join; it is closed after that "
                  "(default 10)");
  cmd->add_option("--crl", c.crl,
                  "Certificate revocation list of the CA (PEM): parties with a revoked certificate are refused");
  cmd->add_option("--secure-aggregation", o->secure,
                  "on (default): parties mask their counts so the coordinator learns only sums; off");
  cmd->add_option("--max-message-mb", o->max_message_mb, "Largest gRPC message in MiB (default 512)");
  cmd->add_option("--labels", o->labels, "The federation's full label list L1,L2,...")->required();
  cmd->add_option("--model", o->model, "Also write the federation's model here (sent by rank 0)");
  cmd->add_option("--missing", o->missing,
                  "Missing cells of the parties' tables: mean (the federation's training mean), zero or error; "
                  "sent to every party (default: each party's --missing, else mean)");
  o->hyper.add_to(cmd);
  o->hyper.option("seed")->description(
      "Seed of the lifting matrix (default: party 0 draws one and every party uses it)");
  o->dp.add_to(cmd, "Privacy budget epsilon of the federation; enables the DP release");
  o->common.add_to(cmd);
  cmd->callback([o] { serve_command(*o); });
}

const RegisterCommand registered(61, add_federated_serve);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
