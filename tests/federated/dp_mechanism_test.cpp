// The differential-privacy module (flynn/federated/dp.hpp): statistical tests of the
// exponential-mechanism selection (chi-square against the exact sequential
// without-replacement probabilities) and of the discrete Laplace noise (chi-square and
// Kolmogorov–Smirnov against its pmf/CDF), the shape of a release (exactly T distinct
// entries, everything else zero), exact rational scales, and Theorem 6's accounting.
//
// The randomness is OpenSSL's (never seeded, by design), so each statistical test has a
// false-alarm probability; the threshold p < 1e-6 makes that negligible while the sample
// sizes keep real power: every test also checks that the same samples REJECT a nearby wrong
// distribution (the other exponent, a 10% wrong scale), so none of them can pass vacuously.
#include <gtest/gtest.h>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>

#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <type_traits>

#include "flynn/error.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/secure_random.hpp"
#include "flynn/random.hpp"

namespace flynn::federated {
namespace {

constexpr double kAlpha = 1e-6;

// The two generators are distinct, unrelated types: neither converts to the other.
static_assert(!std::is_convertible_v<SeededRng&, SecureRng&>);
static_assert(!std::is_convertible_v<SecureRng&, SeededRng&>);
static_assert(!std::is_base_of_v<SeededRng, SecureRng> && !std::is_base_of_v<SecureRng, SeededRng>);
static_assert(!std::is_copy_constructible_v<SecureRng>);
// The DP entry points accept only the secure generator.
static_assert(!std::is_invocable_v<decltype(static_cast<std::vector<DpEntry> (*)(
                                       const ClassCounts&, const DpMechanism&, SecureRng&)>(&privatize)),
                                   const ClassCounts&, const DpMechanism&, SeededRng&>);

// Pearson chi-square p-value of observed counts against probabilities (bins whose
// expectation is below 5 are pooled into one).
double chi_square_p(const std::vector<double>& observed, const std::vector<double>& prob) {
  const double n = std::accumulate(observed.begin(), observed.end(), 0.0);
  double stat = 0, pooled_o = 0, pooled_e = 0;
  int bins = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    const double e = n * prob[i];
    if (e < 5) {
      pooled_o += observed[i];
      pooled_e += e;
      continue;
    }
    stat += (observed[i] - e) * (observed[i] - e) / e;
    ++bins;
  }
  if (pooled_e > 0) {
    stat += (pooled_o - pooled_e) * (pooled_o - pooled_e) / std::max(pooled_e, 1e-300);
    ++bins;
  }
  const boost::math::chi_squared_distribution<double> chi2(bins - 1);
  return boost::math::cdf(boost::math::complement(chi2, stat));
}

// Kolmogorov's limiting distribution P(K > λ), with Stephens' finite-n correction. For a
// discrete law the test is conservative (p-values too large), so a rejection is real.
double ks_p(double d, double n) {
  const double lambda = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * d;
  if (lambda < 0.2) return 1.0;
  double sum = 0;
  for (int j = 1; j <= 100; ++j)
    sum += (j % 2 ? 2.0 : -2.0) * std::exp(-2.0 * j * j * lambda * lambda);
  return std::clamp(sum, 0.0, 1.0);
}

// KS statistic of integer samples against a CDF (sup over integers: both step there).
template <class Cdf>
double ks_stat(std::vector<std::int64_t> samples, Cdf cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0;
  for (std::size_t i = 0; i < samples.size();) {
    std::size_t j = i;
    while (j < samples.size() && samples[j] == samples[i]) ++j;
    const double f = cdf(samples[i]);
    d = std::max({d, std::abs(j / n - f), std::abs(i / n - cdf(samples[i] - 1))});
    i = j;
  }
  return d;
}

// Exact probability of each ordered T = 2 draw without replacement, weights ∝ exp(a·c).
std::map<std::pair<int, int>, double> ordered_pair_probs(const std::vector<std::uint32_t>& c, double a) {
  std::vector<double> w;
  for (auto v : c) w.push_back(std::exp(a * v));
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  std::map<std::pair<int, int>, double> p;
  for (int i = 0; i < static_cast<int>(c.size()); ++i)
    for (int j = 0; j < static_cast<int>(c.size()); ++j)
      if (i != j) p[{i, j}] = w[i] / total * w[j] / (total - w[i]);
  return p;
}

TEST(DpSelection, GumbelTopTMatchesSequentialExponentialMechanism) {
  // ε = 4 over τ = 2 parties → ε' = 2; T = 2: the paper's exponent a = ε'/(4T) = 0.25.
  const DpMechanism mech(DpParams{4.0, 2, DpExponent::Paper}, 2);
  ASSERT_DOUBLE_EQ(mech.exponent_coefficient, 0.25);
  const std::vector<std::uint32_t> counts = {0, 2, 5, 9, 12};
  SecureRng rng;
  const int n = 120000;
  std::map<std::pair<int, int>, double> seen;
  for (int s = 0; s < n; ++s) {
    const auto pick = gumbel_top_t(counts.data(), counts.size(), mech.exponent_coefficient, 2, rng);
    ASSERT_EQ(pick.size(), 2u);
    ASSERT_NE(pick[0], pick[1]);
    seen[{static_cast<int>(pick[0]), static_cast<int>(pick[1])}] += 1;
  }
  auto test_against = [&](double a) {
    std::vector<double> obs, prob;
    for (const auto& [key, p] : ordered_pair_probs(counts, a)) {
      obs.push_back(seen.count(key) ? seen.at(key) : 0.0);
      prob.push_back(p);
    }
    return chi_square_p(obs, prob);
  };
  EXPECT_GT(test_against(0.25), kAlpha) << "selection frequencies differ from the target";
  // Power: the reference code's exponent (twice as sharp) must be rejected by the same data.
  EXPECT_LT(test_against(0.5), kAlpha);
}

TEST(DpSelection, ReleasedSetsFollowTheMechanismWithEitherExponent) {
  // The whole release (privatize): which T entries are published, as unordered sets.
  const std::vector<std::uint32_t> counts = {1, 4, 0, 7, 3};
  for (DpExponent e : {DpExponent::Paper, DpExponent::Reference}) {
    const DpMechanism mech(DpParams{3.0, 2, e}, 1);
    const double a = mech.exponent_coefficient;
    EXPECT_DOUBLE_EQ(a, e == DpExponent::Paper ? 3.0 / 8.0 : 3.0 / 4.0);
    SecureRng rng;
    std::map<std::pair<int, int>, double> seen;
    const int n = 60000;
    for (int s = 0; s < n; ++s) {
      const auto rel = privatize(counts.data(), counts.size(), mech, rng);
      ASSERT_EQ(rel.size(), 2u);
      ASSERT_LT(rel[0].index, rel[1].index);  // sorted, distinct
      seen[{static_cast<int>(rel[0].index), static_cast<int>(rel[1].index)}] += 1;
    }
    auto test_against = [&](double coef) {
      std::map<std::pair<int, int>, double> sets;
      for (const auto& [k, p] : ordered_pair_probs(counts, coef))
        sets[{std::min(k.first, k.second), std::max(k.first, k.second)}] += p;
      std::vector<double> obs, prob;
      for (const auto& [k, p] : sets) {
        obs.push_back(seen.count(k) ? seen.at(k) : 0.0);
        prob.push_back(p);
      }
      return chi_square_p(obs, prob);
    };
    EXPECT_GT(test_against(a), kAlpha) << dp_exponent_name(e);
    EXPECT_LT(test_against(e == DpExponent::Paper ? 2 * a : a / 2), kAlpha) << dp_exponent_name(e);
  }
}

TEST(DpSelection, HugeCountsDoNotOverflow) {
  // exp(a·c) would overflow a double here; Gumbel keys work on a·c directly.
  const std::vector<std::uint32_t> counts = {4000000000u, 0, 3999999000u, 7};
  SecureRng rng;
  const auto pick = gumbel_top_t(counts.data(), counts.size(), 1.0, 2, rng);
  EXPECT_EQ(pick, (std::vector<std::uint32_t>{0, 2}));
}

TEST(DiscreteLaplace, MatchesItsPmfAndCdf) {
  SecureRng rng;
  // A dyadic scale (5/2) and the non-dyadic one of ε = 0.3, T = 3, τ = 2 (b = 2Tτ/ε = 40).
  const DpMechanism mech(DpParams{0.3, 3, DpExponent::Paper}, 2);
  for (const Rational& scale : {Rational{5, 2}, mech.noise_scale}) {
    const DiscreteLaplace lap(scale);
    const int n = 100000;
    std::vector<std::int64_t> samples(n);
    for (auto& s : samples) s = lap.sample(rng);
    // Chi-square on bins −K..K (tails pooled by the helper).
    const auto chi = [&](const DiscreteLaplace& law) {
      const std::int64_t k = static_cast<std::int64_t>(6 * law.scale().to_double()) + 3;
      std::vector<double> obs(2 * k + 3, 0), prob(2 * k + 3, 0);
      for (auto s : samples) obs[s < -k ? 0 : s > k ? 2 * k + 2 : s + k + 1] += 1;
      prob[0] = law.cdf(-k - 1);
      prob[2 * k + 2] = 1 - law.cdf(k);
      for (std::int64_t v = -k; v <= k; ++v) prob[v + k + 1] = law.pmf(v);
      return chi_square_p(obs, prob);
    };
    const auto ks = [&](const DiscreteLaplace& law) {
      return ks_p(ks_stat(samples, [&](std::int64_t v) { return law.cdf(v); }), n);
    };
    EXPECT_GT(chi(lap), kAlpha) << "scale " << scale.to_double();
    EXPECT_GT(ks(lap), kAlpha) << "scale " << scale.to_double();
    // Power: a 10% larger scale is rejected by both tests on the same samples.
    const DiscreteLaplace wrong(Rational{scale.num * 11, scale.den * 10});
    EXPECT_LT(chi(wrong), kAlpha);
    EXPECT_LT(ks(wrong), kAlpha);
  }
}

TEST(DiscreteLaplace, SymmetricWithTheRightVariance) {
  SecureRng rng;
  const DiscreteLaplace lap(Rational{7, 1});
  const int n = 100000;
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    const double x = static_cast<double>(lap.sample(rng));
    sum += x;
    sq += x * x;
  }
  const double q = std::exp(-1.0 / 7.0), var = 2 * q / ((1 - q) * (1 - q));
  // Mean 0 within 5 standard errors; variance within 5%.
  EXPECT_LT(std::abs(sum / n), 5 * std::sqrt(var / n));
  EXPECT_NEAR(sq / n / var, 1.0, 0.05);
}

