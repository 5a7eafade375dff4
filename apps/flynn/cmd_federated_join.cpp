// flynn federated join: one party of a cross-silo federation over gRPC with mutual TLS.
// The party connects to `flynn federated serve`, receives the federation's settings, runs
// the same party protocol as over MPI or threads and writes the model
// (federated::join_federation; its flags: flynn/federated/grpc_commands.hpp).
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/build_config.hpp"
#include "flynn/eval/federated_report.hpp"
#include "flynn/federated/grpc_commands.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

using namespace flynn::federated;

struct JoinCliOptions {
  JoinRequest request;
  PartyOptions party;
  bool verbose = false;
  bool check = false;
};

// --check: every problem this party would meet at the start, found before any coordinator.
void check_command(const JoinCliOptions& o, const JoiningParty& party) {
  const PartyFilesCheck c = check_before_joining(o.request, party);
  if (o.party.common.json) {
    print_json({{"command", "federated join --check"},
                {"ready", c.problems.empty()},
                {"rows", c.rows},
                {"features", c.features},
                {"classes", c.classes},
                {"problems", c.problems},
                {"unchecked", c.unchecked}});
  } else {
    if (c.rows) std::cout << fmt::format("data: {} rows, {} features, {} classes\n", c.rows, c.features, c.classes.size());
    for (std::size_t k = 0; k < c.problems.size(); ++k) std::cout << fmt::format("problem {}: {}\n", k + 1, c.problems[k]);
    for (const std::string& u : c.unchecked) std::cout << "not checked here: " << u << "\n";
    if (c.problems.empty()) std::cout << "ready: nothing found that would stop this party at the start\n";
  }
  if (!c.problems.empty())
    throw Error(fmt::format("this party is not ready: {} problem{} (listed above)", c.problems.size(),
                            c.problems.size() == 1 ? "" : "s"));
}

void join_command(const JoinCliOptions& o) {
  const CommonOptions& common = o.party.common;
  JoiningParty party;
  // A flag that does not parse is this party's error, reported to every party.
  try {
    party.files = o.party.files(o.request.data, o.request.model);
  } catch (const std::exception& e) {
    party.local_error = e.what();
  }
  party.missing_given = o.party.format.missing_given();
  party.hyper = o.party.hyper.params();
  party.dp = o.party.dp.given();
  party.threads = common.threads;
  if (!common.quiet) party.log = [](const std::string& line) { std::fprintf(stderr, "flynn join: %s\n", line.c_str()); };
  route_grpc_log(o.verbose, nullptr);
  if (o.check) {
    check_command(o, party);
    return;
  }
  ProgressBar bar("local training", !common.quiet && !common.json);
  party.progress = bar.callback();
  try {
    const JoinOutcome joined = join_federation(o.request, std::move(party));
    bar.finish();
    // This party's own check of a DP release on its rows (never sent).
    if (!joined.run.result.release_warning.empty())
      std::fprintf(stderr, "flynn join: %s", joined.run.result.release_warning.c_str());
    if (common.json) {
      nlohmann::json j = eval::joined_party_json(joined);
      j.update({{"command", "federated join"}, {"model", o.request.model}});
      print_json(j);
    } else {
      std::cout << eval::joined_party_text(joined) << fmt::format("model: {}\n", o.request.model);
    }
  } catch (const std::exception& e) {
    bar.finish();
    const std::string detail = local_detail_line(e, "flynn join");
    if (!detail.empty()) std::fprintf(stderr, "%s\n", detail.c_str());
    throw;
  }
}

void add_federated_join(CLI::App& app) {
  auto o = std::make_shared<JoinCliOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "join",
      "Take part in a federation coordinated by 'flynn federated serve' (gRPC, mutual TLS): train on this "
      "party's rows, end with the federation's model");
  bind_options(cmd, join_option_fields(), o->request);
  o->party.add_to(cmd, "Expected privacy budget (default: the coordinator's); must agree");
  o->party.hyper.option("m")->description(
      "FlyHash dimension m. Hyper-parameters default to the coordinator's; a party that gives one must agree "
      "with the others (the federation names any field that differs)");
  o->party.format.missing_opt->description(
      "Missing cells (empty, NA, ?, nan): mean, zero or error; default: the coordinator's --missing, else mean "
      "(the training mean of the federation, stored in the model)");
  cmd->add_flag("--verbose", o->verbose, "Also print gRPC's own log lines");
  cmd->add_flag("--check", o->check,
                "Check this party's kit, TLS files and data against the settings it knows (its flags, the kit) "
                "without joining: every problem that would stop it at the start, at once; exit 0 when none");
  cmd->callback([o] { join_command(*o); });
}

const RegisterCommand registered(62, add_federated_join);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
