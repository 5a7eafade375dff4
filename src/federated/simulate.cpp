#include "flynn/federated/simulate.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

ColonyOutcome run_colony(const std::vector<const Dataset*>& parties,
                         const FederationSettings& settings,
                         const std::vector<std::string>& errors,
                         const std::vector<const Dataset*>& tests) {
  const int tau = static_cast<int>(parties.size());
  if (tau < 1) throw Error("a federation needs at least one party");
  ThreadColony colony(tau);

  struct Slot {
    std::unique_ptr<PartyResult> result;
    std::string file;
    std::vector<PartyReport> reports;
    FederatedEvaluation evaluation;
    std::exception_ptr error;
    bool federation_error = false;
  };
  std::vector<Slot> slots(tau);

  const auto start = std::chrono::steady_clock::now();
  auto run = [&](int rank) {
    Slot& slot = slots[rank];
    try {
      PartyInput input;
      input.data = parties[rank];
      if (!input.data)
        input.error = rank < static_cast<int>(errors.size()) && !errors[rank].empty()
                          ? errors[rank]
                          : "no data";
      FederationSettings mine = settings;
      mine.progress = {};  // progress callbacks are not safe to share across parties
      slot.result = std::make_unique<PartyResult>(train_party(colony.party(rank), input, mine));
      slot.reports = compare_models(colony.party(rank), *slot.result, slot.file);
      const Dataset* test = rank < static_cast<int>(tests.size()) ? tests[rank] : nullptr;
      slot.evaluation = evaluate_together(colony.party(rank), slot.result->model, test);
    } catch (const FederationError&) {
      // Every party raises the same one: nobody is left waiting.
      slot.error = std::current_exception();
      slot.federation_error = true;
    } catch (const std::exception& e) {
      slot.error = std::current_exception();
      colony.abort(fmt::format("party {} failed: {}", rank, e.what()));
    } catch (...) {
      slot.error = std::current_exception();
      colony.abort(fmt::format("party {} failed", rank));
    }
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < tau; ++r) threads.emplace_back(run, r);
  run(0);
  for (auto& th : threads) th.join();
  const double wall = detail::seconds_since(start);

  // The root cause first: a party that failed outside the protocol, not the parties that
  // were woken by the abort it caused.
  for (const Slot& s : slots)
    if (s.error && !s.federation_error) {
      try {
        std::rethrow_exception(s.error);
      } catch (const Error& e) {
        if (std::string(e.what()).rfind("federation aborted", 0) == 0) continue;
        throw;
      }
    }
  for (const Slot& s : slots)
    if (s.error) std::rethrow_exception(s.error);

  ColonyOutcome out(std::move(slots[0].result->model));
  out.model_file = std::move(slots[0].file);
  out.reports = std::move(slots[0].reports);
  // The parties withhold their timings from one another under DP (party.hpp); the
  // simulator runs them all and knows each one's, as it knows their rows.
  for (int p = 0; p < tau; ++p) out.reports[p].timings = slots[p].result->timings;
  out.privacy = slots[0].result->privacy;
  out.seed_drawn = slots[0].result->seed_drawn;
  for (const Slot& s : slots) out.rows.push_back(s.result->rows);
  for (const Slot& s : slots) out.release_warnings.push_back(s.result->release_warning);
  out.wall_seconds = wall;
  out.evaluation = std::move(slots[0].evaluation);
  return out;
}

int threads_per_party(int threads, int parties) {
  return std::max(1, detail::resolve_threads(threads) / std::max(1, parties));
}

}  // namespace flynn::federated
