// Every setting travels: for each row of the
// federation's table of settings (flynn/federated/settings.hpp) the coordinator alone is
// given a non-default value — the parties get no hyper-parameter flag — and every party's
// model is byte-identical to `flynn train` with the same flag on the pooled rows (3 parties,
// secure aggregation on, over gRPC with mutual TLS); the same walk runs over MPI
// (`flynn federated train`, every rank given the flag). The DP rows cannot be compared with
// central training (the release is noised): every party reports the coordinator's values.
//
// The walk is driven by the table: a row without an example value below fails the test,
// and so does an example that central training does not distinguish from the default (the
// walk could not see the setting lost).
//
// The process helpers are a minimal copy of tests/cli/grpc_federation_test.cpp's.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_federation.hpp"
#include "cli_support.hpp"
#include "flynn/federated/settings.hpp"
#include "flynn/build_config.hpp"
#include "flynn/settings_table.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A non-default value of every setting for the walk's data (d = 5, 3 classes, 120 rows,
// missing cells), as the flag and its value. The seed of every run is 7 but in the seed's
// own walk (party 0 would draw one otherwise, which central training cannot match).
const std::map<std::string, std::vector<std::string>>& examples() {
  static const std::map<std::string, std::vector<std::string>> e = {
      {"m", {"--m", "512"}},
      {"expansion_factor", {"--expansion-factor", "100"}},
      {"s", {"--s", "3"}},
      {"connection_sparsity", {"--connection-sparsity", "0.8"}},
      {"rho", {"--rho", "32"}},
      {"wta_ratio", {"--wta-ratio", "0.01"}},
      {"wta_nnz", {"--wta-nnz", "50"}},
      {"gamma", {"--gamma", "0.7"}},
      {"seed", {"--seed", "99"}},
      {"preprocess", {"--preprocess", "none"}},
      {"variant", {"--variant", "paper"}},
      {"class_weight", {"--class-weight", "balanced"}},
      {"filter_scoring", {"--filter-scoring", "absolute"}},
      {"pairs", {"--pairs", "2"}},
      // d = 5 is below 6 columns whatever the statistics: the second half standardises.
      {"paper_half_min_columns", {"--variant", "anchor+paper", "--paper-half-min-columns", "6"}},
      // d = 5: the default anchor variant standardises, so the transform moves its statistics.
      {"value_transform", {"--value-transform", "sqrt"}},
      {"missing", {"--missing", "zero"}},
  };
  return e;
}
const std::vector<std::string> kBaseSeed = {"--seed", "7"};
// The DP rows, walked together (they take effect only together).
const std::vector<std::string> kDpFlags = {"--dp-epsilon", "4", "--dp-T", "20", "--dp-exponent", "reference",
                                           "--dp-unit", "record", "--dp-postprocess", "threshold"};
const std::vector<std::string> kDpRows = {"dp_epsilon", "dp_T", "dp_exponent", "dp_unit", "dp_postprocess"};

std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += " '" + a + "'";
  return out;
}

using test::make_pki;
using test::Process;
using test::wait_for_text;

constexpr int kParties = 3;

// Shards of a table with a header and missing cells (so the missing policy matters), the
// pooled rows, and for the DP run positional shards without missing cells.
struct Walk {
  test::TempDir dir;
  std::string labels = "c0,c1,c2";

