// The one resumable batch mechanism of the studies: a batch interrupted part-way and run
// again gives exactly the results of an uninterrupted run, computing only what was missing;
// units of other settings, unreadable units and rejected units are recomputed.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>

#include "flynn/error.hpp"
#include "flynn/harness/checkpoint.hpp"
#include "test_support.hpp"

namespace flynn::harness {
namespace {

namespace fs = std::filesystem;

// A unit's result: a function of its index only, like a seeded study unit.
nlohmann::json unit_result(std::size_t i) { return {{"value", static_cast<double>(i * i) + 0.125}, {"id", i}}; }

std::vector<BatchUnit> make_units(std::size_t n) {
  std::vector<BatchUnit> u;
  for (std::size_t i = 0; i < n; ++i) u.push_back({"unit-" + std::to_string(i), 1.0 + static_cast<double>(i % 3)});
  return u;
}

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

TEST(Checkpoint, InterruptedBatchResumesToTheSameResults) {
  test::TempDir a, b;
  const nlohmann::json settings = {{"seed", 7}, {"grid", {1, 2, 3}}};
  const auto units = make_units(12);

  // Uninterrupted reference run.
  const BatchOutcome reference = run_checkpointed(Checkpoint(a.path().string(), settings), units, unit_result);
  ASSERT_EQ(reference.results.size(), units.size());
  EXPECT_EQ(reference.resumed_count, 0u);

  // The same batch, killed after 5 units (one job, so exactly 5 finished and were saved).
  const Checkpoint cp(b.path().string(), settings);
  std::atomic<int> computed{0};
  BatchOptions one_job;
  one_job.jobs = 1;
  EXPECT_THROW(run_checkpointed(cp, units, [&](std::size_t i) {
                 if (computed == 5) throw Interrupted();
                 ++computed;
                 return unit_result(i);
               }, one_job),
               Interrupted);
  std::size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(b.path())) on_disk += e.path().extension() == ".json";
  EXPECT_EQ(on_disk, 5u);

  // Resumed on 3 jobs: only the 7 missing units are computed, and every result equals the
  // reference, resumed or not.
  std::set<std::size_t> recomputed;
  std::mutex m;
  BatchOptions three_jobs;
  three_jobs.jobs = 3;
  std::size_t announced_resumed = 0;
  three_jobs.on_start = [&](const BatchProgress& p) { announced_resumed = p.resumed; };
  std::size_t last_done = 0;
  three_jobs.on_finished = [&](std::size_t, const nlohmann::json&, const BatchProgress& p) {
    EXPECT_EQ(p.done, last_done + 1);  // serialised, counted once each
    last_done = p.done;
    EXPECT_EQ(p.todo, 7u);
  };
  const BatchOutcome resumed = run_checkpointed(cp, units, [&](std::size_t i) {
    std::lock_guard<std::mutex> lock(m);
    recomputed.insert(i);
    return unit_result(i);
  }, three_jobs);
  EXPECT_EQ(resumed.resumed_count, 5u);
  EXPECT_EQ(announced_resumed, 5u);
  EXPECT_EQ(recomputed.size(), 7u);
  EXPECT_EQ(last_done, 7u);
  for (std::size_t i = 0; i < units.size(); ++i) {
    EXPECT_EQ(resumed.results[i], reference.results[i]) << i;
    EXPECT_EQ(resumed.resumed[i], recomputed.count(i) == 0) << i;
  }
  // The unit files are the same bytes as the uninterrupted run's.
  for (const BatchUnit& u : units)
    EXPECT_EQ(test::read_text(cp.path(u.id)), test::read_text(Checkpoint(a.path().string(), settings).path(u.id)))
        << u.id;

  // A third run computes nothing.
  const BatchOutcome again = run_checkpointed(cp, units, [&](std::size_t) -> nlohmann::json {
    ADD_FAILURE() << "a finished unit was recomputed";
    return {};
  });
  EXPECT_EQ(again.resumed_count, units.size());
}

TEST(Checkpoint, OtherSettingsTornFilesAndRejectedUnitsAreRecomputed) {
  test::TempDir dir;
  const auto units = make_units(4);
  const Checkpoint old_settings(dir.path().string(), {{"seed", 1}});
  run_checkpointed(old_settings, units, unit_result);
  const Checkpoint cp(dir.path().string(), {{"seed", 2}});
  EXPECT_FALSE(cp.load("unit-0").has_value());  // saved under other settings
  ASSERT_TRUE(old_settings.load("unit-0").has_value());
  EXPECT_EQ((*old_settings.load("unit-0"))["settings"], nlohmann::json({{"seed", 1}}));

  // A torn file (as a crash mid-write of a non-atomic writer would leave) is not a result.
  run_checkpointed(cp, units, unit_result);
  { std::ofstream(cp.path("unit-1"), std::ios::trunc) << "{\"value\": 1, \"sett"; }
  EXPECT_FALSE(cp.load("unit-1").has_value());
  std::set<std::size_t> recomputed;
  BatchOptions reject_unit_2;
  reject_unit_2.accept = [](const nlohmann::json& j) { return j["id"] != 2; };
  const BatchOutcome out = run_checkpointed(cp, units, [&](std::size_t i) {
    recomputed.insert(i);
    return unit_result(i);
  }, reject_unit_2);
  EXPECT_EQ(recomputed, (std::set<std::size_t>{1, 2}));
  EXPECT_EQ(out.resumed_count, 2u);
}

TEST(Checkpoint, BadUseIsAClearError) {
  test::TempDir dir;
  const Checkpoint cp(dir.path().string(), {{"seed", 1}});
  EXPECT_THROW(cp.save("x", nlohmann::json::array()), Error);
  std::vector<BatchUnit> twice = {{"same", 1.0}, {"same", 1.0}};
  try {
    run_checkpointed(cp, twice, unit_result);
    FAIL() << "a repeated id was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("same"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flynn::harness
