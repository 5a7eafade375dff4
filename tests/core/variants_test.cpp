// Method variants: exact feature sums, the encoder, signed lifting rows, and the
// FlyNN properties every variant must keep — fast kernels equal the reference, thread-count
// independence, merge/forget exactness, model files (variant recorded, paper files
// unchanged), temperature.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/random.hpp"
#include "flynn/row_encoder.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::blobs;

const char* kVariants[] = {"sign",          "z",           "zsign",  "zsign-q",     "thermo",
                           "thermo-sign",   "zsign-q+paper", "zsign+paper", "anchor", "anchor+paper"};

// Blobs with features on very different scales and offsets: the data the variants are for.
Dataset skewed_blobs(std::uint64_t seed, std::size_t per_class = 30) {
  Dataset data = blobs(3, per_class, 5, seed);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    float* x = data.features.data() + r * data.n_features;
    x[0] = x[0] * 1000.0f + 5000.0f;
    x[1] = x[1] * 0.001f;
    x[3] = x[3] + 40.0f;
  }
  return data;
}

FlyConfig variant_config(const std::string& name, std::uint32_t d, std::uint64_t seed = 7) {
  HyperParams h;
  h.m = 300;
  h.s = std::min<std::uint32_t>(3, d);
  h.rho = 10;
  h.gamma = 0.5;
  h.seed = seed;
  h.variant = parse_variant(name);
  return h.resolve(d, 3);
}

TEST(FeatureSums, PartsAddUpExactlyAndLimbsRoundTrip) {
  const Dataset data = skewed_blobs(3);
  const FeatureSums whole = FeatureSums::of(data, ValueTransform::None);
  // Three uneven parts, added in two different orders, and through summed limbs.
  std::vector<std::size_t> a, b, c;
  for (std::size_t r = 0; r < data.n_rows; ++r) (r % 7 == 0 ? a : r % 3 == 0 ? b : c).push_back(r);
  const FeatureSums sa = FeatureSums::of(data.subset(a), ValueTransform::None), sb = FeatureSums::of(data.subset(b), ValueTransform::None),
                    sc = FeatureSums::of(data.subset(c), ValueTransform::None);
  FeatureSums abc = sa;
  abc += sb;
  abc += sc;
  FeatureSums cba = sc;
  cba += sb;
  cba += sa;
  EXPECT_EQ(abc, whole);
  EXPECT_EQ(cba, whole);
  std::vector<std::uint64_t> limbs = sa.to_limbs();
  for (const FeatureSums* s : {&sb, &sc}) {
    const std::vector<std::uint64_t> more = s->to_limbs();
    for (std::size_t i = 0; i < limbs.size(); ++i) limbs[i] += more[i];
  }
  EXPECT_EQ(FeatureSums::from_limbs(limbs, 5, ValueTransform::None), whole);
  EXPECT_EQ(FeatureSums::from_limbs(limbs, 5, ValueTransform::None).stats(), whole.stats());
  EXPECT_THROW(FeatureSums::from_limbs(limbs, 4, ValueTransform::None), Error);
}

TEST(FeatureSums, StatsMatchDirectComputation) {
  const Dataset data = skewed_blobs(4);
  const FeatureStats st = FeatureSums::of(data, ValueTransform::None).stats();
  for (std::size_t j = 0; j < data.n_features; ++j) {
    double sum = 0, sq = 0;
    for (std::size_t r = 0; r < data.n_rows; ++r) sum += data.features[r * data.n_features + j];
    const double mean = sum / data.n_rows;
    for (std::size_t r = 0; r < data.n_rows; ++r) {
      const double v = data.features[r * data.n_features + j] - mean;
      sq += v * v;
    }
    const double sd = std::sqrt(sq / data.n_rows);
    EXPECT_NEAR(st.mean[j], mean, 1e-5 * std::max(1.0, std::fabs(mean))) << j;
    EXPECT_NEAR(st.scale[j], sd, 1e-4 * sd + 1e-7) << j;
  }
  // Negative values, a constant feature (scale 1) and clamping far outside 2^38.
  const Dataset odd = test::make_dataset({{-3, 2, 1e12f}, {-5, 2, -1e12f}}, {"a", "b"});
  const FeatureStats s2 = FeatureSums::of(odd, ValueTransform::None).stats();
  EXPECT_FLOAT_EQ(s2.mean[0], -4.0f);
  EXPECT_FLOAT_EQ(s2.scale[0], 1.0f);
  EXPECT_FLOAT_EQ(s2.scale[1], 1.0f);  // constant
  EXPECT_FLOAT_EQ(s2.mean[2], 0.0f);
  EXPECT_FLOAT_EQ(s2.scale[2], std::ldexp(1.0f, 38));  // clamped at ±2^38
  EXPECT_THROW(FeatureSums(3, ValueTransform::None).stats(), Error);
}