  Walk() {
    const Dataset data = test::blobs(3, 40, 5, 23);
    std::vector<std::ofstream> shards, plain;
    for (int p = 0; p < kParties; ++p) {
      shards.emplace_back(shard(p));
      plain.emplace_back(plain_shard(p));
      shards.back() << "f1,f2,f3,f4,f5,class\n";
    }
    std::ofstream pooled_file(pooled());
    pooled_file << "f1,f2,f3,f4,f5,class\n";
    std::vector<std::string> by_party(kParties);
    for (std::size_t r = 0; r < data.n_rows; ++r) {
      std::string line, plain_line;
      for (std::size_t j = 0; j < data.n_features; ++j) {
        const std::string cell = fmt::format("{}", data.row(r)[j]);
        line += (r % 7 == 3 && j == r % 5 ? "" : cell) + ",";
        plain_line += cell + ",";
      }
      const std::string label = data.classes.name(data.labels[r]) + "\n";
      shards[r % kParties] << line << label;
      plain[r % kParties] << plain_line << label;
      by_party[r % kParties] += line + label;
    }
    for (const std::string& rows : by_party) pooled_file << rows;
  }
  std::string shard(int p) const { return dir.file(fmt::format("shard_{}.csv", p)); }
  std::string plain_shard(int p) const { return dir.file(fmt::format("plain_{}.csv", p)); }
  std::string pooled() const { return dir.file("pooled.csv"); }

  // `flynn train` on the pooled rows with `flags` (and the labels unless given): the model.
  std::string central(const std::vector<std::string>& flags, const std::string& name) const {
    const bool has_labels = std::find(flags.begin(), flags.end(), "--labels") != flags.end();
    const auto r = test::run_cli(fmt::format("train --data {} {} --model {} --quiet{}", pooled(),
                                             has_labels ? "" : "--labels " + labels,
                                             dir.file(name + ".model"), joined(flags)));
    EXPECT_EQ(r.exit_code, 0) << joined(flags) << ": " << r.err;
    return r.exit_code == 0 ? test::read_text(dir.file(name + ".model")) : "";
  }
};

// The settings every walk must cover: the rows of the federation's table, and the labels.
std::vector<std::string> rows_to_walk() {
  std::vector<std::string> rows;
  for (const auto& f : federated::federation_setting_fields()) rows.push_back(f.name);
  return rows;
}

// One step of the walk: a setting, its flags, and the model central training gives.
struct Step {
  std::string row;
  std::vector<std::string> flags;
  std::string central;
};

// The non-DP rows with their flags and central models, checked against the table: every
// row has an example (or is a DP row), and each example changes the central model.
std::vector<Step> walk_plan(const Walk& w, const std::string& central_default) {
  std::vector<Step> plan;
  for (const std::string& row : rows_to_walk()) {
    if (std::find(kDpRows.begin(), kDpRows.end(), row) != kDpRows.end()) continue;
    const auto it = examples().find(row);
    EXPECT_NE(it, examples().end()) << "setting '" << row << "' has no example: the walk must cover it";
    if (it == examples().end()) continue;
    std::vector<std::string> flags = it->second;
    if (row != "seed") flags.insert(flags.begin(), kBaseSeed.begin(), kBaseSeed.end());
    plan.push_back({row, flags, ""});
  }
  plan.push_back({"labels", {"--seed", "7", "--labels", "c2,c0,c1"}, ""});
  for (Step& step : plan) {
    step.central = w.central(step.flags, "central_" + step.row);
    EXPECT_NE(step.central, central_default)
        << step.row << ": the example is the default, so the walk could not see it lost";
  }
  return plan;
}

// ---- gRPC: serve → join ----------------------------------------------------------------------

#if FLYNN_HAVE_GRPC

std::string party_name(int p) { return fmt::format("party{}", p); }

struct GrpcFederation {
  const Walk& walk;
  std::string pki;
  int runs = 0;

  explicit GrpcFederation(const Walk& w) : walk(w), pki(w.dir.file("pki")) {
    std::vector<std::string> names = {"server"};
    for (int p = 0; p < kParties; ++p) names.push_back(party_name(p));
    make_pki(pki, names);
  }

