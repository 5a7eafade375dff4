// The federated commands end to end: `federated simulate` (text and JSON, DP, bad input),
// `federated train` without mpirun (one party: byte-identical to `flynn train`), and the
// quick modes of `reproduce privacy` (alias `federated privacy-study`) and `reproduce scaling`
// (files, resumption of finished and interrupted runs, the old --out-dir spelling).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "flynn/harness/plot.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;

std::string write_blobs_csv(const test::TempDir& dir, const std::string& name, std::size_t per_class,
                            std::size_t d, std::uint64_t seed) {
  const Dataset data = test::blobs(3, per_class, d, seed);
  std::ofstream f(dir.file(name));
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    for (std::size_t j = 0; j < d; ++j) f << data.row(r)[j] << ",";
    f << data.classes.name(data.labels[r]) << "\n";
  }
  return dir.file(name);
}

std::size_t lines(const std::string& path) {
  std::ifstream f(path);
  std::size_t n = 0;
  for (std::string l; std::getline(f, l);) ++n;
  return n;
}

TEST(FederatedCli, SimulateReportsAccuracyTimesAndBytes) {
  test::TempDir dir;
  const std::string csv = write_blobs_csv(dir, "blobs.csv", 80, 6, 3);
  const auto r = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 4 --split dirichlet:0.5 --m 512 --rho 16 --json", csv));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parties"], 4);
  EXPECT_EQ(j["split"], "dirichlet:0.5");
  // Well above the 1/3 of chance (rows are L2-normalised, so blobs overlap somewhat).
  EXPECT_GT(j["accuracy"].get<double>(), 0.7);
  EXPECT_GT(j["balanced_accuracy"].get<double>(), 0.7);
  EXPECT_EQ(j["test_rows"], 48);  // stratified 20% hold-out of 240 rows
  ASSERT_EQ(j["parties_detail"].size(), 4u);
  std::uint64_t rows = 0;
  for (const auto& p : j["parties_detail"]) {
    rows += p["rows"].get<std::uint64_t>();
    EXPECT_EQ(p["aggregation_bytes"]["sent"].get<std::uint64_t>(), 512u * 3 * 4);
    EXPECT_GT(p["bytes_sent"].get<std::uint64_t>(), 512u * 3 * 4);  // + agreement messages
    EXPECT_GE(p["seconds"]["local"].get<double>(), 0.0);
    EXPECT_EQ(p["model_crc32"], j["model_crc32"]);
  }
  EXPECT_EQ(rows, 192u);
  EXPECT_TRUE(j["differential_privacy"].is_null());

  const auto text = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 3 --split by-class --test {} --m 512", csv, csv));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("classes held per party: 1 1 1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("balanced accuracy"), std::string::npos);
}

