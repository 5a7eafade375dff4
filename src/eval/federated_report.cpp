#include "flynn/eval/federated_report.hpp"

#include <fmt/format.h>

#include "flynn/eval/study_io.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::eval {

using namespace flynn::federated;

std::string party_table(const std::vector<PartyReport>& reports, const std::vector<std::uint64_t>& rows) {
  std::string out = fmt::format("{:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>11} {:>11}  {}\n", "party", "rows",
                                "local s", "wait s", "aggr. s", "train s", "sent", "received", "model crc32");
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
    out += fmt::format("{:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>11} {:>11}  {:08x}\n", r.rank, n, local, wait,
                       aggregate, training, human_bytes(all.bytes_sent), human_bytes(all.bytes_received),
                       r.model_crc32);
  }
  return out;
}

std::string privacy_line(const std::optional<PrivacyAccount>& a, const std::optional<DpParams>& dp) {
  if (!a || !dp) return "";
  const std::string composition =
      dp->unit == DpUnit::Paper
          ? fmt::format("Theorem 6, sequential: {} parties x {} picks x {:.6g} per pick", a->parties, a->T,
                        a->per_pick)
          : fmt::format("record unit, parallel composition: each of {} parties {} picks x {:.6g} per pick",
                        a->parties, a->T, a->per_pick);
  return fmt::format(
      "differential privacy: epsilon spent {:.6g} in total, {:.6g} per party (T = {}{}, {} "
      "exponent, {} unit; {}){}\n",
      a->total, a->per_party, a->T, dp->T_auto ? " from --dp-T auto" : "", dp_exponent_name(dp->exponent), dp_unit_name(dp->unit), composition,
      dp->postprocess == DpPostprocess::None
          ? ""
          : fmt::format("; release post-processed: {}", dp_postprocess_name(dp->postprocess)));
}

nlohmann::json federation_test_json(const FederatedEvaluation& e, const LabelSet& labels, bool dp) {
  nlohmann::json j = {{"parties_with_test_rows", e.parties_with_rows}, {"parties", e.parties}};
  if (!e.skipped.empty()) {
    j["skipped"] = e.skipped;
    return j;
  }
  j.update({{"rows", e.rows},
            {"accuracy", e.accuracy},
            {"balanced_accuracy", e.balanced_accuracy},
            {"classes", labels.names()},
            {"confusion_matrix", nlohmann::json::array()},
            {"covered_by_dp", false}});
  for (std::size_t t = 0; t < e.classes; ++t)
    j["confusion_matrix"].push_back(std::vector<std::uint64_t>(e.confusion.begin() + t * e.classes,
                                                               e.confusion.begin() + (t + 1) * e.classes));
  if (!dp) j.erase("covered_by_dp");
  return j;
}

std::string federation_test_text(const FederatedEvaluation& e, bool dp) {
  if (e.parties_with_rows == 0) return "";  // nobody asked for it
  if (!e.skipped.empty()) return fmt::format("federated evaluation skipped: {}\n", e.skipped);
  return fmt::format("federated evaluation ({} of {} parties gave test rows, {} rows): accuracy {:.4f}, "
                     "balanced accuracy {:.4f}{}\n",
                     e.parties_with_rows, e.parties, e.rows, e.accuracy, e.balanced_accuracy,
                     dp ? " (exact: test rows are not covered by the release's epsilon)" : "");
}

nlohmann::json federation_model_json(const PartyResult& result, const std::string& file) {
  return {{"config", config_json(result.model.config())},
          {"seed_drawn_by_party_0", result.seed_drawn},
          {"model_bytes", file.size()},
          {"model_crc32", fmt::format("{:08x}", io::model_checksum(file))},
          {"identical_on_all_parties", true}};
}

nlohmann::json simulation_json(const SimulationResult& r, const SimulationSpec& spec, std::uint64_t train_rows,
                               std::uint64_t test_rows, const std::string& test_description) {
  const ColonyOutcome& out = r.outcome;
  nlohmann::json parties = party_reports_json(out.reports, out.rows);
  for (std::size_t p = 0; p < parties.size(); ++p) parties[p]["classes_held"] = r.classes_held[p];
  return {{"test", test_description},
          {"train_rows", train_rows},
          {"test_rows", test_rows},
          {"parties", spec.parties},
          {"split", spec.split.describe()},
          {"split_seed", spec.split_seed},
          {"threads_per_party", spec.settings.threads},
          {"config", config_json(out.model.config())},
          {"accuracy", r.accuracy},
          {"balanced_accuracy", r.balanced_accuracy},
          {"training_seconds", r.training_seconds},
          {"aggregation_seconds", r.aggregate_seconds},
          {"wall_seconds", out.wall_seconds},
          {"model_crc32", fmt::format("{:08x}", io::model_checksum(out.model_file))},
          {"identical_on_all_parties", true},
          {"parties_detail", parties},
          {"federation_test", federation_test_json(out.evaluation, spec.settings.labels, spec.settings.dp.has_value())},
          {"differential_privacy", privacy_account_json(out.privacy, spec.settings.dp)}};
}