  // One federation: the coordinator gets `serve_flags` (and the labels unless given), the
  // parties none (only --json). Returns the parties' model files, or empty on failure;
  // `json` receives each party's --json summary.
  std::vector<std::string> run(const std::vector<std::string>& serve_flags, bool plain_data,
                               std::vector<nlohmann::json>* json = nullptr) {
    ++runs;
    const std::string tag = fmt::format("run{}", runs);
    std::vector<std::string> args = {"federated", "serve", "--listen", "127.0.0.1:0", "--parties",
                                     std::to_string(kParties), "--ca", pki + "/ca.pem", "--cert",
                                     pki + "/server.pem", "--key", pki + "/server.key",
                                     "--secure-aggregation", "on", "--deadline", "60"};
    if (std::find(serve_flags.begin(), serve_flags.end(), "--labels") == serve_flags.end())
      args.insert(args.end(), {"--labels", walk.labels});
    args.insert(args.end(), serve_flags.begin(), serve_flags.end());
    const std::string serve_err = walk.dir.file(tag + "_serve.err");
    Process server(args, walk.dir.file(tag + "_serve.out"), serve_err);
    const std::string text = wait_for_text(serve_err, "(port ", 20);
    const auto at = text.find("(port ");
    EXPECT_NE(at, std::string::npos) << server.err();
    if (at == std::string::npos) return {};
    const int port = std::stoi(text.substr(at + 6));
    std::vector<std::unique_ptr<Process>> joins;
    for (int p = 0; p < kParties; ++p)
      joins.push_back(std::make_unique<Process>(
          std::vector<std::string>{"federated", "join", "--server", fmt::format("127.0.0.1:{}", port),
                                   "--ca", pki + "/ca.pem", "--cert", pki + "/" + party_name(p) + ".pem",
                                   "--key", pki + "/" + party_name(p) + ".key", "--data",
                                   plain_data ? walk.plain_shard(p) : walk.shard(p), "--model",
                                   walk.dir.file(fmt::format("{}_p{}.model", tag, p)), "--quiet", "--json"},
          walk.dir.file(fmt::format("{}_p{}.out", tag, p)), walk.dir.file(fmt::format("{}_p{}.err", tag, p))));
    std::vector<std::string> models;
    bool ok = true;
    for (int p = 0; p < kParties; ++p) {
      const int code = joins[p]->wait(90);
      EXPECT_EQ(code, 0) << joined(serve_flags) << ": party " << p << ": " << joins[p]->err();
      ok = ok && code == 0;
    }
    EXPECT_EQ(server.wait(30), 0) << server.err();
    if (!ok) return {};
    for (int p = 0; p < kParties; ++p) {
      models.push_back(test::read_text(walk.dir.file(fmt::format("{}_p{}.model", tag, p))));
      if (json) json->push_back(nlohmann::json::parse(joins[p]->out()));
    }
    return models;
  }
};

TEST(SettingsTravel, EverySettingTravelsFromServeToEveryParty) {
  const auto t0 = Clock::now();
  Walk w;
  GrpcFederation fed(w);
  const std::string central_default = w.central(kBaseSeed, "default");
  ASSERT_FALSE(central_default.empty());
  // The baseline: no setting but the seed gives central training's defaults.
  {
    const auto models = fed.run(kBaseSeed, false);
    ASSERT_EQ(models.size(), std::size_t{kParties});
    for (const std::string& m : models) EXPECT_EQ(m, central_default) << "defaults";
  }
  for (const Step& step : walk_plan(w, central_default)) {
    SCOPED_TRACE("setting " + step.row + ":" + joined(step.flags));
    const auto models = fed.run(step.flags, false);
    ASSERT_EQ(models.size(), std::size_t{kParties});
    for (int p = 0; p < kParties; ++p) EXPECT_EQ(models[p], step.central) << "party " << p;
  }

  // DP: each party reports the coordinator's values (noised models differ from central).
  std::vector<nlohmann::json> reports;
  std::vector<std::string> dp_flags = kDpFlags;
  dp_flags.insert(dp_flags.end(), kBaseSeed.begin(), kBaseSeed.end());
  const auto models = fed.run(dp_flags, true, &reports);
  ASSERT_EQ(reports.size(), std::size_t{kParties});
  for (const auto& j : reports) {
    const auto& dp = j["differential_privacy"];
    ASSERT_TRUE(dp.is_object()) << j.dump();
    EXPECT_EQ(dp["epsilon_total"], 4.0);     // record unit: each party spends all of ε
    EXPECT_EQ(dp["epsilon_per_party"], 4.0);
    EXPECT_EQ(dp["T"], 20);
    EXPECT_EQ(dp["exponent"], "reference");
    EXPECT_EQ(dp["unit"], "record");
    EXPECT_EQ(dp["postprocess"], "threshold");
  }
  for (const std::string& m : models) EXPECT_EQ(m, models[0]);
  std::printf("[ walk ] %d federations of %d parties in %.1f s\n", fed.runs, kParties,
              std::chrono::duration<double>(Clock::now() - t0).count());
}

