// Statistics of the evaluation against SciPy: paired t-test, Wilcoxon signed-rank (exact
// and normal approximation, zeros and ties), average ranks, the exact null distribution
// (fixtures from scripts/make_stats_fixtures.py), and the Table-2 summary by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/harness/statistics.hpp"
#include "test_support.hpp"

namespace flynn::harness {
namespace {

nlohmann::json fixture(const std::string& name) {
  const std::string path = test::source_dir() + "/tests/fixtures/stats/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing fixture " + path);
  return nlohmann::json::parse(in);
}

// Relative agreement with SciPy: same formulas, same distributions; only the last bits of
// the special functions (Boost vs Cephes) may differ.
void expect_close(double ours, double scipy, double rel, const std::string& what) {
  EXPECT_NEAR(ours, scipy, rel * std::max(1e-300, std::fabs(scipy))) << what;
}

TEST(EvalStatistics, PairedTTestMatchesScipy) {
  const auto j = fixture("ttest.json");
  ASSERT_GE(j["cases"].size(), 5u);
  for (const auto& c : j["cases"]) {
    const auto x = c["x"].get<std::vector<double>>(), y = c["y"].get<std::vector<double>>();
    const TTestResult r = paired_ttest(x, y);
    expect_close(r.statistic, c["statistic"].get<double>(), 1e-10, c["name"].get<std::string>() + " t");
    expect_close(r.pvalue, c["pvalue"].get<double>(), 1e-8, c["name"].get<std::string>() + " p");
    EXPECT_EQ(r.df, static_cast<double>(x.size() - 1));
  }
}

TEST(EvalStatistics, WilcoxonMatchesScipy) {
  const auto j = fixture("wilcoxon.json");
  ASSERT_GE(j["cases"].size(), 14u);
  std::size_t exact = 0, normal = 0;
  for (const auto& c : j["cases"]) {
    const std::string name = c["name"];
    const auto x = c["x"].get<std::vector<double>>(), y = c["y"].get<std::vector<double>>();
    const WilcoxonResult r = wilcoxon_signed_rank(x, y);
    const bool want_exact = c["expect_method"] == "exact";
    EXPECT_EQ(r.method, want_exact ? WilcoxonMethod::Exact : WilcoxonMethod::Normal) << name;
    (want_exact ? exact : normal)++;
    EXPECT_DOUBLE_EQ(r.statistic, c["statistic"].get<double>()) << name;
    // Exact p-values are sums of dyadic probabilities: equal to SciPy's up to rounding.
    expect_close(r.pvalue, c["pvalue"].get<double>(), want_exact ? 1e-12 : 1e-9, name + " p");
  }
  EXPECT_GE(exact, 6u);
  EXPECT_GE(normal, 6u);
}

TEST(EvalStatistics, WilcoxonZeroHandlingDropsZeros) {
  // zero_method "wilcox": zeros do not change the statistic or the count of ranked pairs.
  const std::vector<double> x = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0};
  const std::vector<double> y = {1.0, 2.5, 2.0, 4.0, 3.0, 8.5, 4.0};
  const WilcoxonResult r = wilcoxon_signed_rank(x, y);
  EXPECT_EQ(r.n_zeros, 2u);
  EXPECT_EQ(r.n_used, 5u);
  EXPECT_EQ(r.method, WilcoxonMethod::Normal);  // zeros rule out the exact test
  // Non-zero d = −.5, 1, 2, −2.5, 3: |d| ranks 1,2,3,4,5 → R+ = 2+3+5 = 10, R− = 1+4 = 5.
  EXPECT_DOUBLE_EQ(r.statistic, 5.0);
  // All zero: no information, p = 1 (SciPy would raise).
  EXPECT_DOUBLE_EQ(wilcoxon_signed_rank(x, x).pvalue, 1.0);
  EXPECT_THROW(wilcoxon_signed_rank(x, y, WilcoxonMode::Exact), Error);
  EXPECT_THROW(wilcoxon_signed_rank({1.0}, {1.0, 2.0}), Error);
}

TEST(EvalStatistics, WilcoxonExactSmallCaseByHand) {
  // n = 3, all positive: P(W+ ≥ 6) = 1/8, two-sided 1/4.
  const WilcoxonResult r = wilcoxon_signed_rank({1.0, 2.0, 3.0}, {0.5, 1.0, 1.5});
  EXPECT_EQ(r.method, WilcoxonMethod::Exact);
  EXPECT_DOUBLE_EQ(r.statistic, 0.0);
  EXPECT_DOUBLE_EQ(r.pvalue, 0.25);
}

