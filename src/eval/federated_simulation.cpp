#include "flynn/eval/federated_simulation.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/federated_report.hpp"
#include "flynn/federated/public_schema.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/metrics.hpp"

namespace flynn::eval {

using namespace flynn::federated;

namespace {

nlohmann::json traffic_json(const Traffic& t) {
  return {{"sent", t.bytes_sent}, {"received", t.bytes_received}, {"collectives", t.collectives}};
}

nlohmann::json timings_json(const PartyTimings& t) {
  return {{"agree", t.agree},         {"setup", t.setup},       {"local", t.local},
          {"privatize", t.privatize}, {"wait", t.wait},         {"aggregate", t.aggregate},
          {"finalize", t.finalize},   {"training", t.training}, {"total", t.total}};
}

}  // namespace

std::pair<Dataset, Dataset> stratified_holdout(const Dataset& all, std::uint64_t seed) {
  const auto folds = stratified_folds(all.labels, all.classes.size(), 5, seed);
  std::vector<std::size_t> tr, te;
  for (std::size_t r = 0; r < all.n_rows; ++r) (folds[r] == 0 ? te : tr).push_back(r);
  return {all.subset(tr), all.subset(te)};
}

SimulationData simulation_data(Dataset all, const std::string& test_path, const io::LoadOptions& load,
                               std::uint64_t seed) {
  SimulationData d;
  if (test_path.empty()) {
    std::tie(d.train, d.test) = stratified_holdout(all, seed);
    d.test_description = "stratified 20% hold-out of --data";
    return d;
  }
  io::LoadOptions tl = load;
  tl.expected_features = all.n_features;
  tl.schema = &all.schema;  // the training table's columns and categories
  d.test = io::load_dataset(test_path, tl);
  if (!d.test.has_labels) throw Error(fmt::format("{}: test data needs labels", test_path));
  d.train = std::move(all);
  d.test_description = test_path;
  return d;
}

SimulationResult simulate_federation(const Dataset& train, const Dataset& test, const SimulationSpec& spec) {
  if (spec.parties < 1 || spec.parties > 4096)
    throw Error(fmt::format("simulation: {} parties; must be in [1, 4096]", spec.parties));
  Dataset test_ids = test;
  test_ids.relabel(spec.settings.labels);  // names the file and line of a test label not in the list

  const auto split = split_rows(train.labels, train.classes.size(), spec.parties, spec.split, spec.split_seed);
  std::vector<Dataset> shards;
  for (const auto& rows : split) shards.push_back(train.subset(rows));
  std::vector<const Dataset*> ptrs;
  for (const Dataset& d : shards) ptrs.push_back(&d);

  // Test rows read before the federation's means existed (LoadOptions::impute = false):
  // fill them with the training rows' means, which equal the federation's exactly
  // (ImputationSums add up the same however the rows are split).
  if (has_missing(test_ids)) fill_missing(test_ids, ImputationSums::of(train).means());
  // The test rows dealt among the parties as well (at random, stratified), for the
  // federated evaluation, which must equal the central one below on the pooled rows.
  std::vector<Dataset> test_shards;
  for (const auto& rows : split_rows(test_ids.labels, test_ids.classes.size(), spec.parties, SplitSpec{},
                                     spec.split_seed + 1))
    test_shards.push_back(test_ids.subset(rows));
  std::vector<const Dataset*> test_ptrs;
  for (const Dataset& d : test_shards) test_ptrs.push_back(&d);

  SimulationResult r(run_colony(ptrs, spec.settings, {}, test_ptrs));
  PredictOptions po;
  po.threads = spec.predict_threads;
  const std::vector<std::uint32_t> predicted = r.outcome.model.predict(test_ids, po);
  r.accuracy = flynn::accuracy(test_ids.labels, predicted);
  r.balanced_accuracy = balanced_accuracy(test_ids.labels, predicted, spec.settings.labels.size());

  const auto& reports = r.outcome.reports;
  // run_colony fills in every party's timings.
  r.aggregate_seconds = reports.front().timings->aggregate;
  for (const PartyReport& p : reports) r.aggregate_seconds = std::min(r.aggregate_seconds, p.timings->aggregate);
  for (const PartyReport& p : reports) r.training_seconds = std::max(r.training_seconds, p.timings->training);
  // Classes held by each party, to show what a non-IID split did.
  for (const Dataset& d : shards) {
    std::vector<bool> seen(d.classes.size(), false);
    for (std::uint32_t c : d.labels) seen[c] = true;
    r.classes_held.push_back(static_cast<std::size_t>(std::count(seen.begin(), seen.end(), true)));
  }
  return r;
}

nlohmann::json party_reports_json(const std::vector<PartyReport>& reports, const std::vector<std::uint64_t>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const PartyReport& r : reports) {
    Traffic all = r.control_traffic;
    all += r.aggregate_traffic;
    nlohmann::json p = {{"rank", r.rank},
                        {"bytes_sent", all.bytes_sent},
                        {"bytes_received", all.bytes_received},
                        {"aggregation_bytes", traffic_json(r.aggregate_traffic)},
                        {"control_bytes", traffic_json(r.control_traffic)},
                        {"model_crc32", fmt::format("{:08x}", r.model_crc32)}};
    // Withheld under DP and secure aggregation unless the caller ran every party.
    if (r.timings) p["seconds"] = timings_json(*r.timings);
    if (static_cast<std::size_t>(r.rank) < rows.size())
      p["rows"] = rows[r.rank];
    else if (r.rows)
      p["rows"] = *r.rows;
    a.push_back(p);
  }
  return a;
}

