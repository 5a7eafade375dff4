// End to end over MPI: `mpirun -np 3 --oversubscribe flynn federated train` on three
// shards gives a model byte-identical to `flynn train` on their concatenation; a missing
// shard or a disagreeing party makes every rank exit non-zero with the reason and no model
// is written; a DP run leaves every rank with the same private model.
//
// Runs only when flynn was built with MPI and mpirun is on the PATH (otherwise skipped).
// Works on a 2-core machine: --oversubscribe, and each rank uses one worker thread.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/build_config.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;

bool mpi_available() {
#if FLYNN_HAVE_MPI
  return test::run_shell("command -v mpirun").exit_code == 0;
#else
  return false;
#endif
}

// Root in containers: Open MPI refuses without these.
const std::string kMpirun =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
    "mpirun --oversubscribe ";

void write_csv(const std::string& path, const Dataset& d, std::size_t from, std::size_t to) {
  std::ofstream f(path);
  for (std::size_t r = from; r < to; ++r) {
    for (std::size_t j = 0; j < d.n_features; ++j) f << d.row(r)[j] << ",";
    f << d.classes.name(d.labels[r]) << "\n";
  }
}

class FederatedMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!mpi_available()) GTEST_SKIP() << "flynn built without MPI or no mpirun";
    const Dataset data = test::blobs(3, 40, 6, 31);
    // Unequal shards; the last holds no row of some classes is fine too.
    write_csv(dir_.file("shard_0.csv"), data, 0, 50);
    write_csv(dir_.file("shard_1.csv"), data, 50, 70);
    write_csv(dir_.file("shard_2.csv"), data, 70, data.n_rows);
    write_csv(dir_.file("all.csv"), data, 0, data.n_rows);
  }
  std::string cli() const { return FLYNN_CLI_PATH; }
  std::string train_args(const std::string& extra) const {
    return fmt::format("{} federated train --data {}/shard_{{rank}}.csv --labels c0,c1,c2 "
                       "--threads 1 -q {}",
                       cli(), dir_.path().string(), extra);
  }
  test::TempDir dir_;
};

TEST_F(FederatedMpi, ThreeRanksByteIdenticalToCentralTraining) {
  const std::string hyper = "--m 512 --s 3 --rho 16 --gamma 0.7 --seed 99";
  const auto fed = test::run_shell(kMpirun + "-np 3 " +
                                   train_args(fmt::format("--model {} {}", dir_.file("fed.model"), hyper)));
  ASSERT_EQ(fed.exit_code, 0) << fed.out << fed.err;
  EXPECT_NE(fed.out.find("all 3 parties hold the identical model"), std::string::npos) << fed.out;
  EXPECT_NE(fed.out.find("over MPI"), std::string::npos) << fed.out;
  const auto central = test::run_cli(fmt::format("train --data {} --labels c0,c1,c2 --model {} {} -q",
                                                 dir_.file("all.csv"), dir_.file("central.model"), hyper));
  ASSERT_EQ(central.exit_code, 0) << central.err;
  EXPECT_EQ(test::read_text(dir_.file("fed.model")), test::read_text(dir_.file("central.model")));
}

// Federated evaluation over MPI: each rank scores its own test rows (here its shard), the
// ranks sum their confusion matrices, and the figures equal `flynn predict` on the pooled
// rows with the central model.
TEST_F(FederatedMpi, FederatedEvaluationEqualsCentralEvaluation) {
  const std::string hyper = "--m 512 --rho 16 --seed 99";
  const auto fed = test::run_shell(kMpirun + "-np 3 " +
                                   train_args(fmt::format("--model {} {} --test {}/shard_{{rank}}.csv --json",
                                                          dir_.file("fed.model"), hyper, dir_.path().string())));
  ASSERT_EQ(fed.exit_code, 0) << fed.out << fed.err;
  const auto j = nlohmann::json::parse(fed.out);
  const auto& t = j["federation_test"];
  EXPECT_EQ(t["parties_with_test_rows"], 3);
  EXPECT_EQ(t["rows"], 120);
  const auto central = test::run_cli(fmt::format("predict --model {} --data {} --json -q", dir_.file("fed.model"),
                                                 dir_.file("all.csv")));
  ASSERT_EQ(central.exit_code, 0) << central.err;
  const auto c = nlohmann::json::parse(central.out);
  EXPECT_DOUBLE_EQ(t["accuracy"].get<double>(), c["accuracy"].get<double>());
  std::uint64_t total = 0, diagonal = 0;
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t k = 0; k < 3; ++k) {
      total += t["confusion_matrix"][r][k].get<std::uint64_t>();
      if (r == k) diagonal += t["confusion_matrix"][r][k].get<std::uint64_t>();
    }
  EXPECT_EQ(total, 120u);
  EXPECT_DOUBLE_EQ(static_cast<double>(diagonal) / 120.0, c["accuracy"].get<double>());
}

