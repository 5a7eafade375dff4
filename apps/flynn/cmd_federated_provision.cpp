// flynn federated provision / revoke: a CA and one ready-to-run kit per site, and the CA's
// revocation list (flynn/federated/provision.hpp).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/build_config.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/grpc.hpp"
#include "flynn/federated/provision.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

using namespace flynn::federated;

struct ProvisionCliOptions {
  ProvisionRequest request;
  std::string parties, project;
  CommonOptions common;
  CLI::App* command = nullptr;
};

// The request: the project file's values (when given) under the flags given.
ProvisionRequest provision_request(const ProvisionCliOptions& o) {
  const auto given = [&](const char* flag) { return o.command->count(flag) > 0; };
  ProvisionRequest r = o.project.empty() ? ProvisionRequest{} : read_provision_project(o.project);
  if (given("--out")) r.out = o.request.out;
  if (given("--coordinator")) r.coordinator = o.request.coordinator;
  if (given("--parties")) r.parties = parse_name_list(o.parties);
  if (given("--coordinator-name")) r.coordinator_name = o.request.coordinator_name;
  if (given("--days")) r.days = o.request.days;
  if (given("--min-parties")) r.min_parties = o.request.min_parties;
  if (given("--labels")) r.labels = o.request.labels;
  const char* where = o.project.empty() ? "" : " (or in --project)";
  if (r.out.empty()) throw Error(fmt::format("--out is required{}", where));
  if (r.coordinator.empty()) throw Error(fmt::format("--coordinator is required{}", where));
  if (r.parties.empty()) throw Error(fmt::format("--parties is required{}", where));
  return r;
}

void provision_command(const ProvisionCliOptions& o) {
  const ProvisionRequest request = provision_request(o);
  const ProvisionOutcome out = provision(request);
  if (o.common.json) {
    print_json({{"command", "federated provision"}, {"ca", out.ca_dir}, {"ca_created", out.ca_created},
                {"kits", out.kits}});
    return;
  }
  std::cout << fmt::format("{} {}\n", out.ca_created ? "CA created:" : "CA used:   ", out.ca_dir);
  for (std::size_t i = 0; i < out.kits.size(); ++i)
    std::cout << fmt::format("{} kit: {}\n", i == 0 ? "coordinator" : "party      ", out.kits[i]);
  std::cout << fmt::format(
      "next: flynn federated serve --kit {}{}\n"
      "      flynn federated join --kit {} --data TABLE --model OUT   (at each party)\n",
      out.kits.front(), request.labels.empty() ? " --labels L1,L2,..." : "",
      out.kits.size() > 1 ? out.kits[1] : "KIT");
}

void add_provision(CLI::App& app) {
  auto o = std::make_shared<ProvisionCliOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "provision",
      "Make a federation's CA and one ready-to-run kit per site (certificate, key, CA, CRL, kit.json, "
      "README) for 'serve --kit' and 'join --kit'");
  o->command = cmd;
  cmd->add_option("--project", o->project,
                  "A project file (JSON: coordinator, parties, and optionally coordinator_name, days, min_parties, "
                  "labels, out) giving the values of the flags below; a flag given as well wins");
  cmd->add_option("--out", o->request.out,
                  "Folder to write DIR/ca (the CA; stays here) and DIR/<site>/ (one kit per site) to; an existing "
                  "DIR/ca issues the new kits, an existing kit is never overwritten (required, here or in --project)");
  cmd->add_option("--coordinator", o->request.coordinator,
                  "HOST:PORT the parties connect to (the coordinator's certificate is issued for HOST; "
                  "127.0.0.1 or localhost: both; required, here or in --project)");
  cmd->add_option("--parties", o->parties,
                  "Comma-separated party names (certificate CNs, kit folders; required, here or in --project)");
  cmd->add_option("--coordinator-name", o->request.coordinator_name,
                  "The coordinator's certificate CN and kit folder (default coordinator)");
  cmd->add_option("--days", o->request.days, "Validity of the certificates and the CRL in days (default 365)")
      ->check(CLI::Range(1, 36500));
  cmd->add_option("--min-parties", o->request.min_parties,
                  "The fewest parties each party's kit accepts (default 3; 2 lets each party learn the other's "
                  "counts)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--labels", o->request.labels,
                  "The federation's label list L1,L2,..., written into the coordinator's kit (default: give "
                  "--labels to serve)");
  o->common.add_to(cmd);
  cmd->callback([o] { provision_command(*o); });
}

struct RevokeCliOptions {
  std::string dir, name;
  int days = 365;
  CommonOptions common;
};

void add_revoke(CLI::App& app) {
  auto o = std::make_shared<RevokeCliOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "revoke",
      "Revoke a provisioned site's certificate: re-issue the CA's CRL listing it and copy it into every kit "
      "under --out (send the new crl.pem to the sites)");
  cmd->add_option("name", o->name, "The site to revoke (its certificate CN)")->required();
  cmd->add_option("--out", o->dir, "The folder given to 'flynn federated provision --out'")->required();
  cmd->add_option("--days", o->days, "Validity of the new CRL in days (default 365)")->check(CLI::Range(1, 36500));
  o->common.add_to(cmd);
  cmd->callback([o] {
    const std::vector<std::string> kits = revoke(o->dir, o->name, o->days);
    if (o->common.json) {
      print_json({{"command", "federated revoke"}, {"revoked", o->name}, {"crl", o->dir + "/ca/crl.pem"},
                  {"kits_updated", kits}});
      return;
    }
    std::cout << fmt::format("revoked: {}\ncrl: {}/ca/crl.pem (copied into {} kit{})\n", o->name, o->dir,
                             kits.size(), kits.size() == 1 ? "" : "s");
  });
}

const RegisterCommand registered_provision(59, add_provision);
const RegisterCommand registered_revoke(59, add_revoke);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
