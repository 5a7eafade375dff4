// Second-order filters (FlyConfig::pairs, pair_codes.hpp): a row's codes are its winners
// and distinct pair cells, a function of its winner set and the seed; the scores are the
// two blocks' documented formula; and every property FlyNN has for unit counts holds with
// pairs: exact merge and forget, thread independence, the model file (version 7) and its
// checks, one row as in a batch, federated parity (tests/federated/parity_test.cpp) and the
// fast CV (tests/eval/fly_cv_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/pair_codes.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::blobs;

FlyConfig pair_config(std::uint32_t m, std::uint32_t rho, std::uint32_t pairs, std::uint64_t seed = 5) {
  FlyConfig c;
  c.input_dim = 6;
  c.m = m;
  c.s = 3;
  c.rho = rho;
  c.gamma = 0.7;
  c.seed = seed;
  c.pairs = pairs;
  c.filter_scoring = FilterScoring::Relative;
  return c;
}

// Distinct random winners in [0, m).
std::vector<std::uint32_t> random_winners(std::uint32_t m, std::uint32_t rho, SeededRng& rng) {
  std::set<std::uint32_t> s;
  while (s.size() < rho) s.insert(static_cast<std::uint32_t>(rng.uniform_below(m)));
  return {s.begin(), s.end()};
}

TEST(PairCodes, WinnersThenDistinctPairCellsInTheirBlock) {
  // Few cells for many pairs (pairs·ρ = 28 of M = 64 cells; with ρ = 7 and pairs = 4 the
  // cyclic pairing also names some unordered pairs twice): collisions are certain, and
  // every row must still get 28 distinct pair cells.
  SeededRng rng(3);
  for (const auto& [m, rho, pairs] : std::vector<std::array<std::uint32_t, 3>>{{8, 7, 4}, {200, 12, 3}, {4096, 128, 8}}) {
    const FlyConfig c = pair_config(m, rho, pairs);
    c.validate();
    const PairCoder coder(c);
    ASSERT_TRUE(coder.active());
    ASSERT_EQ(coder.codes_per_row(), rho * (1 + pairs));
    PairCoder::Scratch scratch;
    for (int trial = 0; trial < 50; ++trial) {
      const std::vector<std::uint32_t> w = random_winners(m, rho, rng);
      std::vector<std::uint32_t> codes(coder.codes_per_row());
      coder.row_codes(w.data(), codes.data(), scratch);
      EXPECT_TRUE(std::equal(w.begin(), w.end(), codes.begin()));
      const std::set<std::uint32_t> pair_cells(codes.begin() + rho, codes.end());
      EXPECT_EQ(pair_cells.size(), std::size_t(rho) * pairs) << "pair cells must be distinct";
      EXPECT_GE(*pair_cells.begin(), m);
      EXPECT_LT(*pair_cells.rbegin(), c.cells());
      // The same winners in another order: the same pair cells (the order is the units'
      // fixed priority, not the input's).
      std::vector<std::uint32_t> shuffled = w;
      std::reverse(shuffled.begin(), shuffled.end());
      std::vector<std::uint32_t> again(coder.codes_per_row());
      coder.row_codes(shuffled.data(), again.data(), scratch);
      EXPECT_TRUE(std::equal(codes.begin() + rho, codes.end(), again.begin() + rho));
    }
  }
}

TEST(PairCodes, CellsFollowTheSeedAndTheWinnerSet) {
  const FlyConfig a = pair_config(4096, 64, 4, 1), b = pair_config(4096, 64, 4, 2);
  SeededRng rng(9);
  const std::vector<std::uint32_t> w = random_winners(4096, 64, rng);
  std::vector<std::uint32_t> wa(a.codes_per_row()), wb(b.codes_per_row()), w2(a.codes_per_row());
  PairCoder::Scratch scratch;
  PairCoder(a).row_codes(w.data(), wa.data(), scratch);
  PairCoder(b).row_codes(w.data(), wb.data(), scratch);
  EXPECT_NE(wa, wb);
  // One winner changed: most of the row's pairs (those not involving it) keep their cells.
  std::vector<std::uint32_t> v = w;
  v[10] = (v[10] + 1) % 4096;
  while (std::count(v.begin(), v.end(), v[10]) > 1) v[10] = (v[10] + 1) % 4096;
  std::sort(v.begin(), v.end());
  PairCoder(a).row_codes(v.data(), w2.data(), scratch);
  const std::set<std::uint32_t> before(wa.begin() + 64, wa.end()), after(w2.begin() + 64, w2.end());
  std::vector<std::uint32_t> shared;
  std::set_intersection(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(shared));
  EXPECT_GE(shared.size(), 256u - 4u * 4u);
  EXPECT_LT(shared.size(), 256u);
}

