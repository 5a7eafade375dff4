// Nested cross-validation of the automatic choice (auto_config.hpp: cross_validate_auto).
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/progress_tracker.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/auto_config.hpp"
#include "flynn/eval/fly_cv.hpp"

namespace flynn::eval {

AutoCvResult cross_validate_auto(const Dataset& data, const HyperParams& given,
                                 const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                 const AutoOptions& o, bool score_every_candidate, const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: cross-validation needs labels", data.source));
  AutoCvResult res;
  res.candidates = auto_candidates(given, static_cast<std::uint32_t>(data.n_features), data.classes.size());
  res.gammas = auto_gammas(given);
  detail::ProgressTracker tracker(progress, k + res.candidates.size());
  const std::vector<FoldRows> folds = fold_rows(fold_of_row, k);
  for (std::uint32_t f = 0; f < k; ++f) {
    res.choices.push_back(choose_auto_config(data.subset(folds[f].train), given, o));
    // The same shape gives the same candidates: the indices agree with the outer scores.
    if (res.choices.back().candidates.size() != res.candidates.size())
      throw Error("auto: a fold's candidates differ from the whole data's");
    tracker.advance(1);
  }
  res.outer.resize(res.candidates.size());
  const FlyCvEvaluator outer(data, fold_of_row, k);
  for (std::size_t c = 0; c < res.candidates.size(); ++c) {
    const bool chosen = std::any_of(res.choices.begin(), res.choices.end(),
                                    [c](const AutoChoice& choice) { return choice.chosen == c; });
    if (chosen || score_every_candidate) res.outer[c] = outer.evaluate(res.candidates[c].config, res.gammas, o.threads);
    tracker.advance(1);
  }
  std::vector<double> acc, balanced, macro;
  for (std::uint32_t f = 0; f < k; ++f) {
    const AutoChoice& choice = res.choices[f];
    const CvResult& r = res.outer[choice.chosen][choice.chosen_gamma];
    acc.push_back(r.fold_accuracy[f]);
    if (r.fold_balanced_accuracy.size() == k) balanced.push_back(r.fold_balanced_accuracy[f]);
    if (r.fold_macro_f1.size() == k) macro.push_back(r.fold_macro_f1[f]);
  }
  res.cv = summarize_fold_metrics(std::move(acc), std::move(balanced), std::move(macro),
                                  detail::seconds_since(start));
  return res;
}

}  // namespace flynn::eval
