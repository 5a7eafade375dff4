// flynn federated serve: the coordinator of a cross-silo federation over gRPC with mutual
// TLS (not a party: it relays the collectives, sums masked vectors, enforces deadlines).
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "flynn/build_config.hpp"
#include "commands.hpp"
#include "cmd_federated_common.hpp"
#include "federated_grpc_cli.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/grpc.hpp"
#include "flynn/federated/party.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

using namespace flynn::federated;

struct ServeOptions {
  std::string listen, ca, cert, key, allow, labels, model, missing, crl, secure = "on";
  int parties = 0;
  double deadline = 300;
  double join_timeout = kDefaultJoinTimeoutSeconds;
  double max_message_mb = static_cast<double>(kDefaultMaxMessageBytes >> 20);
  CommonOptions common;
  HyperParamOptions hyper;
  DpOptions dp;
};

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string n; std::getline(ss, n, ',');) {
    const auto b = n.find_first_not_of(' '), e = n.find_last_not_of(' ');
    if (b == std::string::npos) throw Error(fmt::format("--allow '{}': an empty name", list));
    out.push_back(n.substr(b, e - b + 1));
  }
  return out;
}

void serve_command(const ServeOptions& o) {
  CoordinatorOptions c;
  c.listen = o.listen;
  c.parties = o.parties;
  c.tls = {o.ca, o.cert, o.key};
  if (!o.allow.empty()) c.allow = split_names(o.allow);
  c.deadline_seconds = o.deadline;
  c.join_timeout_seconds = o.join_timeout;
  c.crl = o.crl;
  if (o.secure != "on" && o.secure != "off")
    throw Error(fmt::format("--secure-aggregation '{}': expected on or off", o.secure));
  c.secure_aggregation = o.secure == "on";
  if (!(o.max_message_mb >= 1 && o.max_message_mb <= 2047))
    throw Error(fmt::format("--max-message-mb {}: must be in [1, 2047]", o.max_message_mb));
  c.max_message_bytes = static_cast<std::size_t>(o.max_message_mb * (1 << 20));
  // Everything the parties must agree on travels in the Welcome (settings.hpp).
  c.settings.labels = LabelSet::parse_list(o.labels);
  c.settings.hyper = o.hyper.params();
  if (!o.missing.empty()) c.settings.missing = parse_missing_policy(o.missing);
  c.settings.dp = o.dp.params();
  if (!o.model.empty()) {
    check_writable_output(o.model, "--model");
    c.wants_model = true;
  }
  const bool quiet = o.common.quiet;
  c.log = [quiet](const std::string& line) {
    if (quiet) return;
    std::fprintf(stderr, "flynn serve: %s\n", line.c_str());
    std::fflush(stderr);
  };

  Coordinator coordinator(c);
  // Always printed (also with --quiet): with port 0 it is how one learns the port.
  std::fprintf(stderr, "flynn serve: listening on %s (port %d), waiting for %d part%s\n",
               o.listen.c_str(), coordinator.port(), o.parties, o.parties == 1 ? "y" : "ies");
  std::fflush(stderr);
  const CoordinatorOutcome out = coordinator.run();
  if (c.wants_model) io::write_file_atomic(o.model, out.model_file);

  if (o.common.json) {
    nlohmann::json parties = nlohmann::json::array();
    for (const CoordinatorParty& p : out.parties)
      parties.push_back({{"name", p.name}, {"rank", p.rank}, {"wire_bytes", wire_json(p.wire)}});
    print_json({{"command", "federated serve"},
                {"listen", o.listen},
                {"port", coordinator.port()},
                {"parties", parties},
                {"refused", out.refused},
                {"refused_total", out.refused_total},
                {"secure_aggregation", c.secure_aggregation},
                {"collectives", out.collectives},
                {"seconds", out.seconds},
                {"model", o.model.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.model)},
                {"model_bytes", out.model_bytes},
                {"model_crc32", fmt::format("{:08x}", out.model_crc32)},
                {"identical_on_all_parties", true}});
    return;
  }
  std::cout << fmt::format("federation of {} parties finished in {:.3f} s ({} collectives, secure "
                           "aggregation {})\n",
                           out.parties.size(), out.seconds, out.collectives, o.secure);
  std::cout << fmt::format("{:>5}  {:<24} {:>12} {:>12}\n", "rank", "party (CN)", "received", "sent");
  for (const CoordinatorParty& p : out.parties)
    std::cout << fmt::format("{:>5}  {:<24} {:>12} {:>12}\n", p.rank, p.name,
                             human_bytes(p.wire.bytes_received), human_bytes(p.wire.bytes_sent));
  std::cout << fmt::format("all parties hold the identical model (crc32 {:08x}, {})\n",
                           out.model_crc32, human_bytes(out.model_bytes));
  if (!o.model.empty()) std::cout << fmt::format("model: {}\n", o.model);
}

void add_federated_serve(CLI::App& app) {
  CLI::App* group = command_group(app, "federated", "Federated FlyNN (FlyNNFL)");
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = group->add_subcommand(
      "serve",
      "Coordinate a federation of separately started parties over gRPC with mutual TLS (the "
      "coordinator is not a party; see docs/federated.md)");
  cmd->add_option("--listen", o->listen, "HOST:PORT to listen on (port 0: any free port)")->required();
  cmd->add_option("--parties", o->parties, "Number of parties; the federation starts when all joined")
      ->required();
  cmd->add_option("--ca", o->ca, "CA certificate (PEM) that signed every party's certificate")->required();
  cmd->add_option("--cert", o->cert, "The coordinator's certificate (PEM)")->required();
  cmd->add_option("--key", o->key, "The coordinator's private key (PEM)")->required();
  cmd->add_option("--allow", o->allow,
                  "Comma-separated certificate CNs allowed to join (default: any certificate of the CA)");
  cmd->add_option("--deadline", o->deadline,
                  "Seconds every phase may take: all parties joining, and each collective from its "
                  "first contribution (default 300)");
  cmd->add_option("--join-timeout", o->join_timeout,
                  "Seconds a connection may take from connecting to an accepted Join; it is closed "
                  "after that (default 10)");
  cmd->add_option("--crl", o->crl,
                  "Certificate revocation list of the CA (PEM): parties with a revoked certificate "
                  "are refused");
  cmd->add_option("--secure-aggregation", o->secure,
                  "on (default): parties mask their counts so the coordinator learns only sums; off");
  cmd->add_option("--max-message-mb", o->max_message_mb, "Largest gRPC message in MiB (default 512)");
  cmd->add_option("--labels", o->labels, "The federation's full label list L1,L2,...")->required();
  cmd->add_option("--model", o->model, "Also write the federation's model here (sent by rank 0)");
  cmd->add_option("--missing", o->missing,
                  "Missing cells of the parties' tables: mean (the federation's training mean), "
                  "zero or error; sent to every party (default: each party's --missing, else mean)");
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
