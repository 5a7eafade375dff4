#include "cmd_federated_common.hpp"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"

namespace flynn::cli {

using namespace flynn::federated;

void DpOptions::add_to(CLI::App* cmd, const char* epsilon_help) {
  const char* g = "Differential privacy";
  eps_opt = cmd->add_option("--dp-epsilon", epsilon, epsilon_help)->group(g);
  t_opt = cmd->add_option("--dp-T", T, "Entries each party releases (with --dp-epsilon)")->group(g);
  exp_opt = cmd->add_option("--dp-exponent", exponent,
                            "Exponential-mechanism exponent: 'paper' eps'*c/(4T) (default) or "
                            "'reference' eps'*c/(2T), see docs/federated.md")
                ->group(g);
  unit_opt = cmd->add_option("--dp-unit", unit,
                             "How epsilon is split: 'paper' (each party spends epsilon/parties, "
                             "default) or 'record' (each record lives at one party: parallel "
                             "composition, each party spends epsilon); see docs/federated.md")
                 ->group(g);
  post_opt = cmd->add_option("--dp-postprocess", postprocess,
                             "Post-processing of the aggregated release (free under DP): "
                             "'noise-units' (default: the measured best), 'none' (the paper's "
                             "model), 'threshold', 'class-balance', 'noise-units+class-balance'; "
                             "see docs/federated.md")
                 ->group(g);
}

std::optional<DpParams> DpOptions::params() const {
  if (!eps_opt->count() && !t_opt->count()) {
    if (exp_opt->count() || unit_opt->count() || post_opt->count())
      throw Error("--dp-exponent, --dp-unit and --dp-postprocess need --dp-epsilon and --dp-T");
    return std::nullopt;
  }
  if (!eps_opt->count() || !t_opt->count())
    throw Error("--dp-epsilon and --dp-T go together: give both for a DP release");
  DpParams p;
  p.epsilon = epsilon;
  p.T = T;
  p.exponent = parse_dp_exponent(exponent);
  p.unit = parse_dp_unit(unit);
  p.postprocess = parse_dp_postprocess(postprocess);
  p.validate();
  return p;
}

std::optional<DpParams> DpOptions::override(std::optional<DpParams> base) const {
  const bool any = eps_opt->count() || t_opt->count() || exp_opt->count() || unit_opt->count() ||
                   post_opt->count();
  if (!any) return base;
  DpParams p = base.value_or(DpParams{});
  if (!base && !(eps_opt->count() && t_opt->count()))
    throw Error("the coordinator runs without DP: a party that wants DP must give both "
                "--dp-epsilon and --dp-T (and the coordinator must agree)");
  if (eps_opt->count()) p.epsilon = epsilon;
  if (t_opt->count()) p.T = T;
  if (exp_opt->count()) p.exponent = parse_dp_exponent(exponent);
  if (unit_opt->count()) p.unit = parse_dp_unit(unit);
  if (post_opt->count()) p.postprocess = parse_dp_postprocess(postprocess);
  p.validate();
  return p;
}

void SchemaOption::add_to(CLI::App* cmd) {
  cmd->add_option("--schema", path,
                  "Public table schema (JSON: columns, categories, label; `flynn schema` writes one): "
                  "the parties read their rows against it and agree on it by digest. Required under "
                  "DP for tables with text columns and for LIBSVM data; see docs/federated.md")
      ->group("Differential privacy");
}

std::optional<PublicSchema> SchemaOption::load(std::uint64_t max_bytes) const {
  if (path.empty()) return std::nullopt;
  return load_public_schema(path, max_bytes);
}

Dataset load_party_rows(const std::string& path, const io::LoadOptions& load,
                        const std::optional<PublicSchema>& schema, const SchemaOption& schema_flag,
                        bool dp) {
  const io::Format format = load.format == io::Format::Auto ? io::detect_format(path) : load.format;
  if (dp && !schema && format == io::Format::Libsvm)
    throw Error(fmt::format("{}: LIBSVM data takes d from the largest feature index in its rows, which "
                            "the DP release does not protect: give the federation's d in a public schema "
                            "with --schema FILE ({{\"format\": \"flynn table schema\", \"version\": 1, "
                            "\"features\": D}})",
                            path));
  Dataset d;
  if (schema) {
    try {
      d = io::load_dataset(path, public_schema_load_options(load, *schema));
    } catch (const Error& e) {
      throw Error(fmt::format("{} (read against the public schema --schema {})", e.what(), schema_flag.path));
    }
  } else {
    d = io::load_dataset(path, load);
  }
  if (!d.has_labels) throw Error(fmt::format("{}: training data needs a label column", path));
  return d;
}

void print_local_detail(const std::exception& e, const char* who) {
  const auto* fe = dynamic_cast<const FederationError*>(&e);
  if (!fe || fe->local_detail().empty()) return;
  std::fprintf(stderr, "%s: this party's reason (not sent to the federation): %s\n", who,
               fe->local_detail().c_str());
  std::fflush(stderr);
}

void print_party_table(const std::vector<PartyReport>& reports,
                       const std::vector<std::uint64_t>& rows) {
  std::cout << fmt::format("{:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>11} {:>11}  {}\n", "party",
                           "rows", "local s", "wait s", "aggr. s", "train s", "sent",
                           "received", "model crc32");
  for (const PartyReport& r : reports) {
    Traffic all = r.control_traffic;
    all += r.aggregate_traffic;
    std::string n = "-";
    if (static_cast<std::size_t>(r.rank) < rows.size()) n = std::to_string(rows[r.rank]);
    else if (r.rows) n = std::to_string(*r.rows);
    // Timings are withheld under DP and secure aggregation (they track row counts).
    std::string local = "-", wait = "-", aggregate = "-", training = "-";
    if (const auto& t = r.timings) {
      local = fmt::format("{:.3f}", t->setup + t->local + t->privatize);
      wait = fmt::format("{:.3f}", t->wait);
      aggregate = fmt::format("{:.4f}", t->aggregate);
      training = fmt::format("{:.3f}", t->training);
    }
    std::cout << fmt::format("{:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>11} {:>11}  {:08x}\n", r.rank, n,
                             local, wait, aggregate, training, human_bytes(all.bytes_sent),
                             human_bytes(all.bytes_received), r.model_crc32);
  }
}

void print_privacy(const std::optional<PrivacyAccount>& a, const std::optional<DpParams>& dp) {
  if (!a || !dp) return;
  const std::string composition =
      dp->unit == DpUnit::Paper
          ? fmt::format("Theorem 6, sequential: {} parties x {} picks x {:.6g} per pick", a->parties, a->T,
                        a->per_pick)
          : fmt::format("record unit, parallel composition: each of {} parties {} picks x {:.6g} per pick",
                        a->parties, a->T, a->per_pick);
  std::cout << fmt::format(
      "differential privacy: epsilon spent {:.6g} in total, {:.6g} per party (T = {}, {} "
      "exponent, {} unit; {}){}\n",
      a->total, a->per_party, a->T, dp_exponent_name(dp->exponent), dp_unit_name(dp->unit), composition,
      dp->postprocess == DpPostprocess::None
          ? ""
          : fmt::format("; release post-processed: {}", dp_postprocess_name(dp->postprocess)));
}

CLI::App* federated_group(CLI::App& app) {
  return command_group(app, "federated",
                       "Federated FlyNN (FlyNNFL): parties train on their own rows, one all-reduce of the "
                       "counts, optional differential privacy");
}

}  // namespace flynn::cli
