#pragma once
// The appendix-D.7 baselines: multinomial logistic regression and a one-hidden-layer MLP,
// each trained for exactly ONE epoch (every training row is seen once).
//
// Protocol (simple, stated, seeded):
//   * features are standardised with the TRAINING fold's mean and standard deviation
//     (constant columns become 0), as scikit-learn users usually do before SGD;
//   * one epoch of minibatch SGD (batch 32, no momentum, no weight decay) over the
//     training rows in a seeded random order; loss = mean softmax cross-entropy of the batch;
//   * LR: weights and biases start at 0;
//   * MLP: 100 ReLU hidden units (scikit-learn's default size), He-normal initial
//     weights N(0, 2/fan_in) for the hidden layer and N(0, 1/fan_in) for the output layer,
//     zero biases;
//   * the learning rate is tuned on the shared folds over a small grid (like k for kNNC
//     and m for SBFC); the best mean CV accuracy is reported.
// Randomness comes from SeededRng stream (seed, Baseline, index): index 2·(tag | fold)
// for the row order and 2·(tag | fold) + 1 for the MLP's initial weights, with distinct
// tags for LR and MLP, so every learning rate of a fold starts from the same weights and
// sees the rows in the same order.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/eval/cross_validation.hpp"

namespace flynn::baselines {

inline constexpr std::uint64_t kLogisticStreamTag = 2ULL << 60;
inline constexpr std::uint64_t kMlpStreamTag = 3ULL << 60;

/// Column means and standard deviations of a set of rows; transform() maps x to
/// (x − mean)/sd, with sd = 1 for constant columns.
class Standardizer {
 public:
  /// Statistics of data's `rows` (all rows when empty).
  Standardizer(const Dataset& data, const std::vector<std::size_t>& rows);
  /// Standardised copy of data's `rows` (row-major, rows.size() × d).
  std::vector<float> transform(const Dataset& data, const std::vector<std::size_t>& rows) const;
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& scale() const { return scale_; }

 private:
  std::vector<double> mean_, scale_;
};

struct SgdOptions {
  std::uint32_t batch = 32;    ///< minibatch size
  std::uint32_t hidden = 100;  ///< MLP hidden units
  std::uint64_t seed = 0;      ///< row order and MLP initialisation
};

/// The learning-rate grid: {0.003, 0.01, 0.03, 0.1, 0.3, 1}.
std::vector<double> default_learning_rates();

/// A softmax model trained by one epoch of minibatch SGD: logistic regression when
/// hidden == 0, otherwise an MLP with one ReLU hidden layer.
class OneEpochNet {
 public:
  /// Untrained model for d inputs and L classes; MLP weights drawn from `rng_seed`'s
  /// stream (see the header comment), LR weights zero.
  OneEpochNet(std::size_t d, std::size_t n_classes, std::uint32_t hidden, std::uint64_t rng_seed,
              std::uint64_t stream_index);
  /// One pass over the n rows x (row-major n × d, already standardised) in a seeded
  /// random order, minibatches of `batch`, step size `learning_rate`.
  void train_epoch(const float* x, const std::uint32_t* labels, std::size_t n,
                   double learning_rate, std::uint32_t batch);
  /// argmax of the logits for each of n rows (lowest class on ties; a non-finite model
  /// — diverged at a too large learning rate — predicts class 0).
  std::vector<std::uint32_t> predict(const float* x, std::size_t n) const;

 private:
  void forward(const float* x, double* hidden, double* logits) const;

  std::size_t d_, L_;
  std::uint32_t H_;
  std::uint64_t seed_, stream_;
  std::vector<double> w1_, b1_;  // H × d, H (MLP only)
  std::vector<double> w2_, b2_;  // L × (H or d), L
};

/// CV accuracy of one model family for every learning rate.
struct SgdCvResult {
  std::vector<double> learning_rates;
  std::vector<eval::CvResult> per_rate;
  std::size_t best = 0;  ///< best mean accuracy (first on ties)
  double seconds = 0.0;
};

/// Logistic regression (hidden = 0) or MLP (hidden = options.hidden), one epoch per fold
/// and learning rate, on the shared folds.
SgdCvResult cross_validate_one_epoch(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                     std::uint32_t k_folds, bool mlp, const SgdOptions& options = {},
                                     const std::vector<double>& learning_rates = default_learning_rates());

}  // namespace flynn::baselines
