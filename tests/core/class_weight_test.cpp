// Class weights: the text form, the weights "balanced" takes from the counts,
// the weighted filters (table and bit-packed forms agree), exactness under merge and
// forget, thread independence, the model file, and that "balanced" does what it is for:
// an imbalanced table whose minority class the unweighted model never predicts.
#include <gtest/gtest.h>

#include <numeric>

#include "flynn/class_weight.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"
#include "flynn/scoring.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

FlyConfig config_with(const std::string& class_weight, double gamma = 0.8) {
  HyperParams h;
  h.m = 2000;
  h.rho = 32;
  h.gamma = gamma;
  h.variant = parse_variant("paper");
  h.class_weight = ClassWeight::parse(class_weight);
  return h.resolve(6);
}

// Two overlapping classes in 6 dimensions, 400 rows of c0 and `minority` of c1.
Dataset imbalanced(std::size_t minority, std::uint64_t seed) {
  const Dataset all = test::blobs(2, 400, 6, seed, 2.5);
  std::vector<std::size_t> keep;
  std::size_t kept = 0;
  for (std::size_t r = 0; r < all.n_rows; ++r)
    if (all.labels[r] == 0 || kept++ < minority) keep.push_back(r);
  return all.subset(keep);
}

TEST(ClassWeight, TextReadsBackAndBadTextIsNamed) {
  for (const std::string t : {"none", "balanced", "yes=5,no=0.5", "a=b=2"})
    EXPECT_EQ(ClassWeight::parse(t).text(), t);
  EXPECT_EQ(ClassWeight::parse("a=b=2").given.at(0).first, "a=b");
  const auto message = [](const std::string& text) {
    try {
      ClassWeight::parse(text).validate();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("yes").find("expected none, balanced or NAME=WEIGHT"), std::string::npos);
  EXPECT_NE(message("yes=0").find("not a finite positive number"), std::string::npos);
  EXPECT_NE(message("yes=-1").find("not a finite positive number"), std::string::npos);
  EXPECT_NE(message("yes=inf").find("not a finite positive number"), std::string::npos);
  EXPECT_NE(message("yes=2x").find("not a finite positive number"), std::string::npos);
  EXPECT_NE(message("yes=1,yes=2").find("given twice"), std::string::npos);
  EXPECT_NE(message("=1").find("expected none"), std::string::npos);
  // A class the model does not have is named with the model's classes.
  const Dataset data = imbalanced(20, 1);
  try {
    FlyNN model(config_with("c0=1,maybe=3"), data.classes);
    ADD_FAILURE() << "an unknown class was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'maybe' is not a class of the model (classes: c0, c1)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ClassWeight, BalancedWeightsComeFromTheCountsAndEqualTheRowsPerClass) {
  const Dataset data = imbalanced(40, 2);
  FlyNN model(config_with("balanced"), data.classes, 2);
  model.fit(data);
  const std::vector<double> w = model.class_weights();
  ASSERT_EQ(w.size(), 2u);
  // n / (L·n_l): 440 / (2·400) and 440 / (2·40).
  EXPECT_DOUBLE_EQ(w[0], 440.0 / 800.0);
  EXPECT_DOUBLE_EQ(w[1], 440.0 / 80.0);
  const std::vector<double> sizes = {400.0, 40.0};
  EXPECT_EQ(ClassWeight::parse("balanced").weights_for_sizes(data.classes.names(), sizes), w);
  // Given weights by name; unnamed classes weigh 1; none gives no weights at all.
  EXPECT_EQ(ClassWeight::parse("c1=3").weights_for_sizes(data.classes.names(), sizes),
            (std::vector<double>{1, 3}));
  EXPECT_TRUE(ClassWeight{}.weights(data.classes.names(), model.counts(), 32).empty());
  // Priors: (n_l + 1)/(n + L) weighted and renormalised, nearly uniform when balanced.
  const std::vector<double> p = class_priors(model.counts().rows_per_class(), w);
  EXPECT_NEAR(p[0] + p[1], 1.0, 1e-12);
  EXPECT_NEAR(p[0], 0.5, 0.01);
}

TEST(ClassWeight, WeightedBinaryFiltersAgreeWithTheTable) {
  const Dataset data = imbalanced(60, 3);
  FlyNN model(config_with("balanced", 0.0), data.classes, 2);
  model.fit(data);
  const std::vector<double> w = model.class_weights();
  const FilterScorer bits(model.counts(), 0.0, 32, w);  // L ≤ 64: the bit-packed form
  const std::vector<double> table = filter_table(model.counts(), 0.0, w);
  std::vector<std::uint32_t> winners(data.n_rows * 32);
  model.hasher().hash(data.features.data(), data.n_rows, winners.data(), 1);
  std::size_t differ_from_unweighted = 0;
  const std::vector<double> plain = filter_table(model.counts(), 0.0);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    double a[2], b[2], c[2];
    bits.score(winners.data() + r * 32, a);
    score_winners(winners.data() + r * 32, 32, table.data(), 2, b);
    score_winners(winners.data() + r * 32, 32, plain.data(), 2, c);
    EXPECT_EQ(a[0], b[0]);
    EXPECT_EQ(a[1], b[1]);
    differ_from_unweighted += a[0] != c[0];
  }
  // The heavy class needs ⌈1/w⌉ rows to mark a unit: its scores change.
  EXPECT_GT(differ_from_unweighted, 0u);
  // Weight 1 is the paper's filter, value for value.
  for (std::uint32_t c : {0u, 1u, 2u, 7u, 100u}) {
    EXPECT_EQ(filter_value(c, 0.8), c == 0 ? 1.0 : std::pow(0.8, c));
    EXPECT_EQ(filter_value(c, 0.0), c == 0 ? 1.0 : 0.0);
  }
  EXPECT_EQ(filter_value(2, 0.0, 0.4), 1.0);  // 0.8 of a weighted row: not yet seen
  EXPECT_EQ(filter_value(3, 0.0, 0.4), 0.0);
}

TEST(ClassWeight, MergeAndForgetAreExactWithBalancedWeights) {
  const Dataset data = imbalanced(50, 4);
  std::vector<std::size_t> first, second;
  for (std::size_t r = 0; r < data.n_rows; ++r) (r % 3 == 0 ? second : first).push_back(r);
  const Dataset a = data.subset(first), b = data.subset(second);
  for (const char* cw : {"balanced", "c1=4"}) {
    for (double gamma : {0.0, 0.8}) {
      SCOPED_TRACE(std::string(cw) + " gamma " + std::to_string(gamma));
      const FlyConfig c = config_with(cw, gamma);
      FlyNN whole(c, data.classes, 2), pa(c, data.classes, 2), pb(c, data.classes, 3);
      whole.fit(data);
      pa.fit(a);
      pb.fit(b);
      const std::vector<double> before = pa.predict_proba(data);  // cached priors of a alone
      pa.merge(pb);
      EXPECT_NE(pa.predict_proba(data), before);
      // The counts merge exactly; the calibration is fit()'s of the rows it saw.
      pa.set_calibration(whole.calibration());
      EXPECT_EQ(pa.scores(data), whole.scores(data));
      EXPECT_EQ(pa.predict_proba(data), whole.predict_proba(data));
      EXPECT_EQ(pa.class_weights(), whole.class_weights());
      FlyNN forgot(c, data.classes, 1);
      forgot.fit(data);
      (void)forgot.predict_proba(data);  // priors cached, then the counts change
      forgot.forget(b);
      FlyNN only_a(c, data.classes, 4);
      only_a.fit(a);
      EXPECT_EQ(forgot.scores(data), only_a.scores(data));
      only_a.set_calibration(forgot.calibration());  // forget keeps the calibration of the fit
      EXPECT_EQ(forgot.predict_proba(data), only_a.predict_proba(data));
      EXPECT_EQ(forgot.class_weights(), only_a.class_weights());
      // Threads never change results.
      only_a.set_threads(1);
      const auto one = only_a.predict(data);
      only_a.set_threads(3);
      EXPECT_EQ(only_a.predict(data), one);
    }
  }
}

TEST(ClassWeight, ModelFileKeepsTheWeightAndOnlyWeightedModelsAreVersionFour) {
  const Dataset data = imbalanced(30, 5);
  for (const char* cw : {"balanced", "c0=0.5,c1=2.25"}) {
    FlyNN model(config_with(cw), data.classes, 2);
    model.fit(data);
    model.clear_temperature();  // without a calibration, which needs a later version
    const std::string bytes = io::serialize_model(model);
    EXPECT_EQ(io::parse_model(bytes, "m", std::uint64_t{1} << 30, {}).format_version, 4u);
    const FlyNN back = io::deserialize_model(bytes, "m");
    EXPECT_EQ(back.config().class_weight, model.config().class_weight);
    EXPECT_EQ(back.scores(data), model.scores(data));
    EXPECT_EQ(io::serialize_model(back), bytes);
    // A truncated or altered weight section is refused with a message, never accepted.
    std::string bad = bytes;
    bad[bad.size() / 2] ^= 0x5a;
    EXPECT_THROW(io::deserialize_model(bad, "bad"), Error);
  }
  FlyNN plain(config_with("none"), data.classes, 2);
  plain.fit(data);
  plain.clear_temperature();
  const std::string bytes = io::serialize_model(plain);
  EXPECT_LT(io::parse_model(bytes, "m", std::uint64_t{1} << 30, {}).format_version, 4u);
}

TEST(ClassWeight, BalancedPredictsTheMinorityClassTheUnweightedModelMisses) {
  // The purpose: on an imbalanced two-class table (10:1), the unweighted filters favour the
  // majority; balanced weights raise balanced accuracy on held-out rows of the same draw.
  const Dataset all = test::blobs(2, 800, 6, 6, 2.5);
  std::vector<std::size_t> train_rows, test_rows;
  std::size_t seen[2] = {0, 0};  // rows of each class so far: alternate them, train and test
  for (std::size_t r = 0; r < all.n_rows; ++r) {
    const std::uint32_t y = all.labels[r];
    if (y == 1 && seen[1] >= 80) continue;
    (seen[y]++ % 2 == 0 ? train_rows : test_rows).push_back(r);
  }
  const Dataset train = all.subset(train_rows), test = all.subset(test_rows);
  double bacc[2] = {0, 0};
  int i = 0;
  for (const char* cw : {"none", "balanced"}) {
    FlyNN model(config_with(cw), train.classes, 2);
    model.fit(train);
    bacc[i++] = balanced_accuracy(test.labels, model.predict(test), 2);
  }
  EXPECT_GT(bacc[1], bacc[0] + 0.05) << "none " << bacc[0] << ", balanced " << bacc[1];
}

TEST(ClassWeight, DifferentiallyPrivateCountsTakeSizesFromTheirMass) {
  // A DP release has no row totals; balanced reads the released counts' mass / ρ.
  ClassCounts released(2, 2000);
  for (std::uint32_t i = 0; i < 2000; ++i)
    released.of_class(0)[i] = i % 4 == 0 ? 8 : 0;  // mass 4000
  for (std::uint32_t i = 0; i < 2000; ++i)
    released.of_class(1)[i] = i % 10 == 0 ? 2 : 0;  // mass 400
  const Dataset data = imbalanced(10, 7);
  FlyNN model(config_with("balanced"), data.classes, released, 1);
  Provenance p;
  p.differentially_private = true;
  p.epsilon = 1;
  p.dp_T = 10;
  p.dp_parties = 1;
  model.set_provenance(p);
  const std::vector<double> w = model.class_weights();
  // sizes 4000/32 = 125 and 400/32 = 12.5: w = 137.5 / (2·size).
  EXPECT_DOUBLE_EQ(w[0], 137.5 / 250.0);
  EXPECT_DOUBLE_EQ(w[1], 137.5 / 25.0);
  for (double s : model.scores(data)) EXPECT_TRUE(std::isfinite(s));
}

}  // namespace
}  // namespace flynn
