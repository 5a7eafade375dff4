#pragma once
// The one resumable batch mechanism of the studies (openml, synthetic, privacy, scaling).
//
// A study is a list of work units (a dataset, a privacy trial, a scaling run). Each
// finished unit is saved at once, atomically, as <dir>/<unit id>.json, stamped with the
// settings that produced it. A rerun with the same settings reads finished units back
// instead of recomputing them, so an interrupted study resumes where it stopped and a
// finished one is only re-reported; a unit saved under other settings is recomputed.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// The folder of one study's finished units.
class Checkpoint {
 public:
  /// `dir`: the folder (created by the first save). `settings`: what makes a result
  /// valid for this run; stored in every unit as its "settings" member.
  Checkpoint(std::string dir, nlohmann::json settings);

  /// The folder.
  const std::string& dir() const { return dir_; }
  /// The settings every unit is stamped with.
  const nlohmann::json& settings() const { return settings_; }
  /// Where unit `id` is stored: <dir>/<id>.json.
  std::string path(const std::string& id) const;

  /// Unit `id` as saved by an earlier run with equal settings; nullopt when it is missing,
  /// unreadable (a file of another version) or was computed with other settings.
  std::optional<nlohmann::json> load(const std::string& id) const;

  /// Saves `result` (a JSON object) as unit `id`, with its "settings" member set to this
  /// checkpoint's settings, atomically (write to a temporary file, then rename), so a
  /// killed run never leaves a torn unit behind. Throws flynn::Error when it cannot write.
  void save(const std::string& id, nlohmann::json result) const;

 private:
  std::string dir_;
  nlohmann::json settings_;
};

/// One unit of a checkpointed batch.
struct BatchUnit {
  std::string id;     ///< the Checkpoint id (also names the unit in progress messages)
  double cost = 1.0;  ///< relative cost estimate: costly units start first; weights the ETA
};

/// Where a checkpointed batch stands after a unit finished.
struct BatchProgress {
  std::size_t done = 0;     ///< units computed by this run so far (resumed ones not included)
  std::size_t todo = 0;     ///< units this run computes (total − resumed)
  std::size_t resumed = 0;  ///< units read back from the checkpoint
  double elapsed_seconds = 0;  ///< since the batch started computing
  double eta_seconds = 0;      ///< remaining time, from the cost done so far
};

/// How to run a checkpointed batch.
struct BatchOptions {
  /// Units computed concurrently (≥ 1). Units of one batch must be independent.
  int jobs = 1;
  /// Whether a stored result counts as finished (default: every stored result does);
  /// a rejected one (say, a failure worth retrying) is recomputed.
  std::function<bool(const nlohmann::json&)> accept;
  /// Called once before any unit is computed, with done = 0, todo and resumed set (say,
  /// to announce how much work was read back).
  std::function<void(const BatchProgress&)> on_start;
  /// Called once per computed unit, after it was saved, serialised (never two at once),
  /// with the unit's index, its result and the batch's progress.
  std::function<void(std::size_t, const nlohmann::json&, const BatchProgress&)> on_finished;
};

/// The results of a batch, in unit order.
struct BatchOutcome {
  std::vector<nlohmann::json> results;  ///< each unit's result (with its "settings" member)
  std::vector<bool> resumed;            ///< read back from the checkpoint rather than computed
  std::size_t resumed_count = 0;        ///< how many were read back
};

/// Runs every unit of `units` not already finished in `checkpoint`: finished ones are read
/// back; the others are computed by `compute(index)` (largest cost first, `jobs` at a
/// time) and saved as soon as each finishes. An exception from `compute` propagates
/// (units already saved stay saved); a unit that fails in a way worth reporting should
/// return a result saying so instead. Unit ids must be unique.
BatchOutcome run_checkpointed(const Checkpoint& checkpoint, const std::vector<BatchUnit>& units,
                              const std::function<nlohmann::json(std::size_t)>& compute,
                              const BatchOptions& options = {});

}  // namespace flynn::harness