// The coordinator's settings reach the parties and the parties' own flags still override
// them: a party that states a different value is refused, naming the field. Runs serve with
// `serve_flags` and three joins, party 2 given `party_flags`; every party must fail with
// `refusal`, and no model is written.
void expect_refused(const std::vector<std::string>& serve_flags, const std::vector<std::string>& party_flags,
                    const std::string& refusal, const std::string& tag) {
  Walk w;
  GrpcFederation fed(w);
  std::vector<std::string> args = {"federated", "serve", "--listen", "127.0.0.1:0", "--parties", "3",
                                   "--ca", fed.pki + "/ca.pem", "--cert", fed.pki + "/server.pem",
                                   "--key", fed.pki + "/server.key", "--labels", w.labels,
                                   "--deadline", "30", "--seed", "7"};
  args.insert(args.end(), serve_flags.begin(), serve_flags.end());
  const std::string serve_err = w.dir.file(tag + "_serve.err");
  Process server(args, w.dir.file(tag + "_serve.out"), serve_err);
  const std::string text = wait_for_text(serve_err, "(port ", 20);
  ASSERT_NE(text.find("(port "), std::string::npos) << server.err();
  const int port = std::stoi(text.substr(text.find("(port ") + 6));
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < kParties; ++p) {
    std::vector<std::string> j = {"federated", "join", "--server", fmt::format("127.0.0.1:{}", port),
                                  "--ca", fed.pki + "/ca.pem", "--cert", fed.pki + "/" + party_name(p) + ".pem",
                                  "--key", fed.pki + "/" + party_name(p) + ".key", "--data", w.shard(p),
                                  "--model", w.dir.file(fmt::format("{}_p{}.model", tag, p)), "--quiet"};
    if (p == 2) j.insert(j.end(), party_flags.begin(), party_flags.end());
    joins.push_back(std::make_unique<Process>(j, w.dir.file(fmt::format("{}_p{}.out", tag, p)),
                                              w.dir.file(fmt::format("{}_p{}.err", tag, p))));
  }
  for (int p = 0; p < kParties; ++p) {
    EXPECT_NE(joins[p]->wait(60), 0);
    EXPECT_NE(joins[p]->err().find(refusal), std::string::npos) << joins[p]->err();
    EXPECT_FALSE(fs::exists(w.dir.file(fmt::format("{}_p{}.model", tag, p))));
  }
  EXPECT_NE(server.wait(30), 0);
}

TEST(SettingsTravel, APartyThatDiffersFromTheCoordinatorIsNamed) {
  // The coordinator says sign; party 2 says zsign.
  expect_refused({"--variant", "sign"}, {"--variant", "zsign"},
                 "party 2 is refused: its variant differs from party 0's (zsign vs sign)", "variant");
}

// Class weights change what every party's model predicts, so a party must not join a
// federation whose weights it did not agree to: one given other weights than the
// coordinator's is refused naming class_weight, and so is one that gives weights where the
// coordinator gives none (the fingerprint then leaves the field out for the others, which
// must still name it rather than whatever field follows).
TEST(SettingsTravel, APartyWithOtherClassWeightsIsRefusedNamingThem) {
  expect_refused({"--class-weight", "balanced"}, {"--class-weight", "c0=2"},
                 "party 2 is refused: its class_weight differs from party 0's (c0=2 vs balanced)", "weights");
  expect_refused({}, {"--class-weight", "balanced"},
                 "party 2 is refused: its class_weight differs from party 0's (balanced vs (none))",
                 "weights_none");
}