TEST_F(FederatedMpi, MissingShardStopsEveryRankAndWritesNothing) {
  fs::remove(dir_.file("shard_1.csv"));
  const auto r = test::run_shell(kMpirun + "-np 3 " + train_args("--model " + dir_.file("x_{rank}.model")));
  EXPECT_NE(r.exit_code, 0);
  // Every rank printed the reason, naming the rank that could not read its shard.
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.err.find(fmt::format("rank {}: the federation cannot start: party 1 says: \"", rank)),
              std::string::npos)
        << r.err;
  EXPECT_NE(r.err.find("shard_1.csv"), std::string::npos);
  for (int rank = 0; rank < 3; ++rank) EXPECT_FALSE(fs::exists(dir_.file(fmt::format("x_{}.model", rank))));
}

TEST_F(FederatedMpi, DisagreeingPartyIsRefusedByName) {
  // MPMD launch: rank 0 with rho 16, ranks 1–2 with rho 17.
  const std::string model = "--model " + dir_.file("x.model") + " --m 512 --seed 1 ";
  const auto r = test::run_shell(kMpirun + "-np 1 " + train_args(model + "--rho 16") + " : -np 2 " +
                                 train_args(model + "--rho 17"));
  EXPECT_NE(r.exit_code, 0);
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.err.find(fmt::format("rank {}: party 1 is refused: its rho differs from party 0's (17 vs 16)", rank)),
              std::string::npos)
        << r.err;
  EXPECT_FALSE(fs::exists(dir_.file("x.model")));
}

TEST_F(FederatedMpi, PrivateModelIdenticalOnEveryRank) {
  const auto r = test::run_shell(
      kMpirun + "-np 3 " +
      train_args(fmt::format("--model {} --m 512 --rho 16 --dp-epsilon 1.5 --dp-T 50 --json",
                             dir_.file("dp_{rank}.model"))));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string m0 = test::read_text(dir_.file("dp_0.model"));
  EXPECT_EQ(m0, test::read_text(dir_.file("dp_1.model")));
  EXPECT_EQ(m0, test::read_text(dir_.file("dp_2.model")));
  const io::ModelContents mc = io::parse_model(m0, "dp_0.model");
  EXPECT_TRUE(mc.provenance.differentially_private);
  EXPECT_EQ(mc.provenance.dp_parties, 3u);
  EXPECT_LE(mc.counts.nonzero(), 150u);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["differential_privacy"]["epsilon_total"].get<double>(), 1.5, 1e-12);
  // Only the 50 (index, value) pairs travel: 4 + 50·8 bytes per party.
  for (const auto& p : j["parties_detail"]) EXPECT_EQ(p["aggregation_bytes"]["sent"].get<std::uint64_t>(), 404u);
}

// --dp-unit record over MPI: every rank spends the whole ε (parallel composition), the
// post-processing is applied identically on every rank.
TEST_F(FederatedMpi, RecordUnitAndPostProcessingOverMpi) {
  const auto r = test::run_shell(
      kMpirun + "-np 3 " +
      train_args(fmt::format("--model {} --m 512 --rho 16 --dp-epsilon 1.5 --dp-T 50 --dp-unit record "
                             "--dp-postprocess noise-units+class-balance --json",
                             dir_.file("rec_{rank}.model"))));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string m0 = test::read_text(dir_.file("rec_0.model"));
  EXPECT_EQ(m0, test::read_text(dir_.file("rec_1.model")));
  EXPECT_EQ(m0, test::read_text(dir_.file("rec_2.model")));
  const auto dp = nlohmann::json::parse(r.out)["differential_privacy"];
  EXPECT_EQ(dp["unit"], "record");
  EXPECT_EQ(dp["postprocess"], "noise-units+class-balance");
  EXPECT_NEAR(dp["epsilon_per_party"].get<double>(), 1.5, 1e-12);
  EXPECT_NEAR(dp["epsilon_total"].get<double>(), 1.5, 1e-12);
}

}  // namespace
}  // namespace flynn