TEST(SecureRng, ExactBernoulliTrials) {
  SecureRng rng;
  const int n = 200000;
  for (auto [num, den] : {std::pair<u128, u128>{3, 10}, {17, 10}, {1, 1}}) {
    int hits = 0;
    for (int i = 0; i < n; ++i) hits += rng.bernoulli_exp_neg(num, den);
    const double p = std::exp(-static_cast<double>(num) / static_cast<double>(den));
    EXPECT_LT(std::abs(hits - n * p), 5.5 * std::sqrt(n * p * (1 - p))) << static_cast<double>(num);
  }
  int hits = 0;
  for (int i = 0; i < n; ++i) hits += rng.bernoulli(1, 3);
  EXPECT_LT(std::abs(hits - n / 3.0), 5.5 * std::sqrt(n * 2.0 / 9.0));
  const u128 big = (u128{1} << 100) + 3;
  for (int i = 0; i < 1000; ++i) ASSERT_LT(rng.uniform_below_u128(big), big);
  std::vector<double> bins(7, 0);
  for (int i = 0; i < 70000; ++i) bins[rng.uniform_below(7)] += 1;
  EXPECT_GT(chi_square_p(bins, std::vector<double>(7, 1.0 / 7)), kAlpha);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform_open01();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
  EXPECT_GT(rng.bytes_drawn(), 0u);
}