// Pair filters change every party's counts and its model file: a party that gives --pairs
// where the coordinator gives none is refused naming pairs (the fingerprint leaves pairs out
// at 0, as it leaves class_weight out at none), and so is one with another number of pairs.
TEST(SettingsTravel, APartyWithOtherPairsIsRefusedNamingThem) {
  expect_refused({}, {"--pairs", "2"},
                 "party 2 is refused: its pairs differs from party 0's (2 vs (none))", "pairs_none");
  expect_refused({"--pairs", "4"}, {"--pairs", "2"},
                 "party 2 is refused: its pairs differs from party 0's (2 vs 4)", "pairs");
}

// The paper half's rule decides what a party's second half hashes: a party that states
// another threshold than the coordinator's (or none where it gives one) is refused.
TEST(SettingsTravel, APartyWithAnotherPaperHalfRuleIsRefusedNamingIt) {
  expect_refused({"--variant", "anchor+paper", "--paper-half-min-columns", "6"},
                 {"--paper-half-min-columns", "0"},
                 "party 2 is refused: its paper_half_min_columns differs from party 0's ((none) vs 6)",
                 "rule_off");
}

// The value transform decides what every party sums into the pooled statistics and what
// its encoder reads: a party that transforms otherwise than the coordinator says (or where
// it says none) is refused naming the setting, before any statistic is exchanged.
TEST(SettingsTravel, APartyWithAnotherValueTransformIsRefusedNamingIt) {
  expect_refused({}, {"--value-transform", "sqrt"},
                 "party 2 is refused: its value_transform differs from party 0's (sqrt vs (none))", "transform_none");
  expect_refused({"--value-transform", "log1p"}, {"--value-transform", "sqrt"},
                 "party 2 is refused: its value_transform differs from party 0's (sqrt vs log1p)", "transform");
}

#endif  // FLYNN_HAVE_GRPC

// ---- MPI: flynn federated train on every rank --------------------------------------------

bool mpi_available() {
#if FLYNN_HAVE_MPI
  return test::run_shell("command -v mpirun").exit_code == 0;
#else
  return false;
#endif
}

TEST(SettingsTravel, EverySettingReachesEveryMpiRank) {
  if (!mpi_available()) GTEST_SKIP() << "flynn built without MPI or no mpirun";
  const auto t0 = Clock::now();
  Walk w;
  const std::string central_default = w.central(kBaseSeed, "default");
  ASSERT_FALSE(central_default.empty());
  int runs = 0;
  for (const Step& step : walk_plan(w, central_default)) {
    const std::string& row = step.row;
    const std::vector<std::string>& flags = step.flags;
    SCOPED_TRACE("setting " + row + ":" + joined(flags));
    const bool has_labels = std::find(flags.begin(), flags.end(), "--labels") != flags.end();
    const std::string model = w.dir.file(fmt::format("mpi_{}_{{rank}}.model", row));
    const auto r = test::run_shell(fmt::format(
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        "OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --oversubscribe -np {} {} federated train "
        "--data {} {} --model {} --threads 1 -q{}",
        kParties, FLYNN_CLI_PATH, w.dir.file("shard_{rank}.csv"), has_labels ? "" : "--labels " + w.labels,
        model, joined(flags)));
    ++runs;
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    for (int p = 0; p < kParties; ++p)
      EXPECT_EQ(test::read_text(w.dir.file(fmt::format("mpi_{}_{}.model", row, p))), step.central) << "rank " << p;
  }
  std::printf("[ walk ] %d MPI federations of %d ranks in %.1f s\n", runs, kParties,
              std::chrono::duration<double>(Clock::now() - t0).count());
}

}  // namespace
}  // namespace flynn
