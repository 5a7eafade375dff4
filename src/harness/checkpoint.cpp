#include "flynn/harness/checkpoint.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace fs = std::filesystem;

Checkpoint::Checkpoint(std::string dir, nlohmann::json settings)
    : dir_(std::move(dir)), settings_(std::move(settings)) {}

std::string Checkpoint::path(const std::string& id) const { return (fs::path(dir_) / (id + ".json")).string(); }

std::optional<nlohmann::json> Checkpoint::load(const std::string& id) const {
  std::ifstream in(path(id));
  if (!in) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object() || !j.contains("settings") || j["settings"] != settings_) return std::nullopt;
    return j;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable or from another version: recompute
  }
}

void Checkpoint::save(const std::string& id, nlohmann::json result) const {
  if (!result.is_object()) throw Error(fmt::format("checkpoint unit {}: the result is not a JSON object", id));
  result["settings"] = settings_;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error(fmt::format("cannot create {}: {}", dir_, ec.message()));
  io::write_file_atomic(path(id), result.dump(1) + "\n");
}

BatchOutcome run_checkpointed(const Checkpoint& checkpoint, const std::vector<BatchUnit>& units,
                              const std::function<nlohmann::json(std::size_t)>& compute,
                              const BatchOptions& options) {
  {
    std::set<std::string> ids;
    for (const BatchUnit& u : units)
      if (!ids.insert(u.id).second) throw Error(fmt::format("checkpointed batch: unit id {} is repeated", u.id));
  }
  BatchOutcome out;
  out.results.resize(units.size());
  out.resumed.assign(units.size(), false);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < units.size(); ++i) {
    std::optional<nlohmann::json> stored = checkpoint.load(units[i].id);
    if (stored && (!options.accept || options.accept(*stored))) {
      out.results[i] = std::move(*stored);
      out.resumed[i] = true;
      ++out.resumed_count;
    } else {
      todo.push_back(i);
    }
  }
  // Costliest first: with concurrent jobs the last unit to start is then a cheap one.
  std::stable_sort(todo.begin(), todo.end(),
                   [&](std::size_t a, std::size_t b) { return units[a].cost > units[b].cost; });
  double total_cost = 0.0;
  for (std::size_t i : todo) total_cost += units[i].cost;

  const int jobs = std::max(1, std::min<int>(std::max(1, options.jobs),
                                             static_cast<int>(std::max<std::size_t>(1, todo.size()))));
  const auto start = std::chrono::steady_clock::now();
  std::mutex mutex;
  BatchProgress progress;
  progress.todo = todo.size();
  progress.resumed = out.resumed_count;
  double done_cost = 0.0;
  if (options.on_start) options.on_start(progress);
  detail::parallel_for(todo.size(), jobs, [&](std::size_t t, int) {
    const std::size_t i = todo[t];
    nlohmann::json result = compute(i);
    checkpoint.save(units[i].id, result);
    result["settings"] = checkpoint.settings();  // as load() would return it
    std::lock_guard<std::mutex> lock(mutex);
    ++progress.done;
    done_cost += units[i].cost;
    progress.elapsed_seconds = detail::seconds_since(start);
    progress.eta_seconds = done_cost > 0 && progress.done < progress.todo
                               ? progress.elapsed_seconds * (total_cost - done_cost) / done_cost
                               : 0.0;
    if (options.on_finished) options.on_finished(i, result, progress);
    out.results[i] = std::move(result);
  });
  return out;
}

}  // namespace flynn::harness