TEST(EvalStatistics, RanksAndNullDistributionMatchScipy) {
  const auto j = fixture("rankdata.json");
  for (const auto& c : j["cases"])
    EXPECT_EQ(average_ranks(c["values"].get<std::vector<double>>()), c["ranks"].get<std::vector<double>>());
  for (const auto& [n, pmf] : j["null"].items()) {
    const auto want = pmf.get<std::vector<double>>();
    const auto got = wilcoxon_null_distribution(std::stoul(n));
    ASSERT_EQ(got.size(), want.size()) << n;
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_DOUBLE_EQ(got[i], want[i]) << n << " " << i;
  }
}

TEST(EvalStatistics, TTestDegenerateCases) {
  EXPECT_DOUBLE_EQ(paired_ttest({1, 2, 3}, {1, 2, 3}).pvalue, 1.0);
  EXPECT_DOUBLE_EQ(paired_ttest({2, 3, 4}, {1, 2, 3}).pvalue, 0.0);
  EXPECT_THROW(paired_ttest({1.0}, {2.0}), Error);
  EXPECT_THROW(paired_ttest({1.0, 2.0}, {2.0}), Error);
}

TEST(EvalStatistics, Table2SummaryByHand) {
  // Five datasets; kNNC accuracies 0.8 everywhere.
  const std::vector<double> knn = {0.8, 0.8, 0.8, 0.8, 0.8};
  const std::vector<double> fly = {0.84, 0.80, 0.76, 0.88, 0.8000000001};
  const std::vector<double> base = {0.80, 0.80, 0.80, 0.80, 0.80};
  const Comparison c = compare_to_baseline("X", fly, base, knn);
  EXPECT_EQ(c.baseline, "X");
  EXPECT_EQ(c.n_datasets, 5u);
  EXPECT_EQ(c.wins, 2u);
  EXPECT_EQ(c.ties, 2u);  // exact equality and a 1e-10 difference (within the tolerance)
  EXPECT_EQ(c.losses, 1u);
  EXPECT_DOUBLE_EQ(c.frac_better, 0.4);
  // δ = (f − b)/k = 0.05, 0, −0.05, 0.1, 0 → median 0.
  EXPECT_NEAR(c.median_improvement, 0.0, 1e-12);
  // The tests see the two ties as exact zeros (3 ranked pairs → normal approximation).
  std::vector<double> nb, nf;
  for (std::size_t i = 0; i < 5; ++i) {
    nf.push_back(normalized_accuracy(fly[i], knn[i]));
    nb.push_back(i == 1 || i == 4 ? nf.back() : normalized_accuracy(base[i], knn[i]));
  }
  const WilcoxonResult w = wilcoxon_signed_rank(nb, nf);
  EXPECT_EQ(w.n_zeros, 2u);
  EXPECT_EQ(c.wilcoxon_method, WilcoxonMethod::Normal);
  EXPECT_DOUBLE_EQ(c.wilcoxon_p, w.pvalue);
  EXPECT_DOUBLE_EQ(c.ttest_p, paired_ttest(nb, nf).pvalue);
  // A stricter tolerance turns the 1e-10 difference into a win.
  EXPECT_EQ(compare_to_baseline("X", fly, base, knn, 0.0).wins, 3u);
  EXPECT_THROW(compare_to_baseline("X", {0.5}, {0.5}, {0.5}), Error);
  EXPECT_THROW(compare_to_baseline("X", fly, base, {0.8}), Error);
}

TEST(EvalStatistics, NormalisedAccuracyMedianAndMeanSe) {
  EXPECT_DOUBLE_EQ(normalized_accuracy(0.9, 0.9), 0.0);
  EXPECT_DOUBLE_EQ(normalized_accuracy(0.45, 0.9), 0.5);
  EXPECT_LT(normalized_accuracy(0.95, 0.9), 0.0);
  EXPECT_THROW(normalized_accuracy(0.5, 0.0), Error);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
  const MeanSe m = mean_se({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(m.mean, 2.5);
  EXPECT_NEAR(m.se, std::sqrt(5.0 / 3.0) / 2.0, 1e-15);
  EXPECT_EQ(mean_se({7}).se, 0.0);
}

}  // namespace
}  // namespace flynn::harness
