// The value transform (value_transform.hpp, FlyConfig::value_transform): the deterministic
// log1p against libm, the transforms' shape, the setting's rules, and that a model with a
// transform is the model of the transformed rows: same statistics, same counts, byte rows
// alike, exact merge/forget, a file that says so.
#include <gtest/gtest.h>

#include <zlib.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/random.hpp"
#include "flynn/value_transform.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

// Units in the last place between a and b (both finite, same sign).
double ulps(double a, double b) {
  if (a == b) return 0.0;
  return std::fabs(a - b) / (std::nextafter(std::fabs(b), std::numeric_limits<double>::infinity()) - std::fabs(b));
}

TEST(ValueTransform, DeterministicLog1pIsWithinTwoUlpOfLibm) {
  SeededRng rng(5);
  double worst = 0.0;
  std::vector<double> values = {0.0, 1e-300, 1e-20, 1e-9, 0.5, 0.70710678118654752, 1.0, 1.4142135623730951,
                                2.0, 3.0, 255.0, 65535.0, 1e10, 1e30, 1e300, std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::denorm_min()};
  for (int i = 0; i <= 255; ++i) values.push_back(i);  // pixels
  for (int i = 0; i < 20000; ++i) values.push_back(std::ldexp(rng.uniform01(), static_cast<int>(rng.uniform_below(200)) - 100));
  for (const double a : values) {
    const double ours = deterministic_log1p(a), libm = std::log1p(a);
    ASSERT_TRUE(std::isfinite(ours)) << a;
    worst = std::max(worst, ulps(ours, libm));
    ASSERT_LE(ulps(ours, libm), 2.0) << a << ": " << ours << " vs " << libm;
  }
  RecordProperty("worst_ulps", std::to_string(worst));
  EXPECT_EQ(deterministic_log1p(0.0), 0.0);
  EXPECT_EQ(deterministic_log1p(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(deterministic_log1p(std::numeric_limits<double>::quiet_NaN())));
}

TEST(ValueTransform, OddIncreasingAndExactWhereItCanBe) {
  for (const ValueTransform t : {ValueTransform::None, ValueTransform::Sqrt, ValueTransform::Log1p}) {
    SCOPED_TRACE(value_transform_name(t));
    float previous = -std::numeric_limits<float>::infinity();
    for (int i = -3000; i <= 3000; ++i) {
      const float v = std::ldexp(static_cast<float>(i), -4) * std::fabs(static_cast<float>(i)) / 16.0f;
      const float tv = transform_value(t, v);
      EXPECT_EQ(transform_value(t, -v), -tv) << v;  // odd
      EXPECT_GE(tv, previous) << v;                  // non-decreasing
      EXPECT_EQ(std::signbit(tv), std::signbit(v)) << v;
      previous = tv;
    }
    EXPECT_TRUE(std::isnan(transform_value(t, std::numeric_limits<float>::quiet_NaN())));
  }
  EXPECT_EQ(transform_value(ValueTransform::None, 255.0f), 255.0f);
  EXPECT_EQ(transform_value(ValueTransform::Sqrt, 256.0f), 16.0f);
  EXPECT_EQ(transform_value(ValueTransform::Sqrt, -2.25f), -1.5f);
  EXPECT_EQ(transform_value(ValueTransform::Log1p, 255.0f), static_cast<float>(std::log(256.0)));
  EXPECT_EQ(transform_value(ValueTransform::Log1p, 0.0f), 0.0f);
  // Small non-negative integers are looked up: the same floats as the definition, on both
  // sides of the table's end.
  for (int i = 0; i <= 300; ++i) {
    const float v = static_cast<float>(i);
    EXPECT_EQ(transform_value(ValueTransform::Sqrt, v), static_cast<float>(std::sqrt(double(i)))) << i;
    EXPECT_EQ(transform_value(ValueTransform::Log1p, v), static_cast<float>(deterministic_log1p(double(i)))) << i;
    EXPECT_EQ(transform_value(ValueTransform::Log1p, -v), -static_cast<float>(deterministic_log1p(double(i)))) << i;
  }
  EXPECT_TRUE(std::signbit(transform_value(ValueTransform::Sqrt, -0.0f)));
}

TEST(ValueTransform, NamesParseBackAndUnknownNamesAreRefused) {
  for (const ValueTransform t : {ValueTransform::None, ValueTransform::Sqrt, ValueTransform::Log1p})
    EXPECT_EQ(parse_value_transform(value_transform_name(t)), t);
  try {
    parse_value_transform("log");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("none, sqrt, log1p"), std::string::npos) << e.what();
  }
}

