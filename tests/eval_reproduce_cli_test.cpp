// `flynn reproduce openml` and `flynn reproduce synthetic` end to end on tiny inputs: every
// output file, resuming, bad datasets reported and skipped, clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flynn/harness/plot.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;

void write_csv(const std::string& path, const Dataset& d) {
  std::ostringstream os;
  for (std::size_t j = 0; j < d.n_features; ++j) os << "f" << j << ",";
  os << "class\n";
  for (std::size_t r = 0; r < d.n_rows; ++r) {
    for (std::size_t j = 0; j < d.n_features; ++j) os << d.row(r)[j] << ",";
    os << d.classes.name(d.labels[r]) << "\n";
  }
  test::write_text(path, os.str());
}

// A data folder: two good sets, one unreadable CSV, one manifest entry without a file.
void make_data_dir(const test::TempDir& dir) {
  write_csv(dir.file("1_blobs.csv"), test::blobs(3, 30, 6, 1, 0.8));
  write_csv(dir.file("2_pairs.csv"), test::blobs(2, 40, 5, 2, 1.0));
  test::write_text(dir.file("3_broken.csv"), "a,b,class\n1,2,x\n3,oops,y\n");
  test::write_text(dir.file("MANIFEST.tsv"),
                   "did\tname\tL\tn\td\n1\tblobs\t3\t90\t7\n2\tpairs\t2\t80\t6\n3\tbroken\t2\t2\t3\n"
                   "4\tabsent\t2\t10\t3\n");
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(EvalReproduceCli, OpenmlWritesEverythingResumesAndSkipsBadData) {
  test::TempDir data, out;
  make_data_dir(data);
  const std::string args = fmt::format("reproduce openml --data-dir {} --out {} --budget 3 --folds 3 --no-plots",
                                       data.path().string(), out.path().string());
  const auto r = test::run_cli(args + " --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"report.md", "per_dataset.csv", "table2.csv", "results.json",
                        "datasets/1_blobs.json", "datasets/2_pairs.json", "datasets/3_broken.json"})
    EXPECT_TRUE(fs::exists(out.path() / f)) << f;
  const std::string pd = test::read_text(out.file("per_dataset.csv"));
  EXPECT_EQ(count_lines(pd), 1u + 2 * 6) << pd;
  const std::string t2 = test::read_text(out.file("table2.csv"));
  EXPECT_EQ(count_lines(t2), 1u + 5) << t2;
  EXPECT_NE(t2.find("\nSBFC,2,"), std::string::npos) << t2;
  const std::string report = test::read_text(out.file("report.md"));
  EXPECT_NE(report.find("3_broken: "), std::string::npos);
  EXPECT_NE(report.find("'oops' is not a number"), std::string::npos) << report;
  EXPECT_NE(report.find("4_absent: no data file"), std::string::npos);
  EXPECT_NE(r.err.find("ETA"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("3_broken: FAILED"), std::string::npos) << r.err;

  // Resume: the two good datasets are read back (byte-identical files), the broken one retried.
  const std::string before = test::read_text(out.file("datasets/1_blobs.json"));
  const auto again = test::run_cli(args + " --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("2 of 3 datasets already done"), std::string::npos) << again.err;
  EXPECT_EQ(test::read_text(out.file("datasets/1_blobs.json")), before);
  const auto summary = nlohmann::json::parse(again.out);
  EXPECT_EQ(summary["datasets"], 2);
  EXPECT_EQ(summary["failures"].size(), 2u);
  EXPECT_EQ(summary["table2"][0]["baseline"], "kNNC");

  // Different settings: recomputed, not mixed with the old results.
  const auto other = test::run_cli(fmt::format("reproduce openml --data-dir {} --out {} --budget 2 --folds 3 "
                                               "--no-plots --datasets blobs",
                                               data.path().string(), out.path().string()));
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.err.find("already done"), std::string::npos) << other.err;
}

TEST(EvalReproduceCli, OpenmlClearErrors) {
  test::TempDir empty, out;
  auto r = test::run_cli(fmt::format("reproduce openml --data-dir {} --out {}", empty.path().string(),
                                     out.path().string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("MANIFEST.tsv: not found"), std::string::npos) << r.err;
  test::TempDir data;
  make_data_dir(data);
  r = test::run_cli(fmt::format("reproduce openml --data-dir {} --out {} --datasets nope",
                                data.path().string(), out.path().string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("matches nope"), std::string::npos) << r.err;
  r = test::run_cli(fmt::format("reproduce openml --data-dir {} --out {} --datasets broken,absent --no-plots",
                                data.path().string(), out.path().string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("every dataset failed"), std::string::npos) << r.err;
  r = test::run_cli(fmt::format("reproduce openml --data-dir {} --search bayes", data.path().string()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("search design 'bayes'"), std::string::npos) << r.err;
}

TEST(EvalReproduceCli, OpenmlFigures) {
  if (!harness::matplotlib_available()) GTEST_SKIP() << "matplotlib not installed";
  test::TempDir data, out;
  make_data_dir(data);
  const auto r = test::run_cli(fmt::format("reproduce openml --data-dir {} --out {} --budget 2 --folds 3 "
                                           "--datasets 1,2 -q",
                                           data.path().string(), out.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"figure1_kNNC.png", "figure1_1NNC.png", "figure1_SBFC.png"}) {
    ASSERT_TRUE(fs::exists(out.path() / f)) << f;
    EXPECT_EQ(test::read_text(out.file(f)).substr(1, 3), "PNG");
  }
  EXPECT_NE(test::read_text(out.file("report.md")).find("![figure1_kNNC.png](figure1_kNNC.png)"),
            std::string::npos);
  EXPECT_NE(test::read_text(out.file("report.md")).find("## FlyNN against tuned kNN"), std::string::npos);
}

// `reproduce synthetic --quick` (the CI smoke run): both variants, 3 datasets each.
TEST(EvalReproduceCli, SyntheticQuickTables) {
  test::TempDir out;
  const auto r = test::run_cli(fmt::format("reproduce synthetic --quick --jobs 2 --out {} -q", out.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string t1 = test::read_text(out.file("table1.csv"));
  EXPECT_EQ(t1.rfind("variant,d,n,b,method,n_datasets,mean_normalized_accuracy,se,mean_accuracy\n", 0), 0u);
  EXPECT_NE(t1.find("\ndense,50,1000,0,FlyNN,3,"), std::string::npos) << t1;
  EXPECT_NE(t1.find("\nbinary,50,1000,5,SBFC,3,"), std::string::npos) << t1;
  EXPECT_EQ(count_lines(t1), 1u + 2 * 5);  // 2 configurations × 5 methods (kNNC is the reference)
  // 2 configurations × 3 datasets × 6 methods.
  EXPECT_EQ(count_lines(test::read_text(out.file("per_dataset.csv"))), 1u + 2 * 3 * 6);
  EXPECT_TRUE(fs::exists(out.path() / "table2.csv"));
  EXPECT_TRUE(fs::exists(out.path() / "results.json"));
  const std::string md = test::read_text(out.file("report.md"));
  EXPECT_NE(md.find("Table 1 analogue"), std::string::npos);
  EXPECT_NE(md.find("Table 3 analogue"), std::string::npos);
  EXPECT_NE(md.find("| binary, d = 50, n = 1000, b = 5 | 3 |"), std::string::npos) << md;
  const auto bad = test::run_cli("reproduce synthetic --variants nothing --out " + out.file("x"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--variants 'nothing'"), std::string::npos) << bad.err;
}

// `reproduce openml --quick` on the real suite (the CI smoke run), when the data is present.
TEST(EvalReproduceCli, OpenmlQuick) {
  const std::string dir = test::openml_dir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data/openml not present";
  test::TempDir out;
  const auto r = test::run_cli(
      fmt::format("reproduce openml --quick --jobs 2 --data-dir {} --out {} --no-plots --json", dir, out.path().string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["datasets"].get<int>(), 3);
  EXPECT_EQ(j["failures"].size(), 0u);
  EXPECT_EQ(j["table2"].size(), 5u);
  EXPECT_EQ(j["settings"]["search"]["budget"], 12);
  EXPECT_EQ(j["settings"]["folds"], 5);
}

}  // namespace
}  // namespace flynn