TEST(DpRelease, NoiseOnPickedCountsIsDiscreteLaplace) {
  // All entries equal and far from 0, T = all entries: every value is count + η with no
  // clamping, so the released values minus 1000 are samples of the noise.
  const std::size_t n = 200;
  const std::vector<std::uint32_t> counts(n, 1000);
  const DpMechanism mech(DpParams{100.0, static_cast<std::uint32_t>(n), DpExponent::Paper}, 1);
  EXPECT_DOUBLE_EQ(mech.noise_scale.to_double(), 4.0);  // 2Tτ/ε = 400/100
  SecureRng rng;
  std::vector<std::int64_t> noise;
  for (int rep = 0; rep < 400; ++rep)
    for (const DpEntry& e : privatize(counts.data(), n, mech, rng))
      noise.push_back(static_cast<std::int64_t>(e.value) - 1000);
  const DiscreteLaplace lap(mech.noise_scale);
  const double d = ks_stat(noise, [&](std::int64_t v) { return lap.cdf(v); });
  EXPECT_GT(ks_p(d, static_cast<double>(noise.size())), kAlpha);
  const DiscreteLaplace wrong(Rational{44, 10});
  EXPECT_LT(ks_p(ks_stat(noise, [&](std::int64_t v) { return wrong.cdf(v); }), noise.size()), kAlpha);
}

