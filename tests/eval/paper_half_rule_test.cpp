// The paper half's input rule (FlyConfig::paper_half_min_columns, docs/design/defaults.md,
// "The paper half"): the default zsign-q+paper hashes the raw row in its second half only
// when the training statistics spread the raw rows' energy over at least 16 columns. The
// measure, the resolve defaults, the decision in the hasher, the model file (version 8),
// and FlyNN's exactness (merge/forget, threads, fast CV against fold models) where the rule
// switches; federated parity is in tests/federated/parity_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/model_summary.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

// Blobs in d = 20 whose column `loud` is multiplied by `factor`: with a large factor that
// column carries nearly all of every raw row's energy.
Dataset blobs_with_a_loud_column(double factor, std::uint64_t seed = 5, std::size_t per_class = 40) {
  Dataset data = test::blobs(3, per_class, 20, seed, 1.0);
  if (factor == 1.0) return data;
  const std::size_t loud = 7;
  for (std::size_t r = 0; r < data.n_rows; ++r)
    data.row(r)[loud] = static_cast<float>((data.row(r)[loud] + 3.0) * factor);
  return data;
}

FlyConfig default_config(const Dataset& data) {
  return HyperParams{}.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
}

TEST(PaperHalfRule, RawEnergyColumnsCountsTheColumnsThatCarryTheEnergy) {
  FeatureStats even;
  even.mean.assign(10, 0.0f);
  even.scale.assign(10, 2.0f);
  EXPECT_DOUBLE_EQ(raw_energy_columns(even), 10.0);
  FeatureStats one = even;
  one.mean[3] = 1000.0f;  // e_3 = 4 + 10^6, the other nine 4: (36 + e)^2 / (9·16 + e^2)
  const double e = 4.0 + 1e6;
  EXPECT_NEAR(raw_energy_columns(one), (36 + e) * (36 + e) / (144 + e * e), 1e-9);
  EXPECT_LT(raw_energy_columns(one), 1.001);
  FeatureStats two = even;  // two equal loud columns: two columns' worth
  two.scale[0] = two.scale[1] = 1e4f;
  EXPECT_NEAR(raw_energy_columns(two), 2.0, 1e-3);
  EXPECT_EQ(raw_energy_columns(FeatureStats{}), 0.0);
}

TEST(PaperHalfRule, TheDefaultVariantAboveSixteenFeaturesTakesIt) {
  EXPECT_EQ(HyperParams{}.resolve(17, 2).paper_half_min_columns, Defaults::paper_half_min_columns);
  EXPECT_EQ(HyperParams{}.resolve(784, 10).paper_half_min_columns, Defaults::paper_half_min_columns);
  EXPECT_EQ(HyperParams{}.resolve(16, 2).paper_half_min_columns, 0u);  // anchors
  HyperParams named;
  named.variant = parse_variant("zsign-q+paper");  // the default's name: the same rule
  EXPECT_EQ(named.resolve(40, 2).paper_half_min_columns, Defaults::paper_half_min_columns);
  named.variant = parse_variant("zsign+paper");  // another variant: the raw half, as before
  EXPECT_EQ(named.resolve(40, 2).paper_half_min_columns, 0u);
  named.paper_half_min_columns = 8;  // given: any paper-half variant that standardises
  EXPECT_EQ(named.resolve(40, 2).paper_half_min_columns, 8u);
  HyperParams off;
  off.paper_half_min_columns = 0;
  EXPECT_EQ(off.resolve(40, 2).paper_half_min_columns, 0u);
  HyperParams wrong;
  wrong.variant = parse_variant("zsign-q");
  wrong.paper_half_min_columns = 4;
  try {
    wrong.resolve(40, 2);
    FAIL() << "a variant without a paper half took paper_half_min_columns";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("paper_half_min_columns = 4: needs a paper-half variant"),
              std::string::npos) << e.what();
  }
  HyperParams huge;
  huge.paper_half_min_columns = Defaults::max_paper_half_min_columns + 1ull;
  EXPECT_THROW(huge.resolve(40, 2), Error);
}