TEST(Variant, NamesParseAndValidate) {
  for (const char* name : kVariants) EXPECT_EQ(variant_name(parse_variant(name)), name);
  EXPECT_TRUE(parse_variant("paper").is_paper());
  EXPECT_THROW(parse_variant("zscore"), Error);
  Variant v;
  v.thermometer = 4;
  EXPECT_THROW(v.validate(), Error);  // needs standardize
  v.standardize = true;
  EXPECT_NO_THROW(v.validate());
  EXPECT_EQ(variant_name(Variant{true, false, 4, 0}), "standardize+thermometer=4");
  v.quantize = 8;
  EXPECT_THROW(v.validate(), Error);
  Variant a;
  a.anchors = 4;
  EXPECT_THROW(a.validate(), Error);  // needs standardize
  a.standardize = true;
  EXPECT_NO_THROW(a.validate());
  EXPECT_EQ(variant_name(a), "standardize+anchors=4");
  EXPECT_EQ(parse_variant("standardize+anchors=4"), a);
  auto with = [&a](auto change) {
    Variant b = a;
    change(b);
    return b;
  };
  for (const Variant& bad : {with([](Variant& b) { b.signed_lifting = true; }),
                             with([](Variant& b) { b.thermometer = 4; }),
                             with([](Variant& b) { b.quantize = 16; }),
                             with([](Variant& b) { b.anchors = 65; })})
    EXPECT_THROW(bad.validate(), Error) << variant_name(bad);
  HyperParams h;
  h.variant = parse_variant("zsign");
  h.preprocess = Preprocess::Densify;
  EXPECT_THROW(h.resolve(8, 2), Error);
}

TEST(Variant, EncoderStandardisesThermometerAndMirror) {
  FlyConfig c = variant_config("thermo-sign", 2);
  FeatureStats st{{10.0f, 0.0f}, {2.0f, 1.0f}};
  const RowEncoder enc(c, st);
  ASSERT_EQ(enc.width(), 2u * 2 * 8);
  ASSERT_EQ(enc.thresholds().size(), 8u);
  EXPECT_NEAR(enc.thresholds()[0], -1.2206, 1e-3);  // Φ⁻¹(1/9)
  EXPECT_NEAR(enc.thresholds()[7], 1.2206, 1e-3);
  const float x[2] = {11.0f, -100.0f};  // z = 0.5, and −100 clipped at −6
  std::vector<float> out(enc.width());
  enc.encode(x, out.data());
  // z = 0.5 exceeds the thresholds below it: Φ⁻¹(k/9) < 0.5 for k ≤ 6 (Φ⁻¹(6/9) ≈ 0.43).
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out[k], k < 6 ? 1.0f : 0.0f) << k;
  for (int k = 0; k < 8; ++k) EXPECT_EQ(out[8 + k], 0.0f);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[16 + i], out[i] == 0 ? 0.0f : -out[i]);
  const RowEncoder q(variant_config("zsign-q", 2), st);
  q.encode(x, out.data());
  EXPECT_EQ(out[0], 8.0f);    // 0.5 · 16
  EXPECT_EQ(out[1], -96.0f);  // −6 · 16
  EXPECT_EQ(out[2], -8.0f);
  EXPECT_THROW(RowEncoder(variant_config("z", 3), st), Error);  // stats for 2 features
}

