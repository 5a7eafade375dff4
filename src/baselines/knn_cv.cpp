#include "flynn/baselines/knn_cv.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/metrics.hpp"
#include "flynn/eval/calibration.hpp"

namespace flynn::baselines {

std::vector<std::uint32_t> default_knn_grid() { return {1, 2, 4, 8, 16, 32, 64}; }

KnnCvResult cross_validate_knn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                               std::uint32_t k_folds, const std::vector<std::uint32_t>& k_values,
                               int threads, KnnScaling scaling) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: kNN cross-validation needs labels", data.source));
  if (fold_of_row.size() != data.n_rows) throw Error("kNN: fold assignment does not match the rows");
  if (k_values.empty()) throw Error("kNN: empty grid of k");
  std::vector<std::uint32_t> grid = k_values;
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  if (grid.front() == 0) throw Error("kNN: k must be at least 1");
  const std::uint32_t k_max = grid.back();
  const std::size_t L = data.classes.size();

  // Every row's out-of-fold prediction for each k (rows of folds without training rows
  // keep class 0, counted as wrong predictions of it, as the accuracies always did).
  std::vector<std::vector<std::uint32_t>> predicted(grid.size(), std::vector<std::uint32_t>(data.n_rows, 0));
  // Every row's k_max out-of-fold neighbours as ids into `data` (nearest first, −1 = none),
  // so the vote fractions of whichever k wins can be formed after the sweep.
  Neighbours out_of_fold;
  out_of_fold.k = k_max;
  out_of_fold.ids.assign(data.n_rows * std::size_t{k_max}, -1);
  const std::vector<eval::FoldRows> folds = eval::fold_rows(fold_of_row, k_folds);
  for (std::uint32_t f = 0; f < k_folds; ++f) {
    const eval::FoldRows& fr = folds[f];
    if (fr.test.empty() || fr.train.empty()) continue;
    const Dataset train = data.subset(fr.train);
    const Dataset test = data.subset(fr.test);
    const ExactKnnIndex index(train, threads, scaling);
    const Neighbours nb = index.search(test, k_max);
    for (std::size_t i = 0; i < fr.test.size(); ++i)
      for (std::uint32_t j = 0; j < nb.k; ++j) {
        const std::int64_t id = nb.ids[i * nb.k + j];
        if (id >= 0) out_of_fold.ids[fr.test[i] * k_max + j] = static_cast<std::int64_t>(fr.train[static_cast<std::size_t>(id)]);
      }
    for (std::size_t g = 0; g < grid.size(); ++g) {
      const std::uint32_t k = std::min(grid[g], nb.k);
      const std::vector<std::uint32_t> pred = knn_vote(nb, k, train.labels, L);
      for (std::size_t i = 0; i < fr.test.size(); ++i) predicted[g][fr.test[i]] = pred[i];
    }
  }
  KnnCvResult r;
  r.scaling = scaling;
  r.k_values = grid;
  r.seconds = detail::seconds_since(start);
  for (std::size_t g = 0; g < grid.size(); ++g) {
    r.per_k.push_back(eval::summarize_predictions(data.labels, predicted[g], fold_of_row, k_folds, L, r.seconds));
    if (r.per_k[g].mean > r.per_k[r.best].mean) r.best = g;
  }
  // A fold whose training set is smaller than k leaves −1 ids, which the fractions skip.
  r.best_vote_fractions = knn_vote_fractions(out_of_fold, grid[r.best], data.labels, L);
  return r;
}

TunedKnnCvResult cross_validate_tuned_knn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                          std::uint32_t k_folds, const std::vector<std::uint32_t>& k_values,
                                          int threads) {
  TunedKnnCvResult r;
  r.l2 = cross_validate_knn(data, fold_of_row, k_folds, k_values, threads, KnnScaling::L2Normalize);
  r.standardized = cross_validate_knn(data, fold_of_row, k_folds, k_values, threads, KnnScaling::Standardize);
  return r;
}

TunedKnnComparison compare_tuned_knn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                     std::uint32_t k_folds, const std::vector<std::uint32_t>& k_values,
                                     int threads) {
  TunedKnnComparison c;
  c.cv = cross_validate_tuned_knn(data, fold_of_row, k_folds, k_values, threads);
  const std::vector<double>& votes = c.cv.best().best_vote_fractions;
  c.log_loss = eval::log_loss(votes, data.classes.size(), data.labels);
  c.ece = eval::expected_calibration_error(votes, data.classes.size(), data.labels);
  return c;
}

}  // namespace flynn::baselines
