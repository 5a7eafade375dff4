// The automatic choice (auto_config.hpp): its rule, its candidates, determinism, and the
// nested cross-validation's scores against FlyNN models trained on each outer fold
// (`flynn train --auto` end to end: cli_tune_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/auto_config.hpp"
#include "test_support.hpp"

namespace flynn::eval {
namespace {

// The column of a choice's γ grid that holds the default rule's own γ (gammas.size() when
// absent): the γ its default_metric was read at.
std::size_t rule_gamma_column(const AutoChoice& a) {
  return static_cast<std::size_t>(
      std::find(a.gammas.begin(), a.gammas.end(), a.candidates.front().config.gamma) - a.gammas.begin());
}

TEST(AutoRule, KeepsTheDefaultUnlessAnotherWinsByMoreThanTheMargin) {
  // Candidate 0 is the default, its γ index 1 (values exact in binary, so "more than" is exact).
  const std::vector<std::vector<double>> m = {{0.25, 0.5, 0.625}, {0.5, 0.75, 0.25}};
  EXPECT_EQ(auto_rule(m, 1, 0.0), std::make_pair(std::size_t{1}, std::size_t{1}));
  EXPECT_EQ(auto_rule(m, 1, 0.125), std::make_pair(std::size_t{1}, std::size_t{1}));
  EXPECT_EQ(auto_rule(m, 1, 0.25), std::make_pair(std::size_t{0}, std::size_t{1}));  // not more than
  EXPECT_EQ(auto_rule(m, 1, 0.5), std::make_pair(std::size_t{0}, std::size_t{1}));
  // Ties go to the earlier candidate, then the earlier γ.
  const std::vector<std::vector<double>> tie = {{0.5, 0.6}, {0.9, 0.7}, {0.9, 0.9}};
  EXPECT_EQ(auto_rule(tie, 1, 0.0), std::make_pair(std::size_t{1}, std::size_t{0}));
  // The default's own other γ can win.
  EXPECT_EQ(auto_rule({{0.9, 0.6}}, 1, 0.01), std::make_pair(std::size_t{0}, std::size_t{0}));
  EXPECT_THROW(auto_rule({}, 0, 0.0), Error);
  EXPECT_THROW(auto_rule({{0.5}}, 1, 0.0), Error);
}

TEST(AutoCandidates, TheDefaultFirstEachConfigOnceAndGivenSettingsKept) {
  for (std::uint32_t d : {3u, 9u, 20u, 40u, 200u, 784u}) {
    SCOPED_TRACE(d);
    {
      const auto c = auto_candidates(HyperParams{}, d, 4);
      ASSERT_GE(c.size(), 3u);
      EXPECT_EQ(c.front().name, "default");
      EXPECT_EQ(c.front().config, HyperParams{}.resolve(d, 4));
      std::set<std::string> names;
      for (std::size_t i = 0; i < c.size(); ++i) {
        EXPECT_TRUE(names.insert(c[i].name).second) << c[i].name;
        for (std::size_t j = 0; j < i; ++j) EXPECT_NE(c[i].config, c[j].config) << c[i].name;
        // Anchor encodings only where they were made for: few features.
        if (c[i].config.variant.anchors) {
          EXPECT_LE(d, 32u);
        }
        EXPECT_LE(c[i].config.m, Defaults::max_m);
      }
      // The rule's configuration with second-order filters is one candidate.
      FlyConfig with_pairs = c.front().config;
      with_pairs.pairs = Defaults::tune_pairs;
      EXPECT_EQ(std::count_if(c.begin(), c.end(), [&](const AutoCandidate& a) { return a.config == with_pairs; }), 1);
      // … and with log1p-transformed values (the rule standardises at every d).
      FlyConfig transformed = c.front().config;
      transformed.value_transform = Defaults::tune_value_transform;
      EXPECT_EQ(std::count_if(c.begin(), c.end(), [&](const AutoCandidate& a) { return a.config == transformed; }),
                1);
    }
  }
  // A given variant and seed stay in every candidate; a given m leaves no larger hash.
  HyperParams given;
  given.variant = parse_variant("paper");
  given.seed = 11;
  for (const auto& c : auto_candidates(given, 20, 3)) {
    EXPECT_TRUE(c.config.variant.is_paper()) << c.name;
    EXPECT_EQ(c.config.seed, 11u);
    EXPECT_EQ(c.config.value_transform, ValueTransform::None) << c.name;  // the paper's reads raw rows
  }
  given = HyperParams{};
  given.m = 5000;
  for (const auto& c : auto_candidates(given, 20, 3)) EXPECT_EQ(c.config.m, 5000u) << c.name;
  given.gamma = 0.3;
  EXPECT_EQ(auto_gammas(given), std::vector<double>{0.3});
  EXPECT_EQ(auto_gammas(HyperParams{}).size(), 4u);
}

TEST(AutoChoice, DeterministicThreadIndependentAndTheRulesChoice) {
  const Dataset data = test::blobs(4, 45, 6, 23, 1.2);
  AutoOptions o;
  o.threads = 1;
  const AutoChoice a = choose_auto_config(data, HyperParams{}, o);
  o.threads = 2;
  const AutoChoice b = choose_auto_config(data, HyperParams{}, o);
  EXPECT_EQ(a.config, b.config);
  ASSERT_EQ(a.cv.size(), a.candidates.size());
  ASSERT_EQ(a.cv.size(), b.cv.size());
  for (std::size_t c = 0; c < a.cv.size(); ++c)
    for (std::size_t g = 0; g < a.gammas.size(); ++g) EXPECT_EQ(a.cv[c][g].fold_accuracy, b.cv[c][g].fold_accuracy);
  // The chosen score is the best of all, and the default's is its own γ's.
  double best = 0;
  for (const auto& per_gamma : a.cv)
    for (const CvResult& r : per_gamma) best = std::max(best, r.mean);
  // The rule's γ (0.5 here: 6 features get anchor units) is the default's column.
  const std::size_t g_rule = rule_gamma_column(a);
  ASSERT_LT(g_rule, a.gammas.size());
  EXPECT_EQ(a.gammas[g_rule], Defaults::anchor_gamma);
  EXPECT_EQ(a.default_metric, a.cv[0][g_rule].mean);
  if (a.chosen == 0 && a.chosen_gamma == g_rule) {
    EXPECT_LE(best - a.default_metric, a.margin);
  } else {
    EXPECT_EQ(a.chosen_metric, best);
    EXPECT_GT(a.chosen_metric - a.default_metric, a.margin);
  EXPECT_EQ(a.margin, auto_margin(o, data.n_rows));
  }
  EXPECT_EQ(a.config.gamma, a.gammas[a.chosen_gamma]);
  // An unreachable margin keeps the default.
  o.min_margin = 1.0;
  const AutoChoice kept = choose_auto_config(data, HyperParams{}, o);
  FlyConfig rule = HyperParams{}.resolve(6, 4);
  EXPECT_EQ(kept.config, rule);
  // Too few rows to cross-validate: the default, without CV.
  const Dataset tiny = test::blobs(2, 2, 6, 3);
  const AutoChoice small = choose_auto_config(tiny, HyperParams{}, AutoOptions{});
  EXPECT_TRUE(small.cv.empty());
  EXPECT_EQ(small.config, HyperParams{}.resolve(6, 2));
  // Bad settings.
  AutoOptions bad;
  bad.folds = 1;
  EXPECT_THROW(choose_auto_config(data, HyperParams{}, bad), Error);
  bad = AutoOptions{};
  bad.max_rows = 3;
  EXPECT_THROW(choose_auto_config(data, HyperParams{}, bad), Error);
}

TEST(AutoChoice, LargeDataChoosesOnAStratifiedSubsample) {
  const Dataset data = test::blobs(3, 100, 5, 29, 1.0);
  AutoOptions o;
  o.max_rows = 90;
  o.threads = 1;
  const AutoChoice a = choose_auto_config(data, HyperParams{}, o);
  EXPECT_EQ(a.rows, 90u);
  EXPECT_EQ(choose_auto_config(data, HyperParams{}, o).config, a.config);
}

TEST(AutoCrossValidation, EachFoldScoresTheModelItsChoiceTrainsOnThatFoldsRows) {
  // Nested CV: fold f's score is that of a FlyNN with the configuration chosen on fold f's
  // training rows alone, trained on them and scored on fold f.
  const Dataset data = test::blobs(3, 40, 5, 41, 1.5);
  const std::uint32_t k = 4;
  const auto folds = stratified_folds(data.labels, 3, k, 0);
  AutoOptions o;
  o.threads = 2;
  o.min_margin = 0.0;  // let the choice move, so the folds need not all keep the default
  o.margin_standard_errors = 0.0;
  const AutoCvResult r = cross_validate_auto(data, HyperParams{}, folds, k, o);
  // Scoring every candidate (the study's runs) changes no nested score.
  const AutoCvResult every = cross_validate_auto(data, HyperParams{}, folds, k, o, true);
  EXPECT_EQ(every.cv.fold_accuracy, r.cv.fold_accuracy);
  for (const auto& per_gamma : every.outer) EXPECT_EQ(per_gamma.size(), every.gammas.size());
  ASSERT_EQ(r.choices.size(), k);
  ASSERT_EQ(r.cv.fold_accuracy.size(), k);
  const auto rows = fold_rows(folds, k);
  for (std::uint32_t f = 0; f < k; ++f) {
    const Dataset train = data.subset(rows[f].train);
    EXPECT_EQ(r.choices[f].config, choose_auto_config(train, HyperParams{}, o).config);
    FlyNN model(r.choices[f].config, data.classes, 1);
    model.fit(train);
    const auto p = model.predict(data.subset(rows[f].test));
    std::size_t right = 0;
    for (std::size_t i = 0; i < p.size(); ++i) right += p[i] == data.labels[rows[f].test[i]];
    EXPECT_DOUBLE_EQ(r.cv.fold_accuracy[f], static_cast<double>(right) / static_cast<double>(p.size())) << f;
  }
  // With the default kept everywhere, nested CV is plain CV of the default.
  o.min_margin = 1.0;
  const AutoCvResult kept = cross_validate_auto(data, HyperParams{}, folds, k, o);
  EXPECT_EQ(kept.cv.fold_accuracy,
            cross_validate_flynn(data, HyperParams{}.resolve(5, 3), folds, k, 1).fold_accuracy);
}

TEST(AutoMargin, HalfAStandardErrorOfTheRowsReadAtLeastTheFloor) {
  const AutoOptions o;
  EXPECT_DOUBLE_EQ(auto_margin(o, 100), 0.5 * 0.05);          // 0.5·√(0.25/100)
  EXPECT_DOUBLE_EQ(auto_margin(o, 2500), 0.005);              // 0.5·0.01 = the floor
  EXPECT_DOUBLE_EQ(auto_margin(o, 1000000), 0.005);
  EXPECT_GT(auto_margin(o, 150), auto_margin(o, 1500));
}

TEST(AutoMetric, BalancedAccuracyWhenClassesAreWeighted) {
  HyperParams h;
  EXPECT_EQ(auto_metric(h), CvMetric::Accuracy);
  h.class_weight = ClassWeight::parse("none");
  EXPECT_EQ(auto_metric(h), CvMetric::Accuracy);
  h.class_weight = ClassWeight::parse("balanced");
  EXPECT_EQ(auto_metric(h), CvMetric::BalancedAccuracy);
  h.class_weight = ClassWeight::parse("c1=3");
  EXPECT_EQ(auto_metric(h), CvMetric::BalancedAccuracy);
  // The choice reports the metric it judged by, and its scores are that metric.
  const Dataset data = test::blobs(3, 30, 5, 7, 1.5);
  AutoOptions o;
  o.threads = 1;
  o.metric = CvMetric::BalancedAccuracy;
  const AutoChoice a = choose_auto_config(data, h, o);
  EXPECT_EQ(a.metric, CvMetric::BalancedAccuracy);
  const std::size_t g_rule = rule_gamma_column(a);
  ASSERT_LT(g_rule, a.gammas.size());
  EXPECT_EQ(a.default_metric, a.cv[0][g_rule].balanced_accuracy);
  EXPECT_EQ(a.config.class_weight, h.class_weight.value());
}

// Every field, also those added after it was written: pairs (--auto's pairs candidate was
// once trained without them), the filter scoring and the paper-half rule.
TEST(HyperParamsOf, ResolvesBackToTheSameConfig) {
  for (const std::uint32_t d : {7u, 24u})
  for (const char* v : {"paper", "zsign-q+paper", "anchor", "thermo-sign"})
  for (const std::uint64_t pairs : {0u, 2u})
  for (const bool absolute : {false, true}) {
    HyperParams h;
    h.variant = parse_variant(v);
    h.gamma = 0.5;
    h.class_weight = ClassWeight::parse("balanced");
    h.pairs = pairs;
    if (absolute) h.filter_scoring = FilterScoring::Absolute;
    const FlyConfig c = h.resolve(d, 3);
    EXPECT_EQ(hyper_params_of(c).resolve(d, 3), c) << v << " d=" << d << " pairs=" << pairs;
    if (c.paper_half_min_columns) {  // given 0, it stays 0
      FlyConfig off = c;
      off.paper_half_min_columns = 0;
      EXPECT_EQ(hyper_params_of(off).resolve(d, 3), off) << v;
    }
  }
}

}  // namespace
}  // namespace flynn::eval
