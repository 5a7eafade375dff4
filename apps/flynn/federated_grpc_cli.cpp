#include "federated_grpc_cli.hpp"

#if FLYNN_HAVE_GRPC

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::cli {

namespace fs = std::filesystem;

void FederatedDpFlags::add_to(CLI::App* cmd, const char* epsilon_help) {
  const char* g = "Differential privacy";
  eps_opt = cmd->add_option("--dp-epsilon", epsilon, epsilon_help)->group(g);
  t_opt = cmd->add_option("--dp-T", T, "Entries each party releases (with --dp-epsilon)")->group(g);
  exp_opt = cmd->add_option("--dp-exponent", exponent,
                            "Exponential-mechanism exponent: 'paper' (default) or 'reference'")
                ->group(g);
  unit_opt = cmd->add_option("--dp-unit", unit,
                             "How epsilon is split: 'paper' (each party spends epsilon/parties, "
                             "default) or 'record' (each record lives at one party: parallel "
                             "composition, each party spends epsilon); see docs/federated.md")
                 ->group(g);
}

std::optional<federated::DpParams> FederatedDpFlags::params() const {
  if (!eps_opt->count() && !t_opt->count()) {
    if (exp_opt->count() || unit_opt->count())
      throw Error("--dp-exponent and --dp-unit need --dp-epsilon and --dp-T");
    return std::nullopt;
  }
  if (!eps_opt->count() || !t_opt->count())
    throw Error("--dp-epsilon and --dp-T go together: give both for a DP release");
  federated::DpParams p;
  p.epsilon = epsilon;
  p.T = T;
  p.exponent = federated::parse_dp_exponent(exponent);
  p.unit = federated::parse_dp_unit(unit);
  p.validate();
  return p;
}

std::optional<federated::DpParams> FederatedDpFlags::override(
    std::optional<federated::DpParams> base) const {
  const bool any = eps_opt->count() || t_opt->count() || exp_opt->count() || unit_opt->count();
  if (!any) return base;
  federated::DpParams p = base.value_or(federated::DpParams{});
  if (!base && !(eps_opt->count() && t_opt->count()))
    throw Error("the coordinator runs without DP: a party that wants DP must give both "
                "--dp-epsilon and --dp-T (and the coordinator must agree)");
  if (eps_opt->count()) p.epsilon = epsilon;
  if (t_opt->count()) p.T = T;
  if (exp_opt->count()) p.exponent = federated::parse_dp_exponent(exponent);
  if (unit_opt->count()) p.unit = federated::parse_dp_unit(unit);
  p.validate();
  return p;
}

void check_writable_output(const std::string& path, const char* flag) {
  const fs::path parent = fs::path(path).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir))
    throw Error(fmt::format("{} {}: {} is not a directory", flag, path, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(fmt::format("{} {}: {} is not writable", flag, path, dir.string()));
  if (fs::is_directory(path)) throw Error(fmt::format("{} {}: it is a directory", flag, path));
}

nlohmann::json wire_json(const federated::WireTraffic& w) {
  return {{"sent", w.bytes_sent},
          {"received", w.bytes_received},
          {"messages_sent", w.messages_sent},
          {"messages_received", w.messages_received}};
}

}  // namespace flynn::cli

#endif  // FLYNN_HAVE_GRPC