TEST(FederatedCli, SimulateWithDifferentialPrivacy) {
  test::TempDir dir;
  const std::string csv = write_blobs_csv(dir, "blobs.csv", 60, 6, 4);
  const auto r = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 3 --m 256 --rho 8 --dp-epsilon 2 --dp-T 30 --json "
      "--model {}", csv, dir.file("dp.model")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& dp = j["differential_privacy"];
  EXPECT_NEAR(dp["epsilon_total"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(dp["epsilon_per_party"].get<double>(), 2.0 / 3, 1e-12);
  EXPECT_EQ(dp["T"], 30);
  EXPECT_EQ(dp["exponent"], "paper");
  EXPECT_EQ(dp["unit"], "paper");               // the paper's split stays the default …
  EXPECT_EQ(dp["postprocess"], "noise-units");  // … the measured post-processing is the CLI's
  for (const auto& p : j["parties_detail"]) EXPECT_EQ(p["aggregation_bytes"]["sent"].get<std::uint64_t>(), 4u + 30 * 8);
  const auto info = test::run_cli("info --model " + dir.file("dp.model"));
  EXPECT_NE(info.out.find("differentially private release: epsilon=2, T=30, parties=3"), std::string::npos)
      << info.out;
}

// --dp-T auto: the rule's T (8·(ε/τ)/τ → 2^round(log2)) in the text, the JSON, the bytes
// each party sends and the model; a word other than "auto" is a clear error.
TEST(FederatedCli, DpTAutoPrintsTheResolvedT) {
  test::TempDir dir;
  const std::string csv = write_blobs_csv(dir, "blobs.csv", 60, 6, 4);
  const auto r = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 2 --m 256 --rho 8 --dp-epsilon 8 --dp-T auto --json --model {}", csv,
      dir.file("dp.model")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& dp = j["differential_privacy"];
  EXPECT_EQ(dp["T"], 16);  // 8·(8/2)/2 = 16
  EXPECT_EQ(dp["T_auto"], true);
  for (const auto& p : j["parties_detail"]) EXPECT_EQ(p["aggregation_bytes"]["sent"].get<std::uint64_t>(), 4u + 16 * 8);
  const auto info = test::run_cli("info --model " + dir.file("dp.model"));
  EXPECT_NE(info.out.find("T=16, parties=2"), std::string::npos) << info.out;
  const auto text = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 2 --m 256 --rho 8 --dp-epsilon 8 --dp-T auto", csv));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("T = 16 from --dp-T auto"), std::string::npos) << text.out;
  const auto bad = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 2 --m 256 --rho 8 --dp-epsilon 8 --dp-T many", csv));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("flynn: error: dp-T = 'many': expected a count of entries or 'auto'"), std::string::npos)
      << bad.err;
}

// The rule is FlyNN's (classifier.cpp), not the command's: update, merge and forget of a
// DP release are each refused naming why, and the model file is left as it was.
TEST(FederatedCli, DpModelRefusesUpdateMergeAndForget) {
  test::TempDir dir;
  const std::string csv = write_blobs_csv(dir, "blobs.csv", 60, 6, 4);
  const std::string dp = dir.file("dp.model"), exact = dir.file("exact.model");
  ASSERT_EQ(test::run_cli(fmt::format("federated simulate --data {} --parties 3 --m 256 --rho 8 "
                                      "--dp-epsilon 2 --dp-T 30 --quiet --model {}", csv, dp))
                .exit_code, 0);
  ASSERT_EQ(test::run_cli(fmt::format("train --data {} --m 256 --rho 8 --quiet --model {}", csv,
                                      exact)).exit_code, 0);
  const auto update = test::run_cli(fmt::format("update --model {} --data {} --quiet", dp, csv));
  EXPECT_NE(update.exit_code, 0);
  EXPECT_NE(update.err.find("differentially private model (epsilon=2)"), std::string::npos)
      << update.err;
  EXPECT_NE(update.err.find("not be covered by its epsilon"), std::string::npos) << update.err;
  for (const std::string& pair : {dp + " " + exact, exact + " " + dp}) {
    const auto merge = test::run_cli(fmt::format("merge {} --out {}", pair, dir.file("m.model")));
    EXPECT_NE(merge.exit_code, 0);
    EXPECT_NE(merge.err.find("differentially private"), std::string::npos) << merge.err;
  }
  const auto forget = test::run_cli(fmt::format("forget --model {} --data {} --quiet", dp, csv));
  EXPECT_NE(forget.exit_code, 0);
  EXPECT_NE(forget.err.find("differentially private"), std::string::npos) << forget.err;
  const auto info = test::run_cli("info --model " + dp);
  EXPECT_NE(info.out.find("differentially private release: epsilon=2"), std::string::npos);
}

// --dp-unit and --dp-postprocess on simulate and train (the gRPC commands share the
// flags): the record unit spends the whole ε per party, the paper's unit stays the default
// (the test above), and a post-processed release is reported.
TEST(FederatedCli, DpUnitAndPostProcessingOnSimulateAndTrain) {
  test::TempDir dir;
  const std::string csv = write_blobs_csv(dir, "blobs.csv", 60, 6, 4);
  const auto r = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 3 --m 256 --rho 8 --dp-epsilon 2 --dp-T 30 "
      "--dp-unit record --dp-postprocess threshold --json", csv));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto dp = nlohmann::json::parse(r.out)["differential_privacy"];
  EXPECT_NEAR(dp["epsilon_total"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(dp["epsilon_per_party"].get<double>(), 2.0, 1e-12);  // parallel composition
  EXPECT_EQ(dp["unit"], "record");
  EXPECT_EQ(dp["postprocess"], "threshold");
  const auto text = test::run_cli(fmt::format(
      "federated simulate --data {} --parties 3 --m 256 --rho 8 --dp-epsilon 2 --dp-T 30 --dp-unit record "
      "--dp-postprocess noise-units", csv));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("epsilon spent 2 in total, 2 per party"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("record unit, parallel composition"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("release post-processed: noise-units"), std::string::npos) << text.out;
  // `federated train` alone (one party: both units spend ε) takes the same flags.
  const auto t = test::run_cli(fmt::format(
      "federated train --data {} --labels c0,c1,c2 --model {} --m 256 --rho 8 --dp-epsilon 1 --dp-T 20 "
      "--dp-unit record --dp-postprocess class-balance --json -q", csv, dir.file("solo.model")));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto tj = nlohmann::json::parse(t.out)["differential_privacy"];
  EXPECT_EQ(tj["unit"], "record");
  EXPECT_EQ(tj["postprocess"], "class-balance");
  EXPECT_NEAR(tj["epsilon_per_party"].get<double>(), 1.0, 1e-12);
}

TEST(FederatedCli, BadInputIsAClearError) {
  test::TempDir dir;
  const std::string csv = write_blobs_csv(dir, "blobs.csv", 20, 4, 5);
  const std::string narrow = write_blobs_csv(dir, "narrow.csv", 20, 3, 5);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--split random", "split: 'random' is not one of"},
      {"--split dirichlet:-2", "must be positive"},
      {"--parties 0", "--parties 0"},
      {"--dp-epsilon 1", "--dp-epsilon and --dp-T go together"},
      {"--dp-epsilon -1 --dp-T 4", "dp-epsilon = -1"},
      {"--dp-epsilon 1 --dp-T 100000000 --m 64", "dp-T = 100000000"},
      {"--dp-epsilon 1 --dp-T 5 --dp-exponent sharp", "dp-exponent: 'sharp'"},
      {"--dp-epsilon 1 --dp-T 5 --dp-unit row", "dp-unit: 'row'"},
      {"--dp-epsilon 1 --dp-T 5 --dp-postprocess clamp", "dp-postprocess: 'clamp'"},
      {"--dp-unit record", "need --dp-epsilon and --dp-T"},
      {"--test " + narrow, "narrow.csv"},
      {"--labels c0,c1", "label 'c2' is not one of"},
      {"--rho 0", "rho = 0"},
  };
  for (const auto& [args, want] : cases) {
    const auto r = test::run_cli(fmt::format("federated simulate --data {} {}", csv, args));
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find(want), std::string::npos) << args << " → " << r.err;
    // One error line; a header guess may add its "flynn: note:" line before it (the
    // note tells what --header would change, which is what such an error needs).
    std::size_t errors = 0, others = 0;
    for (std::size_t at = 0; at < r.err.size();) {
      const std::size_t end = std::min(r.err.find('\n', at), r.err.size());
      const std::string_view line(r.err.data() + at, end - at);
      if (line.starts_with("flynn: error: ")) ++errors;
      else if (!line.starts_with("flynn: note: ")) ++others;
      at = end + 1;
    }
    EXPECT_EQ(errors, 1u) << "one error line: " << r.err;
    EXPECT_EQ(others, 0u) << "only notes beside it: " << r.err;
  }
  const auto missing = test::run_cli("federated simulate --data " + dir.file("nope.csv"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nope.csv"), std::string::npos);
  // train without mpirun: a bad shard is reported, nothing is written.
  const auto t = test::run_cli(fmt::format("federated train --data {} --labels c0,c1,c2 --model {}",
                                           dir.file("nope_{rank}.csv"), dir.file("m.model")));
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("nope_0.csv"), std::string::npos) << t.err;
  EXPECT_FALSE(fs::exists(dir.file("m.model")));
  const auto b = test::run_cli(fmt::format("federated train --data {} --labels c0,c1,c2 --model x --backend carrier-pigeon", csv));
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("--backend"), std::string::npos);
}

TEST(FederatedCli, SoloTrainIsByteIdenticalToTrain) {
  test::TempDir dir;
  const std::string csv = write_blobs_csv(dir, "blobs.csv", 30, 5, 6);
  const std::string hyper = "--m 300 --s 2 --rho 9 --gamma 0.4 --seed 12 --preprocess densify";
  const auto f = test::run_cli(fmt::format("federated train --data {} --labels c2,c0,c1 --model {} {} -q",
                                           csv, dir.file("fed.model"), hyper));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("a single party (no federation)"), std::string::npos) << f.out;
  const auto c = test::run_cli(fmt::format("train --data {} --labels c2,c0,c1 --model {} {} -q", csv,
                                           dir.file("central.model"), hyper));
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(test::read_text(dir.file("fed.model")), test::read_text(dir.file("central.model")));
}

