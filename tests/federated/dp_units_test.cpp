// The privacy unit through the whole protocol: `--dp-unit paper` and
// `--dp-unit record` on the thread backend that `flynn federated simulate` and (one party
// per rank) `flynn federated train` run, with the documented noise scale for each unit,
// the paper's unit as the default, and a post-processing applied identically on every
// party (the agreement on unit and post-processing: tests/federated/parity_test.cpp).
//
// The noise test is distributional. DP noise comes from OpenSSL's generator, which cannot
// be seeded by design (dp.hpp), so only the data, split and lifting matrix are seeded; the
// test's false-alarm probability is stated instead: each Kolmogorov–Smirnov acceptance
// fails with probability ≤ 1e-6 (kAlpha), and the same samples must also REJECT the other
// unit's scale at p < 1e-6, so the test cannot pass vacuously.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <cmath>
#include <limits>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/dp_postprocess.hpp"
#include "flynn/federated/dp_settings.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "test_support.hpp"

namespace flynn::federated {
namespace {

constexpr double kAlpha = 1e-6;

// Kolmogorov's limiting distribution P(K > λ), Stephens' finite-n correction (conservative
// for a discrete law: a rejection is real).
double ks_p(double d, double n) {
  const double lambda = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * d;
  if (lambda < 0.2) return 1.0;
  double sum = 0;
  for (int j = 1; j <= 100; ++j) sum += (j % 2 ? 2.0 : -2.0) * std::exp(-2.0 * j * j * lambda * lambda);
  return std::clamp(sum, 0.0, 1.0);
}

// CDF of η1 + η2, two independent discrete Laplace variables of scale b, on [−K, K]
// (the mass beyond is below e^−40).
struct SumOfTwoLaplace {
  std::int64_t K;
  std::vector<double> cdf;  // cdf[k + K] = P(S ≤ k)
  explicit SumOfTwoLaplace(double b) : K(static_cast<std::int64_t>(40 * b) + 10) {
    const DiscreteLaplace lap(exact_rational(b));
    std::vector<double> one(2 * K + 1), two(4 * K + 1, 0.0);
    for (std::int64_t j = -K; j <= K; ++j) one[j + K] = lap.pmf(j);
    for (std::int64_t i = -K; i <= K; ++i)
      for (std::int64_t j = -K; j <= K; ++j) two[i + j + 2 * K] += one[i + K] * one[j + K];
    double acc = 0;
    for (std::int64_t k = -2 * K; k <= 2 * K; ++k) {
      acc += two[k + 2 * K];
      if (k >= -K && k <= K) cdf.push_back(acc);
    }
  }
  double operator()(std::int64_t k) const {
    if (k < -K) return 0.0;
    if (k > K) return 1.0;
    return cdf[k + K];
  }
};

// KS statistic of integer samples against a CDF (sup over the integers).
template <class Cdf>
double ks_stat(std::vector<std::int64_t> samples, const Cdf& cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0;
  for (std::size_t i = 0; i < samples.size();) {
    std::size_t j = i;
    while (j < samples.size() && samples[j] == samples[i]) ++j;
    d = std::max({d, std::abs(j / n - cdf(samples[i])), std::abs(i / n - cdf(samples[i] - 1))});
    i = j;
  }
  return d;
}

struct Federation {
  Dataset data = test::blobs(2, 2400, 6, 17, 0.4);
  std::vector<Dataset> shards;
  FederationSettings settings;
  FlyConfig config;
  std::vector<ClassCounts> party_counts;  // what each party counts before its release
  Federation() {
    for (const auto& rows : split_rows(data.labels, 2, 2, SplitSpec::parse("iid"), 4))
      shards.push_back(data.subset(rows));
    // m = 16 units with ρ = 8 winners: every entry counts hundreds of rows, so no release
    // is ever clamped at 0 and released − counted is exactly the noise.
    settings.hyper.m = 16;
    settings.hyper.s = 3;
    settings.hyper.rho = 8;
    settings.hyper.gamma = 0.9;
    settings.hyper.seed = 99;
    settings.hyper.variant = Variant{};  // the paper's encoding: the one DP supports
    settings.labels = data.classes;
    settings.threads = 1;
    config = settings.hyper.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
    const FlyNN fly(config, data.classes, 1);
    for (const Dataset& s : shards) party_counts.push_back(fly.count(s));
  }
  ColonyOutcome run(const DpParams& dp) {
    FederationSettings s = settings;
    s.dp = dp;
    return run_colony({&shards[0], &shards[1]}, s);
  }
};

TEST(DpUnits, ProtocolNoiseHasTheDocumentedScaleForEachUnit) {
  Federation f;
  const std::uint32_t cells = f.config.m * 2;  // T = m·L: every entry is released
  const double eps = 16;
  const double b_paper = 2.0 * cells * 2 / eps;  // 2Tτ/ε = 8
  const double b_record = 2.0 * cells / eps;     // 2T/ε  = 4
  // Entries far from zero for both parties (> 25 b: clamping has probability < e^−25).
  std::vector<std::size_t> usable;
  for (std::size_t i = 0; i < cells; ++i)
    if (f.party_counts[0].values()[i] > 25 * b_paper && f.party_counts[1].values()[i] > 25 * b_paper)
      usable.push_back(i);
  ASSERT_GE(usable.size(), 16u);
  const SumOfTwoLaplace paper_law(b_paper), record_law(b_record);
  for (DpUnit unit : {DpUnit::Paper, DpUnit::Record}) {
    DpParams dp{eps, cells, DpExponent::Paper};
    dp.unit = unit;
    std::vector<std::int64_t> noise;
    for (int run = 0; run < 80; ++run) {
      const ColonyOutcome out = f.run(dp);
      ASSERT_TRUE(out.privacy.has_value());
      // The account follows the unit: ε/τ per party (sequential), ε per party (parallel).
      EXPECT_NEAR(out.privacy->per_party, unit == DpUnit::Paper ? eps / 2 : eps, 1e-9);
      EXPECT_NEAR(out.privacy->total, eps, 1e-9);
      for (std::size_t i : usable)
        noise.push_back(std::int64_t(out.model.counts().values()[i]) -
                        std::int64_t(f.party_counts[0].values()[i]) - std::int64_t(f.party_counts[1].values()[i]));
    }
    const SumOfTwoLaplace& right = unit == DpUnit::Paper ? paper_law : record_law;
    const SumOfTwoLaplace& wrong = unit == DpUnit::Paper ? record_law : paper_law;
    const double n = static_cast<double>(noise.size());
    EXPECT_GT(ks_p(ks_stat(noise, right), n), kAlpha) << dp_unit_name(unit);
    EXPECT_LT(ks_p(ks_stat(noise, wrong), n), kAlpha) << dp_unit_name(unit);
  }
}

TEST(DpUnits, PaperUnitAndNoPostProcessingAreTheDefaults) {
  const DpParams p;
  EXPECT_EQ(p.unit, DpUnit::Paper);
  EXPECT_EQ(p.postprocess, DpPostprocess::None);
  // The mechanism of the default: b = 2Tτ/ε, ε' = ε/τ (the paper's Theorem 6).
  const DpMechanism m(DpParams{1.0, 10}, 4);
  EXPECT_DOUBLE_EQ(m.epsilon_party, 0.25);
  EXPECT_DOUBLE_EQ(m.noise_scale.to_double(), 80.0);
}

TEST(DpUnits, PostProcessingRunsInTheProtocolOnEveryParty) {
  Federation f;
  DpParams dp{2.0, 8};
  dp.postprocess = DpPostprocess::Threshold;
  const ColonyOutcome out = f.run(dp);  // run_colony checks every party holds this model
  const DpMechanism mech(dp, 2);
  const auto theta = static_cast<std::uint32_t>(std::ceil(mech.noise_scale.to_double()));
  for (std::uint32_t v : out.model.counts().values()) EXPECT_TRUE(v == 0 || v >= theta) << v;
  for (const PartyReport& r : out.reports) EXPECT_EQ(r.model_crc32, out.reports[0].model_crc32);
}

// --dp-T auto (dp.hpp, auto_dp_T): T = 2^round(log2(8·ε'/τ)) within [1, 1024] and m·L,
// from public quantities only, fixed once (DpParams::resolved) and the same on every party.
TEST(DpUnits, AutoTIsTheRuleOfPublicQuantities) {
  DpParams p;
  p.T_auto = true;
  const auto T = [&p](double eps, std::uint32_t parties, std::uint64_t cells = 1u << 20) {
    p.epsilon = eps;
    return auto_dp_T(p, parties, cells);
  };
  EXPECT_EQ(T(4, 3), 4u);         // 8·(4/3)/3 = 3.6 → 2^2
  EXPECT_EQ(T(16, 3), 16u);       // 14.2 → 2^4
  EXPECT_EQ(T(1, 3), 1u);         // 0.89 → 2^0
  EXPECT_EQ(T(0.5, 10), 1u);      // 0.04: at least one entry
  EXPECT_EQ(T(16, 10), 1u);       // 1.28 → 2^0
  EXPECT_EQ(T(64, 10), 4u);       // 5.12 → 2^2
  EXPECT_EQ(T(1e6, 1), kAutoTMax);
  EXPECT_EQ(T(1e6, 1, 100), 100u);  // never more than the m·L cells
  p.unit = DpUnit::Record;         // ε' = ε: the same rule in the party's budget
  EXPECT_EQ(T(4, 4), 8u);          // 8·4/4 = 8
  EXPECT_THROW(auto_dp_T(p, 0, 10), Error);
  EXPECT_THROW(auto_dp_T(p, 2, 0), Error);
}

TEST(DpUnits, AutoTIsResolvedOnceAndReported) {
  DpParams p{2.0, 0};
  p.T_auto = true;
  p.validate();                           // not a number yet, and not an error
  EXPECT_THROW(DpMechanism(p, 2), Error);  // a mechanism needs the number
  const DpParams r = p.resolved(1000, 2);
  EXPECT_TRUE(r.T_auto);
  EXPECT_EQ(r.T, auto_dp_T(p, 2, 1000));
  DpParams given{2.0, 40};
  EXPECT_EQ(given.resolved(1000, 2).T, 40u);
  EXPECT_THROW(given.resolved(30, 2), Error);  // T > m·L, as validate says

  // The flag's row: a count or "auto", on the wire and in the fingerprint as given.
  const DpParamField& row = *find_dp_param("dp_T");
  DpParams q;
  row.set(q, std::string("auto"));
  EXPECT_TRUE(q.T_auto);
  EXPECT_EQ(setting_text(*row.get(q)), "auto");
  row.set(q, std::string("25"));
  EXPECT_FALSE(q.T_auto);
  EXPECT_EQ(q.T, 25u);
  row.set(q, std::uint64_t{30});
  EXPECT_EQ(setting_text(*row.get(q)), "30");
  for (const char* bad : {"", "-3", "1.5", "automatic", "25 "}) {
    try {
      row.set(q, std::string(bad));
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dp-T"), std::string::npos) << e.what();
    }
  }
  DpGiven given_flags(dp_param_fields().size());
  given_flags[0] = 1.0;
  given_flags[1] = std::string("auto");
  const auto from_flags = dp_params_from_given(given_flags);
  ASSERT_TRUE(from_flags);
  EXPECT_TRUE(from_flags->T_auto);
  const auto fp = dp_fingerprint(*from_flags);
  EXPECT_NE(std::find(fp.begin(), fp.end(), std::pair<std::string, std::string>{"dp-T", "auto"}), fp.end());

  // Through the protocol: every party releases the rule's T, and the account and the
  // model's provenance say which.
  Federation f;
  DpParams dp{2.0, 0};
  dp.T_auto = true;
  dp.unit = DpUnit::Record;
  const ColonyOutcome out = f.run(dp);
  const std::uint32_t want = auto_dp_T(dp, 2, std::uint64_t(f.config.m) * 2);
  EXPECT_EQ(want, 8u);  // 8·2/2, within the m·L = 32 cells
  ASSERT_TRUE(out.privacy);
  EXPECT_EQ(out.privacy->T, want);
  EXPECT_EQ(out.model.provenance().dp_T, want);
}

}  // namespace
}  // namespace flynn::federated