// Anchor units: closeness round(4·(16 − min((z − t_k)², 16))) to each of the K grid points,
// integers in [0, 64], so rows take the byte kernel; the activation of a unit is then
// 4·(16·s − squared distance) and its winners are the grid points nearest the row.
TEST(Variant, EncoderAnchorUnitsAreClosenessToTheGrid) {
  FlyConfig c = variant_config("anchor", 2);
  FeatureStats st{{10.0f, 0.0f}, {2.0f, 1.0f}};
  const RowEncoder enc(c, st);
  ASSERT_EQ(enc.width(), 2u * 8);
  ASSERT_EQ(enc.thresholds().size(), 8u);
  const float x[2] = {11.0f, -100.0f};  // z = 0.5, and −100 clipped at −6
  std::vector<float> out(enc.width());
  enc.encode(x, out.data());
  for (int k = 0; k < 8; ++k) {
    const double gap = 0.5 - enc.thresholds()[k];
    EXPECT_EQ(out[k], static_cast<float>(std::nearbyint(4.0 * (16.0 - std::min(gap * gap, 16.0))))) << k;
    EXPECT_GE(out[k], 0.0f);
    EXPECT_LE(out[k], 64.0f);
    EXPECT_EQ(out[8 + k], 0.0f) << k;  // more than 4 standard deviations from every grid point
  }
  // The grid point nearest z = 0.5 is Φ⁻¹(6/9) ≈ 0.43: the largest closeness.
  EXPECT_EQ(std::max_element(out.begin(), out.begin() + 8) - out.begin(), 5);
  FlyHasher hasher(c);
  hasher.set_feature_stats(st);
  EXPECT_STREQ(hasher.row_path(x), "uint8");
}

TEST(Variant, SignedLiftingRowsFromTheSeed) {
  const std::uint32_t w = 20, s = 5, m = 500;
  const LiftingMatrix plain(m, s, w, 99, 1);
  const LiftingMatrix signed_rows(m, s, 2 * w, 99, 3, true);
  EXPECT_EQ(signed_rows.data(), LiftingMatrix(m, s, 2 * w, 99, 1, true).data());
  std::size_t negative = 0;
  for (std::uint32_t j = 0; j < m; ++j) {
    // Same columns as the unsigned matrix, each either kept or moved to its mirror.
    std::vector<std::uint32_t> base;
    for (std::uint32_t k = 0; k < s; ++k) {
      const std::uint32_t c = signed_rows.row(j)[k];
      negative += c >= w;
      base.push_back(c % w);
      if (k) {
        EXPECT_LT(signed_rows.row(j)[k - 1], c);
      }
    }
    std::sort(base.begin(), base.end());
    EXPECT_EQ(base, std::vector<std::uint32_t>(plain.row(j), plain.row(j) + s)) << j;
  }
  EXPECT_GT(negative, m * s * 4 / 10);
  EXPECT_LT(negative, m * s * 6 / 10);
}

class EachVariant : public ::testing::TestWithParam<const char*> {};

TEST_P(EachVariant, FastKernelsEqualReferenceAndThreadsDoNotMatter) {
  const Dataset data = skewed_blobs(11, 40);
  const FlyConfig c = variant_config(GetParam(), 5);
  FlyNN one(c, data.classes, 1), three(c, data.classes, 3);
  one.fit(data);
  three.fit(data);
  EXPECT_EQ(one.counts(), three.counts());
  EXPECT_EQ(io::serialize_model(one), io::serialize_model(three));
  const std::vector<std::uint32_t> fast = one.hasher().hash(data.features.data(), data.n_rows, 2);
  std::vector<std::uint32_t> ref(c.rho);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    one.hasher().hash_row_reference(data.features.data() + r * 5, ref.data());
    ASSERT_EQ(std::vector<std::uint32_t>(fast.begin() + r * c.rho, fast.begin() + (r + 1) * c.rho), ref)
        << GetParam() << " row " << r << " path " << one.hasher().row_path(data.features.data() + r * 5);
  }
}

TEST_P(EachVariant, MergeAndForgetAreExact) {
  const Dataset data = skewed_blobs(12, 40);
  const FlyConfig c = variant_config(GetParam(), 5);
  test::expect_exact_merge_and_forget(c, data);
  std::vector<std::size_t> a, b;
  for (std::size_t r = 0; r < data.n_rows; ++r) (r % 3 == 1 ? b : a).push_back(r);
  const Dataset da = data.subset(a), db = data.subset(b);
  if (c.variant.standardize) {
    // Parts with their own statistics refuse to merge, naming the reason.
    FlyNN qa(c, data.classes, 1), qb(c, data.classes, 1);
    qa.fit(da);
    qb.fit(db);
    try {
      qa.merge(qb);
      FAIL() << "merge of different statistics succeeded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("feature statistics differ"), std::string::npos);
    }
  }
}