TEST(PaperHalfRule, TheHasherDecidesFromTheStatistics) {
  const Dataset even = blobs_with_a_loud_column(1.0), loud = blobs_with_a_loud_column(1e4);
  const FlyConfig c = default_config(even);
  ASSERT_EQ(c.paper_half_min_columns, 16u);
  ASSERT_GE(raw_energy_columns(FeatureSums::of(even, ValueTransform::None).stats()), 16.0);
  ASSERT_LT(raw_energy_columns(FeatureSums::of(loud, ValueTransform::None).stats()), 2.0);

  FlyNN spread(c, even.classes, 1);
  spread.fit(even);
  EXPECT_TRUE(spread.hasher().second_half_hashes_raw_row());
  FlyNN concentrated(c, loud.classes, 1);
  EXPECT_TRUE(concentrated.hasher().second_half_hashes_raw_row());  // until statistics are set
  concentrated.fit(loud);
  EXPECT_FALSE(concentrated.hasher().second_half_hashes_raw_row());
  // The second half is then the first half's variant on the second half's seed: its
  // winners are those of a hasher built from that half's config with the same statistics.
  const FlyConfig second = c.halves(false)[1];
  EXPECT_EQ(second.variant, c.variant.first_half());
  EXPECT_EQ(second.seed, c.paper_half_seed());
  FlyHasher alone(second, 1);
  alone.set_feature_stats(concentrated.feature_stats());
  const auto& h = concentrated.hasher();
  std::vector<std::uint32_t> joined(c.rho), own(second.rho);
  for (std::size_t r = 0; r < 5; ++r) {
    h.hash_row_reference(loud.row(r), joined.data());
    alone.hash_row_reference(loud.row(r), own.data());
    for (std::uint32_t k = 0; k < second.rho; ++k)
      EXPECT_EQ(joined[c.rho / 2 + k], own[k] + c.m / 2) << "row " << r << " winner " << k;
  }
  // Off: the raw half whatever the statistics.
  FlyConfig off = c;
  off.paper_half_min_columns = 0;
  FlyNN raw(off, loud.classes, 1);
  raw.fit(loud);
  EXPECT_TRUE(raw.hasher().second_half_hashes_raw_row());
  EXPECT_NE(raw.counts(), concentrated.counts());
  // Statistics set again (a model given the whole's before partial_fit) decide again.
  FlyNN again(c, loud.classes, 1);
  again.set_feature_stats(FeatureSums::of(even, ValueTransform::None).stats());
  EXPECT_TRUE(again.hasher().second_half_hashes_raw_row());
  again.set_feature_stats(FeatureSums::of(loud, ValueTransform::None).stats());
  EXPECT_FALSE(again.hasher().second_half_hashes_raw_row());
  again.partial_fit(loud);
  EXPECT_EQ(again.counts(), concentrated.counts());
}

TEST(PaperHalfRule, ModelFileVersion8KeepsTheRuleAndOlderFilesKeepTheRawHalf) {
  const Dataset loud = blobs_with_a_loud_column(1e4);
  const FlyConfig c = default_config(loud);
  FlyNN model(c, loud.classes, 1);
  model.fit(loud);
  model.clear_temperature();  // the versions below are those of models without a calibration
  const std::string bytes = io::serialize_model(model);
  const io::ModelContents mc = io::parse_model(bytes, "rule");
  EXPECT_EQ(mc.format_version, io::kPaperHalfRuleModelFormatVersion);
  EXPECT_EQ(mc.config, c);
  FlyNN loaded = io::deserialize_model(bytes, "rule", 1);
  EXPECT_FALSE(loaded.hasher().second_half_hashes_raw_row());
  EXPECT_EQ(loaded.predict(loud), model.predict(loud));
  EXPECT_EQ(io::serialize_model(loaded), bytes);
  // Without the rule the file is version 6, as before it existed, and loads with the raw half.
  FlyConfig off = c;
  off.paper_half_min_columns = 0;
  FlyNN old(off, loud.classes, 1);
  old.fit(loud);
  old.clear_temperature();
  const std::string old_bytes = io::serialize_model(old);
  EXPECT_EQ(io::parse_model(old_bytes, "old").format_version, io::kRelativeModelFormatVersion);
  FlyNN old_loaded = io::deserialize_model(old_bytes, "old", 1);
  EXPECT_TRUE(old_loaded.hasher().second_half_hashes_raw_row());
  EXPECT_EQ(old_loaded.predict(loud), old.predict(loud));
  // With pairs too (version 8 carries both; pairs may be 0 there, as above).
  FlyConfig pairs = c;
  pairs.pairs = 2;
  FlyNN with_pairs(pairs, loud.classes, 1);
  with_pairs.fit(loud);
  with_pairs.clear_temperature();
  const io::ModelContents both = io::parse_model(io::serialize_model(with_pairs), "pairs");
  EXPECT_EQ(both.format_version, io::kPaperHalfRuleModelFormatVersion);
  EXPECT_EQ(both.config, pairs);
  // With a value transform (version 9) the rule reads the transformed columns' statistics,
  // and a loaded model decides as the trained one did.
  FlyConfig compressed = c;
  compressed.value_transform = ValueTransform::Log1p;
  FlyNN log_model(compressed, loud.classes, 1);
  log_model.fit(loud);
  const std::string log_bytes = io::serialize_model(log_model);
  EXPECT_EQ(io::parse_model(log_bytes, "log").format_version, io::kModelFormatVersion);
  EXPECT_EQ(log_model.hasher().second_half_hashes_raw_row(),
            paper_half_hashes_raw_row(compressed, log_model.feature_stats()));
  FlyNN log_loaded = io::deserialize_model(log_bytes, "log", 1);
  EXPECT_EQ(log_loaded.hasher().second_half_hashes_raw_row(), log_model.hasher().second_half_hashes_raw_row());
  EXPECT_EQ(log_loaded.predict(loud), log_model.predict(loud));
  EXPECT_EQ(io::serialize_model(log_loaded), log_bytes);
}