TEST(ValueTransform, OnlyStandardisingVariantsTakeIt) {
  HyperParams h;
  h.value_transform = ValueTransform::Log1p;
  h.variant = parse_variant("paper");
  try {
    h.resolve(20);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("value_transform = log1p"), std::string::npos) << e.what();
  }
  h.variant = parse_variant("sign");
  EXPECT_THROW(h.resolve(20), Error);
  h.variant.reset();  // the defaults standardise: zsign-q+paper above 16 features, anchor below
  EXPECT_EQ(h.resolve(20).value_transform, ValueTransform::Log1p);
  EXPECT_EQ(h.resolve(6).value_transform, ValueTransform::Log1p);
  EXPECT_EQ(HyperParams{}.resolve(20).value_transform, ValueTransform::None);
  // A paper half hashes the raw row: its half drops the transform, unless it hashes the row
  // as the first half does.
  const FlyConfig c = h.resolve(20);
  EXPECT_EQ(c.halves(true)[0].value_transform, ValueTransform::Log1p);
  EXPECT_EQ(c.halves(true)[1].value_transform, ValueTransform::None);
  EXPECT_EQ(c.halves(false)[1].value_transform, ValueTransform::Log1p);
}

// Skewed non-negative rows (pixel-like counts) with classes in where the mass lies.
Dataset skewed_counts(std::uint64_t seed, std::size_t per_class = 40, std::uint32_t d = 12) {
  SeededRng rng(seed);
  std::vector<std::vector<float>> rows;
  std::vector<std::string> labels;
  for (int c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < per_class; ++i) {
      std::vector<float> row(d);
      for (std::uint32_t j = 0; j < d; ++j) {
        const double scale = (j % 3 == static_cast<std::uint32_t>(c)) ? 60.0 : 6.0;
        row[j] = static_cast<float>(std::floor(scale * rng.uniform01() * rng.uniform01() * 4.0));
      }
      rows.push_back(row);
      labels.push_back(std::array<const char*, 3>{"k0", "k1", "k2"}[c]);
    }
  return test::make_dataset(rows, labels);
}

// A small configuration of `variant` with transform `t` for the skewed rows above.
HyperParams small(const char* variant, ValueTransform t, std::uint64_t m, std::uint64_t rho, std::uint64_t seed) {
  HyperParams h;
  h.m = m;
  h.rho = rho;
  h.seed = seed;
  h.variant = parse_variant(variant);
  h.value_transform = t;
  return h;
}

Dataset transformed(Dataset data, ValueTransform t) {
  for (float& v : data.features) v = transform_value(t, v);
  return data;
}

TEST(ValueTransform, StatisticsAreThoseOfTheTransformedRows) {
  const Dataset data = skewed_counts(3);
  for (const ValueTransform t : {ValueTransform::Sqrt, ValueTransform::Log1p}) {
    const FeatureSums direct = FeatureSums::of(data, t);
    EXPECT_EQ(direct.stats(), FeatureSums::of(transformed(data, t), ValueTransform::None).stats());
    EXPECT_NE(direct.stats(), FeatureSums::of(data, ValueTransform::None).stats());
    // Parts add up exactly, through limbs too; parts under another transform do not add.
    FeatureSums a = FeatureSums::of(data.subset({0, 1, 2, 50, 90}), t);
    a += FeatureSums::of(data.subset({3, 4}), t);
    EXPECT_EQ(FeatureSums::from_limbs(a.to_limbs(), 12, t), a);
    EXPECT_THROW(a += FeatureSums::of(data, ValueTransform::None), Error);
  }
}

TEST(ValueTransform, AModelWithATransformIsTheModelOfTheTransformedRows) {
  const Dataset data = skewed_counts(4);
  // Without a paper half every part of the model reads the transformed values, so its
  // counts equal those of a model without a transform trained on transformed rows.
  for (const char* variant : {"zsign-q", "zsign", "anchor", "thermo"}) {
    HyperParams h = small(variant, ValueTransform::Log1p, 512, 16, 9);
    FlyNN with(h.resolve(12, 3), data.classes, 2);
    with.fit(data);
    h.value_transform = ValueTransform::None;
    FlyNN plain(h.resolve(12, 3), data.classes, 2);
    plain.fit(transformed(data, ValueTransform::Log1p));
    EXPECT_EQ(with.feature_stats(), plain.feature_stats()) << variant;
    EXPECT_EQ(with.counts().values(), plain.counts().values()) << variant;
    EXPECT_EQ(with.predict(data), plain.predict(transformed(data, ValueTransform::Log1p))) << variant;
  }
}