TEST_P(EachVariant, ModelFileRecordsVariantAndStatistics) {
  const Dataset data = skewed_blobs(13, 30);
  const FlyConfig c = variant_config(GetParam(), 5);
  FlyNN model(c, data.classes, 2);
  model.fit(data);
  model.clear_temperature();  // the versions below are those of models without a calibration
  const std::string bytes = io::serialize_model(model);
  // Every variant but paper scores relatively by default: format 6.
  ASSERT_EQ(c.filter_scoring, FilterScoring::Relative);
  EXPECT_EQ(bytes[8], 6);
  {
    // With the paper's absolute scores: format version 2 (5 with anchor units), as before.
    FlyConfig a = c;
    a.filter_scoring = FilterScoring::Absolute;
    FlyNN absolute(a, data.classes, 2);
    absolute.fit(data);
    absolute.clear_temperature();
    const std::string absolute_bytes = io::serialize_model(absolute);
    EXPECT_EQ(absolute_bytes[8], c.variant.anchors ? 5 : 2);
    EXPECT_EQ(io::parse_model(absolute_bytes, "mem").config, a);
  }
  io::ModelContents mc = io::parse_model(bytes, "mem");
  EXPECT_EQ(mc.config, c);
  EXPECT_EQ(mc.stats, model.feature_stats());
  FlyNN loaded(mc.config, mc.labels, mc.counts, 1);
  loaded.set_feature_stats(mc.stats);
  EXPECT_EQ(io::serialize_model(loaded), bytes);
  EXPECT_EQ(loaded.predict(data), model.predict(data));
  // Untrained standardising models cannot hash or be saved.
  if (c.variant.standardize) {
    FlyNN fresh(c, data.classes, 1);
    EXPECT_THROW(fresh.predict(data), Error);
    EXPECT_THROW(io::serialize_model(fresh), Error);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, EachVariant, ::testing::ValuesIn(kVariants));

// A paper-half hash is the first half's hash (the encoded row, ⌊m/2⌋ units, ⌊ρ/2⌋ winners)
// followed by the paper method's hash of the raw row with the derived seed, shifted by ⌊m/2⌋.
TEST(Variant, PaperHalfJoinsTheTwoHalvesHashes) {
  const Dataset data = skewed_blobs(21);
  const FlyConfig c = variant_config("zsign-q+paper", 5, 9);
  const std::array<FlyConfig, 2> halves = c.halves();
  EXPECT_EQ(halves[0].m + halves[1].m, c.m);
  EXPECT_EQ(halves[0].rho + halves[1].rho, c.rho);
  EXPECT_EQ(halves[0].variant, parse_variant("zsign-q"));
  EXPECT_TRUE(halves[1].variant.is_paper());
  EXPECT_NE(halves[1].seed, c.seed);
  const FeatureStats stats = FeatureSums::of(data, ValueTransform::None).stats();
  FlyHasher whole(c, 1), first(halves[0], 1);
  const FlyHasher second(halves[1], 1);
  whole.set_feature_stats(stats);
  first.set_feature_stats(stats);
  const std::vector<std::uint32_t> w = whole.hash(data.features.data(), data.n_rows, 2);
  const std::vector<std::uint32_t> a = first.hash(data.features.data(), data.n_rows, 1);
  const std::vector<std::uint32_t> b = second.hash(data.features.data(), data.n_rows, 1);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    for (std::uint32_t k = 0; k < halves[0].rho; ++k)
      ASSERT_EQ(w[r * c.rho + k], a[r * halves[0].rho + k]);
    for (std::uint32_t k = 0; k < halves[1].rho; ++k)
      ASSERT_EQ(w[r * c.rho + halves[0].rho + k], b[r * halves[1].rho + k] + halves[0].m);
  }
  // Each half needs a winner and a loser; s may not exceed the raw row.
  HyperParams h;
  h.variant = parse_variant("zsign-q+paper");
  h.m = 8;
  h.rho = 1;
  EXPECT_THROW(h.resolve(5), Error);
  h.rho = 8;
  EXPECT_THROW(h.resolve(5), Error);
  Variant paper_twice;
  paper_twice.paper_half = true;
  EXPECT_THROW(paper_twice.validate(), Error);
}