// privacy_raw.csv's rows of one method ("non-private" or "dp"), without the timing column.
std::vector<std::string> raw_rows(const std::string& path, const std::string& method) {
  std::vector<std::string> out;
  std::ifstream f(path);
  for (std::string l; std::getline(f, l);)
    if (l.find("," + method + ",") != std::string::npos) out.push_back(l.substr(0, l.rfind(',')));
  return out;
}

TEST(FederatedCli, PrivacyStudyQuick) {
  test::TempDir dir;
  const std::string out = dir.file("ps");
  const auto r = test::run_cli(fmt::format(
      "reproduce privacy --out {} --quick --no-fashion --repetitions 1 -q --json", out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"privacy_raw.csv", "privacy_summary.csv", "privacy_best.csv", "per_dataset.csv",
                        "report.md", "results.json"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  if (harness::matplotlib_available()) {
    EXPECT_GT(fs::file_size(fs::path(out) / "privacy_accuracy_vs_T.png"), 1000u);
    EXPECT_GT(fs::file_size(fs::path(out) / "privacy_best_vs_epsilon.png"), 1000u);
  }
  // 4 settings × (1 non-private + 3 ε × 4 T) points, plus the header.
  EXPECT_EQ(lines(out + "/privacy_raw.csv"), 1u + 4 * (1 + 3 * 4));
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["groups"].size(), 4u);
  for (const auto& g : j["groups"]) EXPECT_GT(g["nonprivate"]["mean"].get<double>(), 0.55);
  // A rerun with the same grid resumes: nothing is recomputed or duplicated.
  const auto dp_before = raw_rows(out + "/privacy_raw.csv", "dp");
  const auto again = test::run_cli(fmt::format(
      "reproduce privacy --out {} --quick --no-fashion --repetitions 1 -q", out));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(lines(out + "/privacy_raw.csv"), 1u + 4 * (1 + 3 * 4));
  // DP noise is fresh on every computation, so equal DP points prove they were read back.
  EXPECT_EQ(raw_rows(out + "/privacy_raw.csv", "dp"), dp_before);
}

// Both units and two post-processings: 2 × 2 variants per (ε, T), each drawn as its own
// curve family, with the 26-class group.
TEST(FederatedCli, PrivacyStudyComparesUnitsAndPostProcessings) {
  test::TempDir dir;
  const std::string out = dir.file("ps");
  const auto r = test::run_cli(fmt::format(
      "reproduce privacy --out {} --quick --no-fashion --repetitions 1 --multiclass --dp-unit paper,record "
      "--dp-postprocess none,threshold,none -q --json", out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 5 groups × (1 non-private + 3 ε × 4 T × 2 units × 2 post-processings), plus the header.
  EXPECT_EQ(lines(out + "/privacy_raw.csv"), 1u + 5 * (1 + 3 * 4 * 2 * 2));
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["groups"].size(), 5u);
  EXPECT_EQ(j["variants"].size(), 4u);
  EXPECT_EQ(j["groups"][4]["dataset"], "synthetic-26");
  EXPECT_GT(j["groups"][4]["nonprivate"]["mean"].get<double>(), 0.5);  // chance is 1/26
  EXPECT_EQ(j["groups"][0]["best"].size(), 3u * 4);
  const std::string best = test::read_text(out + "/privacy_best.csv");
  EXPECT_NE(best.find(",record,threshold,"), std::string::npos);
  if (harness::matplotlib_available()) {
    EXPECT_GT(fs::file_size(fs::path(out) / "privacy_variants.png"), 1000u);
  }
  const auto bad = test::run_cli(fmt::format("reproduce privacy --out {} --quick --dp-unit row", out));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("dp-unit: 'row'"), std::string::npos) << bad.err;
}

TEST(FederatedCli, PrivacyStudyResumesAnInterruptedRunAndKeepsItsOldNames) {
  test::TempDir dir;
  const std::string out = dir.file("ps");
  // The old command name and the old --out-dir spelling still work.
  const auto first = test::run_cli(fmt::format(
      "federated privacy-study --out-dir {} --quick --no-fashion --repetitions 2 -q", out));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto np_full = raw_rows(out + "/privacy_raw.csv", "non-private");
  const auto dp_full = raw_rows(out + "/privacy_raw.csv", "dp");
  ASSERT_EQ(np_full.size(), 8u);
  // An interrupted run: two of the eight trials never finished.
  std::vector<fs::path> trials;
  for (const auto& e : fs::directory_iterator(fs::path(out) / "trials")) trials.push_back(e.path());
  ASSERT_EQ(trials.size(), 8u);
  std::sort(trials.begin(), trials.end());
  fs::remove(trials[1]);
  fs::remove(trials[6]);
  const auto resumed = test::run_cli(fmt::format("reproduce privacy --out {} --quick --no-fashion --repetitions 2 -q", out));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  // The non-private model is deterministic: the same numbers whether resumed or recomputed.
  EXPECT_EQ(raw_rows(out + "/privacy_raw.csv", "non-private"), np_full);
  // The six finished trials were read back (their DP points unchanged), the two others rerun.
  const auto dp_resumed = raw_rows(out + "/privacy_raw.csv", "dp");
  ASSERT_EQ(dp_resumed.size(), dp_full.size());
  std::size_t same = 0;
  for (std::size_t i = 0; i < dp_full.size(); ++i) same += dp_full[i] == dp_resumed[i];
  EXPECT_GE(same, 6u * 12);
  EXPECT_LT(same, dp_full.size());
  // A different grid (other seed) recomputes instead of mixing results.
  const auto other = test::run_cli(fmt::format(
      "reproduce privacy --out {} --quick --no-fashion --repetitions 2 --seed 1 -q", out));
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(raw_rows(out + "/privacy_raw.csv", "non-private"), np_full);
}

TEST(FederatedCli, ReproduceScalingQuick) {
  if (test::digits_csv().empty()) GTEST_SKIP() << "scikit-learn's digits.csv.gz is not installed";
  test::TempDir dir;
  const std::string out = dir.file("sc");
  const auto r = test::run_cli(fmt::format("reproduce scaling --out {} --quick --repetitions 1 -q --json", out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"runs.csv", "scaling.csv", "per_dataset.csv", "report.md", "results.json"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  if (harness::matplotlib_available()) {
    EXPECT_GT(fs::file_size(fs::path(out) / "scaling.png"), 1000u);
  }
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["datasets"].size(), 1u);
  const auto& digits = j["datasets"][0];
  EXPECT_EQ(digits["dataset"], "digits");
  EXPECT_GT(digits["accuracy"].get<double>(), 0.9);
  ASSERT_EQ(digits["parties"].size(), 3u);
  for (const auto& p : digits["parties"]) {
    EXPECT_TRUE(p["identical_to_central"].get<bool>());
    EXPECT_GT(p["mean_seconds"].get<double>(), 0.0);
  }
  EXPECT_NE(test::read_text(out + "/report.md").find("core"), std::string::npos);
  EXPECT_EQ(lines(out + "/runs.csv"), 4u);
  const std::string runs_before = test::read_text(out + "/runs.csv");
  const auto again = test::run_cli(fmt::format("reproduce scaling --out {} --quick --repetitions 1 -q", out));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(test::read_text(out + "/runs.csv"), runs_before);  // resumed (same timings), not rerun
  // An interrupted run (the τ = 2 run never finished), resumed with the old --out-dir
  // spelling: only that run is measured again; the model checksums stay the central one's.
  ASSERT_TRUE(fs::remove(fs::path(out) / "runs" / "digits-tau2-r00.json"));
  const auto resumed = test::run_cli(fmt::format("reproduce scaling --out-dir {} --quick --repetitions 1 -q --json", out));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const std::string runs_after = test::read_text(out + "/runs.csv");
  EXPECT_EQ(lines(out + "/runs.csv"), 4u);
  EXPECT_NE(runs_after, runs_before);  // the τ = 2 run has new timings
  EXPECT_EQ(runs_after.substr(0, runs_after.find("\ndigits,2,")), runs_before.substr(0, runs_before.find("\ndigits,2,")));
  const nlohmann::json summary = nlohmann::json::parse(resumed.out);  // kept alive for the loop
  for (const auto& p : summary["datasets"][0]["parties"])
    EXPECT_TRUE(p["identical_to_central"].get<bool>());
  const auto bad = test::run_cli(fmt::format("reproduce scaling --out {} --parties 1,x", out));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--parties: 'x' is not a number"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace flynn