TEST(PairCodes, ValidationNamesTheLimits) {
  EXPECT_NO_THROW(pair_config(200, 12, 3).validate());
  const auto message = [](const FlyConfig& c) {
    try {
      c.validate();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(pair_config(200, 12, Defaults::max_pairs + 1)).find("pairs = 17"), std::string::npos);
  EXPECT_NE(message(pair_config(200, 4, 4)).find("rho-1"), std::string::npos);
  // pairs·ρ must stay within half the 8·m pair cells.
  EXPECT_NE(message(pair_config(40, 39, 16)).find("half of the 320 pair cells"), std::string::npos);
  HyperParams h;
  h.pairs = 99;
  EXPECT_THROW(h.resolve(6), Error);
  h.pairs = 2;
  EXPECT_EQ(h.resolve(6).pairs, 2u);
  EXPECT_EQ(HyperParams{}.resolve(6).pairs, 0u);
}

// The documented score: (unit part + W·pair part/pairs)/(1 + W), each part the sum over the
// row's codes in its block of γ^count divided by the class's mean over the block (relative).
TEST(PairFilters, ScoresAreTheTwoBlocksFormula) {
  const Dataset data = blobs(3, 40, 6, 11, 1.2);
  const FlyConfig c = pair_config(300, 12, 3);
  FlyNN model(c, data.classes, 1);
  model.fit(data);
  const ClassCounts& counts = model.counts();
  ASSERT_EQ(counts.m(), c.cells());
  const std::vector<std::uint32_t> winners = model.hash(DataView(data));
  const std::vector<double> scores = model.scores(data);
  const PairCoder coder(c);
  PairCoder::Scratch scratch;
  const double W = Defaults::pair_weight;
  std::vector<std::uint32_t> codes(coder.codes_per_row());
  for (std::size_t r = 0; r < data.n_rows; r += 7) {
    coder.row_codes(winners.data() + r * c.rho, codes.data(), scratch);
    for (std::size_t l = 0; l < 3; ++l) {
      const std::uint32_t* cl = counts.of_class(l);
      double unit_mean = 0, pair_mean = 0;
      for (std::uint32_t i = 0; i < c.m; ++i) unit_mean += std::pow(c.gamma, cl[i]);
      for (std::uint32_t i = c.m; i < c.cells(); ++i) pair_mean += std::pow(Defaults::pair_gamma, cl[i]);
      unit_mean /= c.m;
      pair_mean /= c.pair_cells();
      double unit = 0, pair = 0;
      for (std::uint32_t k = 0; k < c.rho; ++k) unit += std::pow(c.gamma, cl[codes[k]]) / unit_mean;
      for (std::uint32_t k = c.rho; k < codes.size(); ++k) pair += std::pow(Defaults::pair_gamma, cl[codes[k]]) / pair_mean;
      EXPECT_NEAR(scores[r * 3 + l], (unit + W * pair / c.pairs) / (1 + W), 1e-9) << r << " " << l;
    }
  }
  // The pairs change what the model says (else the option would be a no-op).
  FlyConfig units_only = c;
  units_only.pairs = 0;
  FlyNN plain(units_only, data.classes, 1);
  plain.fit(data);
  EXPECT_NE(plain.scores(data), scores);
}

TEST(PairFilters, CountsAreRowSumsThatMergeForgetAndIgnoreThreads) {
  const Dataset all = blobs(4, 120, 10, 6, 1.5);
  HyperParams h;
  h.pairs = 4;
  const FlyConfig c = h.resolve(10, 4);  // the default variant (standardising) with pairs
  ASSERT_EQ(c.pairs, 4u);
  FlyNN whole(c, all.classes, 1), many(c, all.classes, 3);
  whole.fit(all);
  many.fit(all);
  EXPECT_EQ(whole.counts(), many.counts());
  EXPECT_EQ(whole.scores(all), many.scores(all));
  // Each class's counts sum to rows × codes per row; no count exceeds its class's rows.
  for (std::size_t l = 0; l < 4; ++l) {
    const std::uint32_t* cl = whole.counts().of_class(l);
    const std::uint64_t sum = std::accumulate(cl, cl + c.cells(), std::uint64_t{0});
    EXPECT_EQ(sum, whole.counts().rows_per_class()[l] * c.codes_per_row());
    EXPECT_LE(*std::max_element(cl, cl + c.cells()), whole.counts().rows_per_class()[l]);
  }
  // Merge and forget are exact (with the default variant's statistics fixed at first fit).
  test::expect_exact_merge_and_forget(c, all);
  // One row scores as in a batch.
  const std::vector<double> batch = whole.scores(all);
  for (std::size_t r = 0; r < all.n_rows; r += 37) {
    const std::vector<double> one = whole.scores(all.subset({r}));
    EXPECT_EQ(one, std::vector<double>(batch.begin() + r * 4, batch.begin() + (r + 1) * 4));
  }
}

// A paper-half variant's halves only hash, each with half the winners: pairs belong to the
// whole (pairs = 2 is valid for ρ = 4 though not for a half's ρ = 2). Found by the fuzzer.
TEST(PairFilters, PaperHalfVariantsPairTheJoinedWinners) {
  const Dataset data = blobs(3, 30, 6, 8, 1.0);
  FlyConfig c = pair_config(64, 4, 2);
  c.variant = parse_variant("zsign+paper");
  c.validate();
  for (const FlyConfig& half : c.halves()) EXPECT_EQ(half.pairs, 0u);
  FlyNN model(c, data.classes, 1);
  model.fit(data);
  EXPECT_EQ(model.counts().m(), c.cells());
  const io::ModelContents mc = io::parse_model(io::serialize_model(model), "half");
  FlyNN loaded(mc.config, mc.labels, mc.counts, 1);
  loaded.set_feature_stats(mc.stats);
  EXPECT_EQ(loaded.scores(data), model.scores(data));
}

TEST(PairFilters, ModelFileVersion7RoundTripsAndIsChecked) {
  const Dataset data = blobs(3, 60, 6, 2, 1.0);
  for (const FilterScoring scoring : {FilterScoring::Relative, FilterScoring::Absolute}) {
    FlyConfig c = pair_config(256, 12, 2);
    c.filter_scoring = scoring;
    FlyNN model(c, data.classes, 1);
    model.fit(data);
    model.clear_temperature();  // without a calibration (version 10)
    const std::string bytes = io::serialize_model(model);
    const io::ModelContents mc = io::parse_model(bytes, "pairs");
    EXPECT_EQ(mc.format_version, io::kPairsModelFormatVersion);
    EXPECT_EQ(mc.config, c);
    EXPECT_EQ(mc.counts, model.counts());
    FlyNN loaded(mc.config, mc.labels, mc.counts, 1);
    EXPECT_EQ(loaded.scores(data), model.scores(data));
    EXPECT_EQ(io::serialize_model(loaded), bytes);
  }
  // Without pairs nothing changes: a relative model is still version 6.
  FlyConfig plain = pair_config(256, 12, 0);
  FlyNN p(plain, data.classes, 1);
  p.fit(data);
  p.clear_temperature();
  EXPECT_EQ(io::parse_model(io::serialize_model(p), "plain").format_version, io::kRelativeModelFormatVersion);
  // Counts of another shape are refused when set or loaded.
  FlyNN model(pair_config(256, 12, 2), data.classes, 1);
  EXPECT_THROW(model.set_counts(ClassCounts(3, 256)), Error);
  EXPECT_THROW(FlyNN(pair_config(256, 12, 2), data.classes, ClassCounts(3, 256), 1), Error);
}

}  // namespace
}  // namespace flynn