TEST(ValueTransform, ByteRowsHashAsFloatRowsAndThreadsDoNotMatter) {
  const Dataset data = skewed_counts(5);
  std::vector<std::uint8_t> bytes(data.features.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(data.features[i]);
  HyperParams h;
  h.seed = 2;
  h.value_transform = ValueTransform::Log1p;
  h.variant = parse_variant("zsign-q+paper");
  const FlyConfig c = h.resolve(12, 3);
  FlyNN one(c, data.classes, 1), three(c, data.classes, 3);
  one.fit(data);
  three.fit(DataView(std::span<const std::uint8_t>(bytes), 12), data.labels);
  EXPECT_EQ(io::serialize_model(one), io::serialize_model(three));
}

TEST(ValueTransform, MergeAndForgetStayExact) {
  const Dataset data = skewed_counts(6, 30);
  for (const char* variant : {"zsign-q", "zsign-q+paper", "anchor+paper"}) {
    SCOPED_TRACE(variant);
    test::expect_exact_merge_and_forget(small(variant, ValueTransform::Sqrt, 600, 20, 4).resolve(12, 3), data);
  }
}

TEST(ValueTransform, TheModelFileCarriesItAsVersion9) {
  const Dataset data = skewed_counts(7);
  HyperParams h;
  h.seed = 3;
  h.value_transform = ValueTransform::Log1p;
  FlyNN model(h.resolve(12, 3), data.classes, 2);
  model.fit(data);
  model.clear_temperature();  // without a calibration (version 10)
  const std::string bytes = io::serialize_model(model);
  const io::ModelContents mc = io::parse_model(bytes, "m");
  EXPECT_EQ(mc.format_version, io::kValueTransformModelFormatVersion);
  EXPECT_EQ(mc.format_version, 9u);
  EXPECT_EQ(mc.config, model.config());
  EXPECT_EQ(io::serialize_model(io::deserialize_model(bytes, "m", 1)), bytes);
  // Without a transform the file is what it was: version 6 for this default (anchor units,
  // relative scoring), 8 for the default above 16 features.
  h.value_transform.reset();
  FlyNN plain(h.resolve(12, 3), data.classes, 2);
  plain.fit(data);
  plain.clear_temperature();
  EXPECT_EQ(io::parse_model(io::serialize_model(plain), "p").format_version, io::kRelativeModelFormatVersion);
  const Dataset wide_data = skewed_counts(7, 20, 20);
  FlyNN wide(h.resolve(20, 3), wide_data.classes, 1);
  wide.fit(wide_data);
  wide.clear_temperature();
  EXPECT_EQ(io::parse_model(io::serialize_model(wide), "w").format_version, io::kPaperHalfRuleModelFormatVersion);
}

// The transform's byte in a format-9 file: 1 or 2, anything else is refused by name (with a
// valid checksum, so the parser reaches the field).
TEST(ValueTransform, AModelFileWithAnUnknownTransformIsRefused) {
  const auto bytes_of = [](ValueTransform t) {
    HyperParams h;
    h.seed = 3;
    h.value_transform = t;
    FlyNN model(h.resolve(20, 2), LabelSet({"a", "b"}), 1);
    FeatureStats stats;
    stats.mean.assign(20, 1.0f);
    stats.scale.assign(20, 2.0f);
    model.set_feature_stats(stats);  // no rows: the two files differ in the transform alone
    return io::serialize_model(model);
  };
  const std::string sqrt_file = bytes_of(ValueTransform::Sqrt), log_file = bytes_of(ValueTransform::Log1p);
  ASSERT_EQ(sqrt_file.size(), log_file.size());
  std::size_t at = 0, differing = 0;
  for (std::size_t i = 0; i + 4 < sqrt_file.size(); ++i)
    if (sqrt_file[i] != log_file[i]) at = i, ++differing;
  ASSERT_EQ(differing, 1u);
  EXPECT_EQ(io::parse_model(log_file, "f").config.value_transform, ValueTransform::Log1p);
  for (const char code : {0, 3, 255}) {
    std::string bad = log_file;
    bad[at] = code;
    const auto crc = static_cast<std::uint32_t>(
        crc32(0L, reinterpret_cast<const Bytef*>(bad.data()), static_cast<uInt>(bad.size() - 4)));
    std::memcpy(bad.data() + bad.size() - 4, &crc, 4);  // little-endian hosts
    try {
      io::parse_model(bad, "bad.flynn");
      FAIL() << int(code);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("value transform"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.flynn"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace flynn
