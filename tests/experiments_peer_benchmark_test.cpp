// `flynn bench --peers` (peer_benchmark.hpp) and `flynn bench --file-path`
// (file_path_benchmark.hpp) on small data: the Pareto front and accuracy levels are what
// their definitions say, every line is filled, and the file path trains the in-process
// model through the same kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "flynn/baselines/ann_index.hpp"
#include "flynn/harness/file_path_benchmark.hpp"
#include "flynn/harness/peer_benchmark.hpp"
#include "test_support.hpp"

namespace flynn::harness {
namespace {

PeerResult line(const char* method, bool flynn, double accuracy, double predict_1t) {
  PeerResult r;
  r.method = method;
  r.setting = flynn ? "s (d=1)" : "nprobe=1";
  r.flynn = flynn;
  r.accuracy = accuracy;
  r.predict_1t = predict_1t;
  return r;
}

TEST(PeerBenchmark, ParetoFrontAndFastestAtEachAccuracy) {
  PeerBenchmarkReport rep;
  rep.results = {line("FAISS exact", false, 0.85, 7.0), line("FAISS IVF", false, 0.84, 0.6),
                 line("FlyNN", true, 0.81, 1.7),          line("FlyNN", true, 0.737, 0.5),
                 line("hnswlib", false, 0.84, 1.1)};
  mark_pareto_and_levels(rep);
  std::vector<bool> front;
  for (const PeerResult& r : rep.results) front.push_back(r.pareto);
  // The IVF line dominates the slower, no more accurate hnswlib and FlyNN defaults.
  EXPECT_EQ(front, (std::vector<bool>{true, true, false, true, false}));
  auto level = [&](double l) -> const AccuracyLevel& {
    for (const AccuracyLevel& a : rep.levels)
      if (std::abs(a.level - l) < 1e-9) return a;
    ADD_FAILURE() << "no level " << l;
    return rep.levels.front();
  };
  EXPECT_EQ(level(0.84).fastest_peer, 1);
  EXPECT_EQ(level(0.84).fastest_flynn, -1);
  EXPECT_EQ(level(0.80).fastest_flynn, 2);
  EXPECT_EQ(level(0.70).fastest_flynn, 3);
  EXPECT_EQ(level(0.81).fastest_peer, 1);  // a FlyNN setting's own accuracy is a level
  EXPECT_EQ(level(0.737).fastest_flynn, 3);
  const std::string text = to_text(rep);
  EXPECT_NE(text.find("FlyNN settings on the Pareto front"), std::string::npos) << text;
  const std::string csv = to_csv(rep);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 6) << csv;
}

TEST(PeerBenchmark, SmokeRunFillsEveryLine) {
  const Dataset train = test::blobs(3, 120, 16, 5);
  Dataset test_rows = test::blobs(3, 15, 16, 5);
  test_rows.relabel(train.classes);
  PeerBenchmarkOptions o;
  o.threads = 2;
  o.smoke = true;
  std::vector<std::string> steps;
  o.log = [&](const std::string& s) { steps.push_back(s); };
  const PeerBenchmarkReport rep = run_peer_benchmark(train, test_rows, o);
  std::size_t expected = 0, flynn = 0;
  for (const PeerSpec& s : peer_specs(true)) expected += s.breadths.size();
  for (const PeerResult& r : rep.results) {
    flynn += r.flynn;
    EXPECT_GT(r.build_1t, 0) << r.method << " " << r.setting;
    EXPECT_GT(r.predict_1t, 0) << r.method << " " << r.setting;
    EXPECT_GT(r.predict_all, 0) << r.method << " " << r.setting;
    EXPECT_GE(r.accuracy, 0.5) << r.method << " " << r.setting;  // separated blobs
    EXPECT_GT(r.size_bytes, 0u) << r.method << " " << r.setting;
  }
  EXPECT_EQ(flynn, 2u);  // defaults and paper
  EXPECT_EQ(rep.results.size(), expected + flynn);
  EXPECT_EQ(peer_specs(true).size(), have_hnswlib() ? 4u : 3u);
  EXPECT_FALSE(steps.empty());
  EXPECT_FALSE(rep.levels.empty());
  EXPECT_EQ(to_json(rep)["results"].size(), rep.results.size());
}

TEST(FilePathBenchmark, TheFileAndTheArrayTakeTheSameKernelAndGiveTheSameModel) {
  // Pixels 0..255 with integer class names, as Fashion-MNIST's.
  std::vector<std::vector<float>> rows;
  std::vector<std::string> labels;
  for (int r = 0; r < 90; ++r) {
    std::vector<float> x(20);
    for (int j = 0; j < 20; ++j) x[j] = static_cast<float>((r * 7 + j * (r % 3 + 2) * 13) % 256);
    rows.push_back(x);
    labels.push_back(std::to_string(r % 3 * 2));
  }
  test::TempDir dir;
  const std::string images = write_idx_pair(test::make_dataset(rows, labels), 60, dir.path().string());
  FilePathBenchmarkOptions o;
  o.threads = 2;
  o.repeats = 1;
  const FilePathBenchmarkReport rep = run_file_path_benchmark(images, o);
  EXPECT_EQ(rep.rows, 60u);
  EXPECT_EQ(rep.features, 20u);
  ASSERT_EQ(rep.results.size(), 4u);  // paper and defaults, 1 and 2 threads
  for (const FilePathResult& r : rep.results) {
    EXPECT_TRUE(r.identical) << r.setting << " on " << r.threads;
    EXPECT_EQ(r.file_row_elements, "uint8");
    EXPECT_EQ(r.file_row_path, r.in_process_row_path) << r.setting;
  }
  EXPECT_EQ(rep.results[0].file_row_path, "uint8");  // the paper's method: raw pixels
  EXPECT_NE(to_text(rep).find("| paper | 1 |"), std::string::npos) << to_text(rep);
}

}  // namespace
}  // namespace flynn::harness
