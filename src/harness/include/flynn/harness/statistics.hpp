#pragma once
// Paired significance tests and the paper's Table-2 summary statistics.
//
// The tests follow SciPy (scipy.stats.ttest_rel and scipy.stats.wilcoxon with their
// default arguments) so that numbers can be checked against SciPy; the unit tests compare
// with fixtures written by scripts/make_stats_fixtures.py (Debian python3-scipy 1.10).
// Distribution functions come from Boost.Math (students_t, normal), never from hand-rolled
// approximations.
#include <cstddef>
#include <string>
#include <vector>
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// Result of the paired two-sided t-test (scipy.stats.ttest_rel(x, y)).
struct TTestResult {
  double statistic = 0.0;  ///< t = mean(d) / (sd(d)/√n), d = x − y, sd with n − 1
  double pvalue = 1.0;     ///< 2·P(T_{n−1} ≥ |t|)
  double df = 0.0;         ///< n − 1
};

/// Paired two-sided t-test of x against y (same length, at least 2).
/// Degenerate case SciPy answers with NaN: when every difference is equal (sd = 0) the
/// result is p = 1 if they are all 0 and p = 0 otherwise (t = ±∞). Throws flynn::Error on
/// a length mismatch or fewer than 2 pairs.
TTestResult paired_ttest(const std::vector<double>& x, const std::vector<double>& y);

/// How the Wilcoxon p-value was computed.
enum class WilcoxonMethod {
  Exact,   ///< exact null distribution of W+ (all 2^n sign patterns), by dynamic programming
  Normal,  ///< normal approximation with the tie correction of the variance
};

/// Which computation wilcoxon_signed_rank uses.
enum class WilcoxonMode {
  Auto,    ///< Exact when there are at most 50 pairs, no zero and no tied |d|; else Normal
  Exact,   ///< force the exact distribution (throws if there are zeros or ties)
  Normal,  ///< force the normal approximation
};

/// Result of the two-sided Wilcoxon signed-rank test (scipy.stats.wilcoxon(x, y)).
struct WilcoxonResult {
  double statistic = 0.0;  ///< T = min(R+, R−), ranks of |d| with ties averaged
  double pvalue = 1.0;     ///< two-sided
  double z = 0.0;          ///< the z statistic (Normal only; 0 for Exact)
  std::size_t n_used = 0;  ///< non-zero differences (the ones that are ranked)
  std::size_t n_zeros = 0; ///< differences that are exactly 0 (dropped)
  WilcoxonMethod method = WilcoxonMethod::Normal;
};

/// Two-sided Wilcoxon signed-rank test of the differences d = x − y.
///
/// Matches SciPy's defaults: zero_method = "wilcox" (zero differences are dropped before
/// ranking), no continuity correction, two-sided alternative, method "auto".
///   * Exact: p = 2·min(P(W+ ≤ R+), P(W+ ≥ R+)), clipped to 1, and exactly 1 when R+ is the
///     centre of the distribution — SciPy's rule.
///   * Normal: z = (T − n(n+1)/4) / σ with σ² = [n(n+1)(2n+1) − ½ Σ t(t²−1)] / 24 over the
///     groups of t tied |d|; p = 2·Φ(−|z|).
/// One deliberate difference from SciPy 1.10: with ≤ 50 pairs, no zeros but tied |d|,
/// SciPy 1.10 still takes the exact path and truncates the (half-integer) R+ to an
/// integer; we use the normal approximation with the tie correction there, as later SciPy
/// releases recommend. When every difference is zero the test has no information and
/// returns p = 1 (SciPy raises). Throws flynn::Error on a length mismatch or empty input.
WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& x, const std::vector<double>& y,
                                    WilcoxonMode mode = WilcoxonMode::Auto);

/// Ranks 1..n of the values with ties given their average rank (scipy.stats.rankdata's
/// default "average" method).
std::vector<double> average_ranks(const std::vector<double>& values);

/// P(W+ = r) for r = 0 … n(n+1)/2 under the null hypothesis (n untied, non-zero
/// differences, each sign equally likely): SciPy's _get_wilcoxon_distr.
std::vector<double> wilcoxon_null_distribution(std::size_t n);

/// The median (mean of the two middle values for an even count); NaN when empty.
double median(std::vector<double> values);

/// Normalised accuracy of the paper: 1 − a / a_kNN (negative means better than kNNC).
double normalized_accuracy(double accuracy, double knn_accuracy);

/// One row of Table 2: FlyNN against one baseline over a set of datasets.
///
/// For dataset i with accuracies f_i (FlyNN), b_i (baseline) and k_i (best kNNC):
///   * improvement δ_i = (f_i − b_i) / k_i, i.e. the baseline's normalised accuracy minus
///     FlyNN's; positive means FlyNN is better;
///   * |f_i − b_i| ≤ tie_tolerance counts as a tie and sets δ_i = 0 exactly, so it is
///     also a "zero" for the Wilcoxon test;
///   * wins/ties/losses count δ_i > 0, = 0, < 0; frac_better = wins / n (as in the paper,
///     where 39/2/30 gives 0.55);
///   * median_improvement = median of δ_i;
///   * ttest_p and wilcoxon_p are the paired two-sided tests of the normalised accuracies
///     (baseline vs FlyNN), i.e. of the δ_i against 0.
struct Comparison {
  std::string baseline;           ///< e.g. "kNNC"
  std::size_t n_datasets = 0;
  double frac_better = 0.0;
  std::size_t wins = 0, ties = 0, losses = 0;
  double median_improvement = 0.0;  ///< a fraction (0.0035 = 0.35%)
  double ttest_p = 1.0;
  double wilcoxon_p = 1.0;
  WilcoxonMethod wilcoxon_method = WilcoxonMethod::Normal;
};

/// The default tie tolerance on accuracies: two accuracies that differ by less than this
/// are the same number of correct predictions up to floating-point rounding of the fold
/// means (one row of difference is ≥ 1/20000 = 5e-5 on the largest OpenML set).
inline constexpr double kDefaultTieTolerance = 1e-6;

/// Table-2 statistics for FlyNN against `baseline` (all vectors of the same length ≥ 2,
/// aligned by dataset; knn holds the best kNNC accuracy, all > 0).
Comparison compare_to_baseline(const std::string& baseline, const std::vector<double>& flynn,
                               const std::vector<double>& base, const std::vector<double>& knn,
                               double tie_tolerance = kDefaultTieTolerance);

/// Mean and standard error (sd/√n, sd with n − 1) of a sample; se = 0 for n < 2.
struct MeanSe {
  double mean = 0.0;
  double se = 0.0;
  std::size_t n = 0;
};
MeanSe mean_se(const std::vector<double>& values);

}  // namespace flynn::harness