TEST(PaperHalfRule, ExactnessWhereTheRuleSwitches) {
  const Dataset loud = blobs_with_a_loud_column(1e4, 9);
  const FlyConfig c = default_config(loud);
  test::expect_exact_merge_and_forget(c, loud);
  FlyNN one(c, loud.classes, 1), three(c, loud.classes, 3);
  one.fit(loud);
  three.fit(loud);
  EXPECT_EQ(one.counts(), three.counts());
  EXPECT_FALSE(one.hasher().second_half_hashes_raw_row());
  // One row at a time hashes as the batch does.
  const auto all = one.predict(loud);
  for (std::size_t r = 0; r < loud.n_rows; r += 7)
    EXPECT_EQ(one.predict(loud.subset({r}))[0], all[r]) << "row " << r;
}

TEST(PaperHalfRule, FastCvEqualsFoldModelsWhenFoldsDecideApart) {
  // A column loud in fold 0's rows only: fold 0's model (trained without them) keeps the
  // raw half, the other folds' models standardise it; each fold's decision is its own
  // training rows' (as a fold model's).
  Dataset data = blobs_with_a_loud_column(1.0, 13, 30);
  const std::uint32_t k = 4;
  const auto folds = eval::stratified_folds(data.labels, 3, k, 3);
  for (std::size_t r = 0; r < data.n_rows; ++r)
    if (folds[r] == 0) data.row(r)[7] = (data.row(r)[7] + 3.0f) * 3000.0f;
  const eval::FlyCvEvaluator ev(data, folds, k);
  FlyConfig c = default_config(data);
  c.gamma = 0.5;
  int raw_folds = 0;
  std::vector<double> direct(data.n_rows * 3);
  for (std::uint32_t f = 0; f < k; ++f) {
    std::vector<std::size_t> train, test;
    for (std::size_t r = 0; r < data.n_rows; ++r) (folds[r] == f ? test : train).push_back(r);
    FlyNN model(c, data.classes, 1);
    model.fit(data.subset(train));
    raw_folds += model.hasher().second_half_hashes_raw_row();
    const auto s = model.scores(data.subset(test));
    for (std::size_t i = 0; i < test.size(); ++i)
      for (std::size_t l = 0; l < 3; ++l) direct[test[i] * 3 + l] = s[i * 3 + l];
  }
  EXPECT_EQ(ev.out_of_fold_scores(c, 2), direct);
  // And the accuracy the search reads is that of those fold models' predictions.
  std::vector<std::uint32_t> predicted(data.n_rows);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    const double* s = direct.data() + r * 3;
    predicted[r] = static_cast<std::uint32_t>(std::min_element(s, s + 3) - s);
  }
  const auto ours = ev.evaluate(c, {c.gamma}, 2);
  EXPECT_EQ(ours[0].fold_accuracy,
            eval::summarize_predictions(data.labels, predicted, folds, k, 3, 0.0).fold_accuracy);
  // The folds did decide apart (else this test would not test the per-fold decision).
  EXPECT_EQ(raw_folds, 1);
}

TEST(PaperHalfRule, InfoSaysWhatTheSecondHalfHashes) {
  const Dataset loud = blobs_with_a_loud_column(1e4);
  FlyNN model(default_config(loud), loud.classes, 1);
  model.fit(loud);
  test::TempDir dir;
  const std::string path = dir.file("m.flynn");
  io::save_model(model, path);
  const auto s = eval::model_file_summary(path, io::kDefaultMaxInputBytes, {0, ModelUse::Inspect});
  ASSERT_TRUE(s.json.contains("paper_half"));
  EXPECT_EQ(s.json["paper_half"]["hashes"], "standardised row");
  EXPECT_EQ(s.json["paper_half"]["min_columns"], 16u);
  EXPECT_LT(s.json["paper_half"]["raw_energy_columns"].get<double>(), 2.0);
  EXPECT_NE(s.text.find("paper half: hashes the row as the first half does"), std::string::npos) << s.text;
  // The same report for a spread table (what `flynn train` prints), and none without the rule.
  const Dataset even = blobs_with_a_loud_column(1.0);
  FlyNN spread(default_config(even), even.classes, 1);
  spread.fit(even);
  const eval::Report r = eval::paper_half_report(spread.config(), spread.feature_stats());
  EXPECT_EQ(r.json["hashes"], "raw row");
  EXPECT_EQ(r.text.rfind("paper half: hashes the raw row (the raw rows' energy spreads over ", 0), 0u) << r.text;
  FlyConfig off = spread.config();
  off.paper_half_min_columns = 0;
  EXPECT_TRUE(eval::paper_half_report(off, spread.feature_stats()).json.is_null());
  EXPECT_EQ(eval::paper_half_report(spread.config(), FeatureStats{}).text, "");
}

}  // namespace
}  // namespace flynn