TEST(DpRelease, ExactlyTEntriesAndUnpickedAreZero) {
  SecureRng rng;
  std::vector<std::uint32_t> counts(60);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<std::uint32_t>(i % 7) * 3;
  const DpMechanism mech(DpParams{1.0, 9, DpExponent::Paper}, 3);
  for (int rep = 0; rep < 50; ++rep) {
    const auto rel = privatize(counts.data(), counts.size(), mech, rng);
    ASSERT_EQ(rel.size(), 9u);
    std::set<std::uint32_t> idx;
    for (const DpEntry& e : rel) idx.insert(e.index);
    ASSERT_EQ(idx.size(), 9u);
    const auto dense = sum_releases({rel}, counts.size());
    for (std::uint32_t i = 0; i < counts.size(); ++i) {
      if (!idx.count(i)) {
        ASSERT_EQ(dense[i], 0u) << "unpicked entry " << i << " is not zero";
      }
    }
  }
  // Clamping at zero: counts of 0 with a large noise scale give many exact zeros, never
  // negative (unsigned) wrap-arounds.
  const std::vector<std::uint32_t> zeros(50, 0);
  const DpMechanism noisy(DpParams{0.01, 50, DpExponent::Paper}, 1);
  std::size_t zero_values = 0;
  for (const DpEntry& e : privatize(zeros.data(), zeros.size(), noisy, rng)) {
    EXPECT_LT(e.value, 100000000u);
    zero_values += e.value == 0;
  }
  EXPECT_GT(zero_values, 10u);  // about half are clamped
  // T = all entries picks everything; T beyond that is refused.
  EXPECT_EQ(privatize(counts.data(), counts.size(),
                      DpMechanism(DpParams{1.0, 60, DpExponent::Paper}, 1), rng).size(), 60u);
  EXPECT_THROW(privatize(counts.data(), counts.size(),
                         DpMechanism(DpParams{1.0, 61, DpExponent::Paper}, 1), rng),
               Error);
}

TEST(DpRelease, SumsAcrossParties) {
  const std::vector<std::vector<DpEntry>> rel = {{{0, 3}, {4, 1}}, {{4, 2}, {5, 7}}};
  EXPECT_EQ(sum_releases(rel, 6), (std::vector<std::uint32_t>{3, 0, 0, 0, 3, 7}));
  EXPECT_THROW(sum_releases({{{6, 1}}}, 6), Error);
  EXPECT_THROW(sum_releases({{{0, 4000000000u}}, {{0, 4000000000u}}}, 1), Error);
}

TEST(DpAccounting, ReportedEpsilonIsTheoremSixComposition) {
  for (double eps : {0.25, 0.3, 1.0, 1.5, 2.0, 7.125}) {
    for (std::uint32_t T : {1u, 4u, 100u, 600u}) {
      for (std::uint32_t tau : {1u, 2u, 5u}) {
        for (DpExponent e : {DpExponent::Paper, DpExponent::Reference}) {
          const DpMechanism mech(DpParams{eps, T, e}, tau);
          const PrivacyAccount a = account(mech);
          // Each pick: ε/(2Tτ) for the selection and ε/(2Tτ) for the value.
          EXPECT_NEAR(mech.selection_epsilon(), eps / (2.0 * T * tau), 1e-15 * eps);
          EXPECT_NEAR(mech.noise_epsilon(), eps / (2.0 * T * tau), 1e-15 * eps);
          EXPECT_NEAR(a.per_party, eps / tau, 1e-12 * eps);
          EXPECT_NEAR(a.total, eps, 1e-12 * eps);
          EXPECT_EQ(a.T, T);
          EXPECT_EQ(a.parties, tau);
        }
      }
    }
  }
}

TEST(DpParams, ExactRationalScalesAndValidation) {
  EXPECT_EQ(exact_rational(0.25).num, 1u);
  EXPECT_EQ(exact_rational(0.25).den, 4u);
  EXPECT_EQ(exact_rational(6.0).num, 6u);
  const Rational tenth = exact_rational(0.1);
  EXPECT_EQ(static_cast<double>(tenth.num) / static_cast<double>(tenth.den), 0.1);
  EXPECT_EQ(tenth.num % 2, 1u);  // reduced
  // b = 2Tτ/ε exactly: ε·b = 2Tτ in rational arithmetic.
  const DpMechanism mech(DpParams{0.1, 600, DpExponent::Paper}, 16);
  const Rational eps = exact_rational(0.1);
  EXPECT_TRUE(mech.noise_scale.num * eps.num == u128{2} * 600 * 16 * eps.den * mech.noise_scale.den);
  EXPECT_THROW(DpParams({0.0, 5}).validate(), Error);
  EXPECT_THROW(DpParams({-1.0, 5}).validate(), Error);
  EXPECT_THROW(DpParams({std::nan(""), 5}).validate(), Error);
  EXPECT_THROW(DpParams({1.0, 0}).validate(), Error);
  EXPECT_THROW(DpParams({1.0, 11}).validate(10), Error);
  EXPECT_NO_THROW(DpParams({1.0, 10}).validate(10));
  EXPECT_THROW(parse_dp_exponent("other"), Error);
  EXPECT_EQ(parse_dp_exponent("reference"), DpExponent::Reference);
}

}  // namespace
}  // namespace flynn::federated