std::string simulation_text(const SimulationResult& r, const SimulationSpec& spec, std::uint64_t train_rows,
                            std::uint64_t test_rows, const std::string& test_description) {
  const ColonyOutcome& out = r.outcome;
  std::string s = fmt::format("simulated federation: {} parties on threads, split {} (seed {}), "
                              "{} training rows, {} worker thread(s) per party\n",
                              spec.parties, spec.split.describe(), spec.split_seed, train_rows, spec.settings.threads) +
                  fmt::format("config: {}\n", out.model.config().describe()) + party_table(out.reports, out.rows) +
                  "classes held per party:";
  for (std::size_t h : r.classes_held) s += fmt::format(" {}", h);
  s += '\n';
  s += privacy_line(out.privacy, spec.settings.dp);
  s += fmt::format("training {:.3f} s (slowest party), aggregation {:.4f} s, wall {:.3f} s; "
                   "all parties hold the identical model (crc32 {:08x})\n",
                   r.training_seconds, r.aggregate_seconds, out.wall_seconds, io::model_checksum(out.model_file));
  s += fmt::format("test ({}, {} rows): accuracy {:.4f}, balanced accuracy {:.4f}\n", test_description, test_rows,
                   r.accuracy, r.balanced_accuracy);
  s += federation_test_text(out.evaluation, spec.settings.dp.has_value());
  return s;
}

nlohmann::json wire_json(const WireTraffic& w) {
  return {{"sent", w.bytes_sent},
          {"received", w.bytes_received},
          {"messages_sent", w.messages_sent},
          {"messages_received", w.messages_received}};
}

nlohmann::json coordinator_json(const CoordinatorOutcome& out, bool secure_aggregation) {
  nlohmann::json parties = nlohmann::json::array();
  for (const CoordinatorParty& p : out.parties)
    parties.push_back({{"name", p.name}, {"rank", p.rank}, {"wire_bytes", wire_json(p.wire)}});
  return {{"parties", parties},
          {"refused", out.refused},
          {"refused_total", out.refused_total},
          {"secure_aggregation", secure_aggregation},
          {"collectives", out.collectives},
          {"seconds", out.seconds},
          {"model_bytes", out.model_bytes},
          {"model_crc32", fmt::format("{:08x}", out.model_crc32)},
          {"identical_on_all_parties", true}};
}

std::string coordinator_text(const CoordinatorOutcome& out, bool secure_aggregation) {
  std::string s = fmt::format("federation of {} parties finished in {:.3f} s ({} collectives, secure "
                              "aggregation {})\n",
                              out.parties.size(), out.seconds, out.collectives, secure_aggregation ? "on" : "off");
  s += fmt::format("{:>5}  {:<24} {:>12} {:>12}\n", "rank", "party (CN)", "received", "sent");
  for (const CoordinatorParty& p : out.parties)
    s += fmt::format("{:>5}  {:<24} {:>12} {:>12}\n", p.rank, p.name, human_bytes(p.wire.bytes_received),
                     human_bytes(p.wire.bytes_sent));
  return s + fmt::format("all parties hold the identical model (crc32 {:08x}, {})\n", out.model_crc32,
                         human_bytes(out.model_bytes));
}

nlohmann::json trained_party_json(const PartyRun& run, const TrainedParty& p) {
  nlohmann::json j = federation_model_json(run.result, run.model_file);
  j.update({{"parties", p.parties},
            {"backend", p.transport},
            {"data", p.data},
            {"classes", run.result.model.labels().names()},
            {"model", p.per_rank ? p.model : p.model_path},
            {"model_per_rank", p.per_rank},
            {"parties_detail", party_reports_json(run.reports, {})},
            {"federation_test", federation_test_json(run.evaluation, run.result.model.labels(), p.dp.has_value())},
            {"differential_privacy", privacy_account_json(run.result.privacy, p.dp)}});
  return j;
}