nlohmann::json privacy_account_json(const std::optional<PrivacyAccount>& a, const std::optional<DpParams>& dp) {
  if (!a || !dp) return nullptr;
  return {{"epsilon_total", a->total},
          {"epsilon_per_party", a->per_party},
          {"epsilon_requested", dp->epsilon},
          {"epsilon_per_pick", a->per_pick},
          {"T", a->T},
          {"T_auto", dp->T_auto},
          {"parties", a->parties},
          {"exponent", dp_exponent_name(dp->exponent)},
          {"unit", dp_unit_name(dp->unit)},
          {"postprocess", dp_postprocess_name(dp->postprocess)},
          {"composition", dp->unit == DpUnit::Paper
                              ? "Theorem 6: total = parties x T x (selection + noise) per pick"
                              : "record unit (disjoint parties), parallel composition: total = per party = T x "
                                "(selection + noise) per pick"}};
}

}  // namespace flynn::eval

// ---- `flynn federated simulate`: its flags and the run on files

namespace flynn::eval {

const OptionTable<SimulationRequest>& simulation_option_fields() {
  using R = SimulationRequest;
  static const OptionTable<R> table = {
      {"--data", "Labelled data to split among the parties", &R::data, "", true},
      {"--parties", "Number of parties tau (default 2)", &R::parties},
      {"--split", "How rows are split: iid (default), by-class, dirichlet:ALPHA, sizes:W1,W2,...", &R::split},
      {"--split-seed", "Seed of the split and of the hold-out (default 0)", &R::split_seed},
      {"--test", "Test data (default: a stratified 20% hold-out of --data, not trained on)", &R::test},
      {"--labels", "Label list L1,L2,... (default: sorted labels of --data)", &R::labels},
      {"--model", "Also write the aggregated model here", &R::model},
  };
  return table;
}

SimulationOfFiles simulate_files(const SimulationRequest& r, const federated::PartyFiles& files,
                                 const HyperParams& hyper, const std::optional<federated::DpParams>& dp,
                                 int threads) {
  SimulationSpec spec;
  spec.split = federated::SplitSpec::parse(r.split);
  if (r.parties < 1 || r.parties > 4096) throw Error(fmt::format("--parties {}: must be in [1, 4096]", r.parties));
  spec.parties = r.parties;
  spec.split_seed = r.split_seed;
  spec.settings.dp = dp;
  // With --schema the table (categories, d) is the public one, as every party would read it.
  if (!files.schema.empty()) spec.settings.schema = federated::load_public_schema(files.schema, files.max_input_bytes);
  Dataset all = federated::load_party_rows(r.data, files.load, spec.settings.schema, files.schema, dp.has_value());
  all.require_trainable();
  spec.settings.labels = r.labels.empty() ? all.classes : LabelSet::parse_list(r.labels);
  const SimulationData data = simulation_data(std::move(all), r.test, files.load, r.split_seed);
  spec.settings.hyper = hyper;
  // Simulations are experiments: reproducible by default, like `flynn train`.
  if (!spec.settings.hyper.seed) spec.settings.hyper.seed = Defaults::seed;
  spec.settings.missing = files.load.missing;
  if (!files.feature_stats.empty())
    spec.settings.feature_stats = io::load_feature_stats(files.feature_stats, files.max_input_bytes);
  spec.settings.threads = federated::threads_per_party(threads, r.parties);
  spec.predict_threads = threads;

  SimulationResult result = simulate_federation(data.train, data.test, spec);
  if (!r.model.empty()) io::write_file_atomic(r.model, result.outcome.model_file);
  const std::uint64_t train_rows = data.train.n_rows, test_rows = data.test.n_rows;
  nlohmann::json j = simulation_json(result, spec, train_rows, test_rows, data.test_description);
  j.update({{"command", "federated simulate"}, {"data", r.data}});
  std::string text = simulation_text(result, spec, train_rows, test_rows, data.test_description);
  // Each party's local check of a DP release on its own rows (simulated: all are here).
  nlohmann::json warnings = nlohmann::json::array();
  for (std::size_t p = 0; p < result.outcome.release_warnings.size(); ++p) {
    const std::string& w = result.outcome.release_warnings[p];
    warnings.push_back(w);
    if (!w.empty()) text += fmt::format("party {}: {}", p, w);
  }
  if (spec.settings.dp) j["release_warnings"] = std::move(warnings);
  if (!r.model.empty()) text += fmt::format("model: {}\n", r.model);
  return {std::move(result), std::move(j), std::move(text)};
}

}  // namespace flynn::eval
