// Nested cross-validation of the automatic choice (auto_config.hpp: cross_validate_auto).
#include <chrono>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/progress_tracker.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/auto_config.hpp"
#include "flynn/eval/fly_cv.hpp"

namespace flynn::experiments {

namespace {

double mean_of(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

}  // namespace

AutoCvResult cross_validate_auto(const Dataset& data, const HyperParams& given,
                                 const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                 const AutoOptions& o, const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: cross-validation needs labels", data.source));
  AutoCvResult res;
  res.candidates = auto_candidates(given, static_cast<std::uint32_t>(data.n_features), data.classes.size(),
                                   o.candidates);
  res.gammas = auto_gammas(given);
  detail::ProgressTracker tracker(progress, res.candidates.size() + k);
  const FlyCvEvaluator outer(data, fold_of_row, k);
  for (const AutoCandidate& c : res.candidates) {
    res.outer.push_back(outer.evaluate(c.config, res.gammas, o.threads));
    tracker.advance(1);
  }
  const std::vector<FoldRows> folds = fold_rows(fold_of_row, k);
  std::vector<double> acc, balanced, macro;
  for (std::uint32_t f = 0; f < k; ++f) {
    AutoChoice choice = choose_auto_config(data.subset(folds[f].train), given, o);
    // The same shape gives the same candidates: the indices agree with the outer scores.
    if (choice.candidates.size() != res.candidates.size())
      throw Error("auto: a fold's candidates differ from the whole data's");
    const CvResult& r = res.outer[choice.chosen][choice.chosen_gamma];
    acc.push_back(r.fold_accuracy[f]);
    if (r.fold_balanced_accuracy.size() == k) balanced.push_back(r.fold_balanced_accuracy[f]);
    if (r.fold_macro_f1.size() == k) macro.push_back(r.fold_macro_f1[f]);
    res.choices.push_back(std::move(choice));
    tracker.advance(1);
  }
  res.cv = summarize_folds(acc, detail::seconds_since(start));
  res.cv.fold_balanced_accuracy = balanced;
  res.cv.fold_macro_f1 = macro;
  res.cv.balanced_accuracy = mean_of(balanced);
  res.cv.macro_f1 = mean_of(macro);
  return res;
}

}  // namespace flynn::experiments