std::string trained_party_text(const PartyRun& run, const TrainedParty& p) {
  const FlyConfig& c = run.result.model.config();
  const std::string& file = run.model_file;
  return fmt::format("federated training: {} part{} over {}; seed {} ({})\n", p.parties, p.parties == 1 ? "y" : "ies",
                     p.transport, c.seed, run.result.seed_drawn ? "drawn by party 0" : "given with --seed") +
         fmt::format("config: {}\n", c.describe()) + party_table(run.reports, {}) +
         privacy_line(run.result.privacy, p.dp) +
         (p.parties == 1 ? fmt::format("a single party (no federation): model crc32 {:08x}, {}\n",
                                       io::model_checksum(file), human_bytes(file.size()))
                         : fmt::format("all {} parties hold the identical model (crc32 {:08x}, {})\n", p.parties,
                                       io::model_checksum(file), human_bytes(file.size()))) +
         federation_test_text(run.evaluation, p.dp.has_value()) +
         fmt::format("model: {}\n", p.per_rank ? fmt::format("{} (one copy per rank)", p.model)
                                               : fmt::format("{} (written by rank 0)", p.model_path));
}

nlohmann::json joined_party_json(const JoinOutcome& p) {
  const PartyRun& run = p.run;
  nlohmann::json parties = nlohmann::json::array();
  for (const PartyReport& r : run.reports) {
    Traffic all = r.control_traffic;
    all += r.aggregate_traffic;
    nlohmann::json j = {{"rank", r.rank},
                        {"name", p.names[r.rank]},
                        {"bytes_sent", all.bytes_sent},
                        {"bytes_received", all.bytes_received},
                        {"model_crc32", fmt::format("{:08x}", r.model_crc32)}};
    // Rows and timings (which track rows) are withheld under DP and secure aggregation.
    if (r.rows) j["rows"] = *r.rows;
    if (const auto& t = r.timings) {
      j["seconds_training"] = t->training;
      j["seconds_local"] = t->setup + t->local + t->privatize;
      j["seconds_aggregate"] = t->aggregate;
    }
    parties.push_back(j);
  }
  nlohmann::json privacy = nullptr;
  if (const auto& a = run.result.privacy)
    privacy = {{"epsilon_total", a->total},
               {"epsilon_per_party", a->per_party},
               {"T", a->T},
               {"T_auto", p.dp->T_auto},
               {"exponent", dp_exponent_name(p.dp->exponent)},
               {"unit", dp_unit_name(p.dp->unit)},
               {"postprocess", dp_postprocess_name(p.dp->postprocess)},
               {"ledger", p.ledger.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.ledger)},
               {"ledger_spent", run.ledger_spent ? nlohmann::json(*run.ledger_spent) : nlohmann::json(nullptr)}};
  nlohmann::json j = federation_model_json(run.result, run.model_file);
  j.update({{"server", p.server},
            {"name", p.names[p.rank]},
            {"rank", p.rank},
            {"parties", p.names.size()},
            {"names", p.names},
            {"secure_aggregation", p.secure_aggregation},
            {"rows", run.result.rows},
            {"seconds", p.seconds},
            {"seconds_training", run.result.timings.training},
            {"seconds_aggregate", run.result.timings.aggregate},
            {"seconds_masking", p.masking_seconds},
            {"wire_bytes", wire_json(p.wire)},
            {"parties_detail", parties},
            {"federation_test", federation_test_json(run.evaluation, run.result.model.labels(), p.dp.has_value())},
            {"differential_privacy", privacy}});
  return j;
}

std::string joined_party_text(const JoinOutcome& p) {
  const PartyRun& run = p.run;
  const PartyResult& r = run.result;
  const FlyConfig& c = r.model.config();
  std::string s = fmt::format("federated training over gRPC: '{}' is rank {} of {}; secure "
                              "aggregation {}; seed {} ({})\n",
                              p.names[p.rank], p.rank, p.names.size(), p.secure_aggregation ? "on" : "off", c.seed,
                              r.seed_drawn ? "drawn by party 0" : "given with --seed") +
                  fmt::format("config: {}\n", c.describe()) +
                  fmt::format("this party: {} rows, training {:.3f} s, total {:.3f} s, sent {}, "
                              "received {} (gRPC messages)\n",
                              r.rows, r.timings.training, p.seconds, human_bytes(p.wire.bytes_sent),
                              human_bytes(p.wire.bytes_received));
  if (r.privacy)
    s += fmt::format("differential privacy ({} unit): this party spent epsilon {:.6g}; the federation is {:.6g}-DP{}\n",
                     dp_unit_name(p.dp->unit), r.privacy->per_party, r.privacy->total,
                     run.ledger_spent ? fmt::format("; ledger {}: {:.6g} of {:.6g} spent", p.ledger,
                                                    *run.ledger_spent, p.budget)
                                      : "");
  return s + fmt::format("all {} parties hold the identical model (crc32 {:08x}, {})\n", p.names.size(),
                         io::model_checksum(run.model_file), human_bytes(run.model_file.size())) +
         federation_test_text(run.evaluation, p.dp.has_value());
}

}  // namespace flynn::eval