TEST(Variant, StandardisationHelpsOnSkewedScales) {
  // Class signal in a small-scale feature, noise in a huge one: the paper's L2-normalised
  // hash sees only the huge feature; standardising recovers the signal.
  SeededRng rng(5);
  std::vector<std::vector<float>> rows;
  std::vector<std::string> labels;
  for (int i = 0; i < 400; ++i) {
    const int y = i % 2;
    rows.push_back({static_cast<float>(1e4 + 1e3 * rng.uniform01()),
                    static_cast<float>(0.01 * y + 0.004 * rng.uniform01()),
                    static_cast<float>(rng.uniform01())});
    labels.push_back(y ? "b" : "a");
  }
  const Dataset data = test::make_dataset(rows, labels);
  std::vector<std::size_t> tr, te;
  for (std::size_t r = 0; r < data.n_rows; ++r) (r % 4 == 0 ? te : tr).push_back(r);
  auto accuracy = [&](const char* variant) {
    HyperParams h;
    h.m = 512;
    h.s = 2;
    h.rho = 16;
    h.variant = parse_variant(variant);
    FlyNN model(h.resolve(3, 2), data.classes, 1);
    model.fit(data.subset(tr));
    const Dataset test = data.subset(te);
    const std::vector<std::uint32_t> pred = model.predict(test);
    std::size_t ok = 0;
    for (std::size_t i = 0; i < pred.size(); ++i) ok += pred[i] == test.labels[i];
    return double(ok) / pred.size();
  };
  const double paper = accuracy("paper"), zsign = accuracy("zsign"), thermo = accuracy("thermo");
  EXPECT_LT(paper, 0.7);
  EXPECT_GT(zsign, 0.9);
  EXPECT_GT(thermo, 0.8);  // 8 threshold units per feature dilute s = 2 draws more
}

TEST(Temperature, StoredWithTheCalibrationAndScalesTheSoftmax) {
  const Dataset data = skewed_blobs(14, 20);
  HyperParams h;
  h.m = 256;
  h.s = 3;
  h.rho = 8;
  h.variant = Variant{};
  FlyNN model(h.resolve(5, 3), data.classes, 1);
  model.set_counts(model.count(data));  // counts alone: no calibration fitted
  const std::string v1 = io::serialize_model(model);
  EXPECT_EQ(v1[8], 1);  // paper without a calibration: version 1, as before
  EXPECT_FALSE(model.has_temperature());
  EXPECT_EQ(model.temperature(), Defaults::temperature);
  EXPECT_EQ(io::parse_model(v1, "mem").calibration, Calibration{});
  const std::vector<double> p1 = model.predict_proba(data);
  model.set_temperature(2.0);
  const std::vector<double> p2 = model.predict_proba(data);
  const std::vector<double> s = model.scores(data);
  // p = (1 − w)·softmax(−score/(ρ·T)) + w·π, w = Defaults::prior_weight, π the Laplace-
  // smoothed class frequencies.
  const std::vector<std::uint64_t>& rows = model.counts().rows_per_class();
  const double n = double(rows[0] + rows[1] + rows[2]), w = Defaults::prior_weight;
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    for (double t : {Defaults::temperature, 2.0}) {
      double total = 0;
      std::vector<double> expect(3);
      for (int l = 0; l < 3; ++l) total += expect[l] = std::exp(-s[r * 3 + l] / (8 * t));
      const std::vector<double>& p = t == 2.0 ? p2 : p1;
      for (int l = 0; l < 3; ++l)
        EXPECT_NEAR(p[r * 3 + l], (1 - w) * expect[l] / total + w * (double(rows[l]) + 1) / (n + 3), 1e-12);
    }
  }
  EXPECT_NE(p1, p2);
  const std::string v10 = io::serialize_model(model);
  EXPECT_EQ(v10[8], 10);
  const io::ModelContents mc = io::parse_model(v10, "mem");
  EXPECT_EQ(mc.calibration.temperature, 2.0);
  EXPECT_EQ(mc.calibration.source, CalibrationSource::Given);
  EXPECT_TRUE(mc.config.variant.is_paper());
  EXPECT_TRUE(io::deserialize_model(v10, "mem", 1).has_temperature());
  model.clear_temperature();
  EXPECT_EQ(io::serialize_model(model), v1);
  // fit() fits one on the rows: stored, and the same on reading.
  model.fit(data);
  EXPECT_EQ(model.calibration().source, CalibrationSource::LeaveOneOut);
  EXPECT_EQ(io::deserialize_model(io::serialize_model(model), "mem", 1).calibration(), model.calibration());
  EXPECT_THROW(model.set_temperature(0.0), Error);
  EXPECT_THROW(model.set_temperature(-1.0), Error);
  EXPECT_THROW(model.set_temperature(std::nan("")), Error);
}

}  // namespace
}  // namespace flynn
