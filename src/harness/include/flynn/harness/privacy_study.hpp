#pragma once
// The privacy study of the paper (Fig. 3, appendix D.8; spec section 7): balanced accuracy
// of DP-FlyNNFL against the non-private model over a grid of (ε, T).
//
// Speed: a trial hashes every row once. The FlyHash winners of a row do not depend on the
// privacy parameters — only the released counts do — so each (ε, T) point costs only the
// parties' releases (O(m·L + T log T) each) and scoring the test rows against counts with
// at most τ·T non-zero entries, which SparseScorer does through an inverted index
// (unit → test rows that have it among their winners) in O(Σ over non-zero entries of the
// rows sharing the unit) instead of O(n_test·ρ·L).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/dp_postprocess.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// Scores precomputed test hashes against counts given as their non-zero entries.
///
/// score_l(x) = Σ_{i ∈ h(x)} γ^{c_l[i]} = (ρ − k_l) + Σ_{i ∈ h(x), c_l[i] > 0} γ^{c_l[i]},
/// k_l the number of the row's winners with a non-zero class-l count, so only non-zero
/// counts are visited. Ties go to the lowest class id, as FlyNN::predict's default. With
/// γ = 0 the scores are exact integers and the predictions equal FlyNN::predict's;
/// otherwise the sum is taken in a different order than FlyNN's, so they can differ only
/// where two classes' scores agree to rounding (the tests bound it).
class SparseScorer {
 public:
  /// `winners`: n × ρ FlyHash winners of the test rows (from FlyHasher::hash).
  SparseScorer(const std::vector<std::uint32_t>& winners, std::size_t n, std::uint32_t rho,
               std::uint32_t m, std::size_t n_classes);
  std::size_t rows() const { return n_; }

  /// Predicted class ids for counts whose non-zero entries are `entries` (index = class·m
  /// + unit, value = count; zero values are ignored), with filter decay γ.
  std::vector<std::uint32_t> predict(const std::vector<federated::DpEntry>& entries, double gamma) const;

  /// Non-zero entries of dense class-major counts.
  static std::vector<federated::DpEntry> nonzero(const std::vector<std::uint32_t>& dense);

 private:
  std::size_t n_;
  std::uint32_t m_;
  std::uint32_t rho_;
  std::size_t classes_;
  std::vector<std::uint32_t> offsets_;  ///< CSR: rows of unit i are rows_[offsets_[i]..offsets_[i+1])
  std::vector<std::uint32_t> rows_;
};

/// One trial's configuration.
struct PrivacyTrialSpec {
  FlyConfig config;                   ///< with input_dim and seed set
  int parties = 2;                    ///< τ
  std::vector<double> epsilons;       ///< ε grid (total budget)
  std::vector<std::uint32_t> Ts;      ///< T grid (values above m·L are skipped)
  federated::DpExponent exponent = federated::DpExponent::Paper;
  /// Privacy units to release under (each gets its own releases: the noise differs).
  std::vector<federated::DpUnit> units = {federated::DpUnit::Paper};
  /// Post-processings scored on each release (the same noisy release for every mode, so
  /// their differences are paired, not noise).
  std::vector<federated::DpPostprocess> postprocesses = {federated::DpPostprocess::None};
  std::uint64_t split_seed = 0;       ///< IID split of the training rows among parties
};

/// One point of the study: balanced accuracy of one (ε, T) release, or of the non-private
/// model (epsilon = 0, T = 0).
struct PrivacyPoint {
  double epsilon = 0;
  std::uint32_t T = 0;
  federated::DpUnit unit = federated::DpUnit::Paper;                  ///< (DP points)
  federated::DpPostprocess postprocess = federated::DpPostprocess::None;  ///< (DP points)
  double balanced_accuracy = 0;
  double accuracy = 0;
  std::uint64_t bytes_sent_per_party = 0;  ///< the aggregation message one party sends
};

/// Runs one trial: builds the parties' counts from `train` (IID split), hashes `test`
/// once, evaluates the non-private model and every (ε, T, unit) of the grid (each party
/// releases with fresh SecureRng noise) under every post-processing, in that nesting order. `test` labels must use `train`'s class list. Throws
/// flynn::Error on invalid inputs.
std::vector<PrivacyPoint> privacy_trial(const Dataset& train, const Dataset& test,
                                        const PrivacyTrialSpec& spec);

}  // namespace flynn::harness
