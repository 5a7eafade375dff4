#include "flynn/harness/scaling_study.hpp"

#include <algorithm>

#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

using namespace flynn::federated;  // the studies drive the federated layer

ScalingRun scaling_run(const Dataset& train, const HyperParams& hyper, const LabelSet& labels,
                       int parties, int repetition, std::uint64_t split_seed) {
  const auto split = split_rows(train.labels, train.classes.size(), parties, SplitSpec{},
                                split_seed + static_cast<std::uint64_t>(repetition));
  std::vector<Dataset> shards;
  shards.reserve(split.size());
  for (const auto& rows : split) shards.push_back(train.subset(rows));
  std::vector<const Dataset*> ptrs;
  for (const Dataset& d : shards) ptrs.push_back(&d);

  FederationSettings settings;
  settings.hyper = hyper;
  settings.labels = labels;
  settings.threads = 1;
  const ColonyOutcome out = run_colony(ptrs, settings);

  ScalingRun run;
  run.parties = parties;
  run.repetition = repetition;
  run.wall_seconds = out.wall_seconds;
  // run_colony fills in every party's timings.
  run.aggregate_min = out.reports.front().timings->aggregate;
  for (const PartyReport& r : out.reports) {
    const PartyTimings& t = *r.timings;
    run.training_seconds = std::max(run.training_seconds, t.training);
    run.setup_max = std::max(run.setup_max, t.setup);
    run.local_max = std::max(run.local_max, t.local);
    run.local_mean += t.local / static_cast<double>(out.reports.size());
    run.wait_max = std::max(run.wait_max, t.wait);
    run.aggregate_min = std::min(run.aggregate_min, t.aggregate);
    run.aggregate_max = std::max(run.aggregate_max, t.aggregate);
    run.finalize_max = std::max(run.finalize_max, t.finalize);
    run.compute_cpu_max = std::max(run.compute_cpu_max, t.compute_cpu);
    run.compute_cpu_sum += t.compute_cpu;
  }
  run.aggregate_traffic = out.reports.front().aggregate_traffic;
  run.control_traffic = out.reports.front().control_traffic;
  run.model_crc32 = io::model_checksum(out.model_file);
  return run;
}

}  // namespace flynn::harness
