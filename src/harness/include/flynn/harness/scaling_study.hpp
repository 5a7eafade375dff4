#pragma once
// One measurement of the scaling study (paper Fig. 2, Tables 5–7; spec section 7): the
// training time of FlyNNFL when a data set is split evenly among τ parties that train in
// parallel.
//
// Each party is one thread with ONE worker thread of its own (a party stands for one
// machine's core), all parties of the colony run concurrently, and the time is the
// slowest party's training time (PartyTimings::training: agreement, lifting matrix,
// counting, status, all-reduce — until it holds the aggregated counts). The speed-up over
// τ = 1 is therefore bounded by the cores of the machine running the study: with C cores,
// at most min(τ, C).
#include <cstdint>
#include <string>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/federated/communicator.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

struct ScalingRun {
  int parties = 1;
  int repetition = 0;
  double training_seconds = 0;  ///< max over parties of PartyTimings::training
  double wall_seconds = 0;      ///< the whole colony, model building and checks included
  double setup_max = 0;         ///< lifting matrix construction, slowest party
  double local_max = 0;         ///< local counting, slowest party
  double local_mean = 0;        ///< local counting, mean over parties
  double wait_max = 0;          ///< status all-gather (waiting for the slowest), max
  double aggregate_min = 0;     ///< counts all-reduce: the fastest party's time, i.e. the
                                ///< transfer itself with no waiting for others
  double aggregate_max = 0;     ///< counts all-reduce, slowest party
  double finalize_max = 0;      ///< building the model from the aggregated counts
  /// CPU seconds of the busiest party's computation (PartyTimings::compute_cpu): the
  /// critical path if every party had a core of its own. Unlike the wall times it does not
  /// grow when other processes compete for the cores, so τ=1's value over τ's is the
  /// speed-up τ machines would give (communication aside).
  double compute_cpu_max = 0;
  double compute_cpu_sum = 0;   ///< all parties' computation, CPU seconds
  federated::Traffic aggregate_traffic;    ///< party 0's all-reduce traffic (the same for every party)
  federated::Traffic control_traffic;      ///< party 0's agreement + status traffic
  std::uint32_t model_crc32 = 0;  ///< CRC-32 of the model file (identical for every τ)
};

/// Splits `train` IID and evenly among `parties` parties (seed `split_seed`), runs the
/// federation on threads (one worker thread per party), and returns the timings.
/// `labels` is the full label list.
ScalingRun scaling_run(const Dataset& train, const HyperParams& hyper, const LabelSet& labels,
                       int parties, int repetition, std::uint64_t split_seed);

}  // namespace flynn::harness
