#include "flynn/harness/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

void check_pairs(const std::vector<double>& x, const std::vector<double>& y, std::size_t min_n,
                 const char* what) {
  if (x.size() != y.size())
    throw Error(fmt::format("{}: {} and {} values are not paired", what, x.size(), y.size()));
  if (x.size() < min_n)
    throw Error(fmt::format("{}: needs at least {} pairs, got {}", what, min_n, x.size()));
}

}  // namespace

TTestResult paired_ttest(const std::vector<double>& x, const std::vector<double>& y) {
  check_pairs(x, y, 2, "paired t-test");
  const std::size_t n = x.size();
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = x[i] - y[i];
  const double mean = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(n);
  double ss = 0.0;
  for (double v : d) ss += (v - mean) * (v - mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  TTestResult r;
  r.df = static_cast<double>(n - 1);
  if (sd == 0.0) {
    // All differences equal: SciPy returns NaN; the limit is clear either way.
    r.statistic = mean == 0.0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), mean);
    r.pvalue = mean == 0.0 ? 1.0 : 0.0;
    return r;
  }
  r.statistic = mean / (sd / std::sqrt(static_cast<double>(n)));
  const boost::math::students_t dist(r.df);
  r.pvalue = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.statistic))));
  return r;
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  const std::size_t n = values.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(n);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && values[order[j]] == values[order[i]]) ++j;
    // Positions i..j-1 (0-based) hold equal values: ranks i+1..j, average (i+1+j)/2.
    const double avg = 0.5 * static_cast<double>(i + 1 + j);
    for (std::size_t t = i; t < j; ++t) ranks[order[t]] = avg;
    i = j;
  }
  return ranks;
}

std::vector<double> wilcoxon_null_distribution(std::size_t n) {
  // Adding the k-th rank: each earlier sum r stays (sign −) or moves to r + k (sign +),
  // each with probability ½. Probabilities (not counts) keep doubles in range for any n.
  std::vector<double> c(1, 1.0);
  for (std::size_t k = 1; k <= n; ++k) {
    std::vector<double> next(k * (k + 1) / 2 + 1, 0.0);
    for (std::size_t r = 0; r < c.size(); ++r) {
      next[r] += 0.5 * c[r];
      next[r + k] += 0.5 * c[r];
    }
    c.swap(next);
  }
  return c;
}

WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& x, const std::vector<double>& y,
                                    WilcoxonMode mode) {
  check_pairs(x, y, 1, "Wilcoxon signed-rank test");
  std::vector<double> d;
  WilcoxonResult r;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i] - y[i];
    if (v == 0.0) {
      ++r.n_zeros;  // zero_method "wilcox": zero differences carry no sign and are dropped
    } else {
      d.push_back(v);
    }
  }
  r.n_used = d.size();
  if (d.empty()) {
    r.pvalue = 1.0;
    r.method = WilcoxonMethod::Normal;
    return r;
  }
  std::vector<double> absd(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) absd[i] = std::fabs(d[i]);
  const std::vector<double> ranks = average_ranks(absd);
  double r_plus = 0.0, r_minus = 0.0;
  for (std::size_t i = 0; i < d.size(); ++i) (d[i] > 0 ? r_plus : r_minus) += ranks[i];
  r.statistic = std::min(r_plus, r_minus);

  // Tie groups of |d| (needed for the decision and for the variance correction).
  std::vector<double> sorted = absd;
  std::sort(sorted.begin(), sorted.end());
  double tie_term = 0.0;
  bool has_ties = false;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const double t = static_cast<double>(j - i);
    if (t > 1) {
      has_ties = true;
      tie_term += t * (t * t - 1.0);
    }
    i = j;
  }

  bool exact = false;
  switch (mode) {
    case WilcoxonMode::Auto:
      exact = x.size() <= 50 && r.n_zeros == 0 && !has_ties;
      break;
    case WilcoxonMode::Exact:
      if (r.n_zeros > 0 || has_ties)
        throw Error("Wilcoxon exact test: not defined with zero or tied differences");
      exact = true;
      break;
    case WilcoxonMode::Normal:
      exact = false;
      break;
  }

  const double n = static_cast<double>(d.size());
  if (exact) {
    r.method = WilcoxonMethod::Exact;
    const std::vector<double> pmf = wilcoxon_null_distribution(d.size());
    // No ties: R+ is an integer.
    const std::size_t rp = static_cast<std::size_t>(std::llround(r_plus));
    if (rp == (pmf.size() - 1) / 2) {
      r.pvalue = 1.0;  // the centre of the (symmetric) distribution: SciPy's rule
    } else {
      double p_less = 0.0, p_greater = 0.0;
      for (std::size_t v = 0; v <= rp; ++v) p_less += pmf[v];
      for (std::size_t v = rp; v < pmf.size(); ++v) p_greater += pmf[v];
      r.pvalue = std::clamp(2.0 * std::min(p_less, p_greater), 0.0, 1.0);
    }
    return r;
  }
  r.method = WilcoxonMethod::Normal;
  const double mean = n * (n + 1.0) * 0.25;
  const double var = (n * (n + 1.0) * (2.0 * n + 1.0) - 0.5 * tie_term) / 24.0;
  if (!(var > 0.0)) {
    r.pvalue = 1.0;
    return r;
  }
  r.z = (r.statistic - mean) / std::sqrt(var);
  const boost::math::normal_distribution<double> normal;
  r.pvalue = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(normal, std::fabs(r.z))));
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double normalized_accuracy(double accuracy, double knn_accuracy) {
  if (!(knn_accuracy > 0.0))
    throw Error(fmt::format("normalised accuracy: kNNC accuracy {} is not positive", knn_accuracy));
  return 1.0 - accuracy / knn_accuracy;
}

Comparison compare_to_baseline(const std::string& baseline, const std::vector<double>& flynn,
                               const std::vector<double>& base, const std::vector<double>& knn,
                               double tie_tolerance) {
  const std::size_t n = flynn.size();
  if (base.size() != n || knn.size() != n)
    throw Error(fmt::format("Table 2 ({}): {} FlyNN, {} baseline and {} kNNC accuracies",
                            baseline, n, base.size(), knn.size()));
  if (n < 2) throw Error(fmt::format("Table 2 ({}): needs at least 2 datasets, got {}", baseline, n));
  Comparison c;
  c.baseline = baseline;
  c.n_datasets = n;
  // Normalised accuracies; ties are made exact so that both tests see them as such.
  std::vector<double> norm_flynn(n), norm_base(n), delta(n);
  for (std::size_t i = 0; i < n; ++i) {
    norm_flynn[i] = normalized_accuracy(flynn[i], knn[i]);
    norm_base[i] = normalized_accuracy(base[i], knn[i]);
    if (std::fabs(flynn[i] - base[i]) <= tie_tolerance) {
      norm_base[i] = norm_flynn[i];
      ++c.ties;
    } else if (flynn[i] > base[i]) {
      ++c.wins;
    } else {
      ++c.losses;
    }
    delta[i] = norm_base[i] - norm_flynn[i];
  }
  c.frac_better = static_cast<double>(c.wins) / static_cast<double>(n);
  c.median_improvement = median(delta);
  c.ttest_p = paired_ttest(norm_base, norm_flynn).pvalue;
  const WilcoxonResult w = wilcoxon_signed_rank(norm_base, norm_flynn);
  c.wilcoxon_p = w.pvalue;
  c.wilcoxon_method = w.method;
  return c;
}

MeanSe mean_se(const std::vector<double>& v) {
  MeanSe r;
  r.n = v.size();
  if (v.empty()) return r;
  r.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (v.size() < 2) return r;
  double ss = 0.0;
  for (double x : v) ss += (x - r.mean) * (x - r.mean);
  r.se = std::sqrt(ss / static_cast<double>(v.size() - 1)) / std::sqrt(static_cast<double>(v.size()));
  return r;
}

}  // namespace flynn::harness
