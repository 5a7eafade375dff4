// Hyper-parameters: ratio resolution (as the reference, without its rounding slip) and
// validation messages that name the parameter and its range.
#include <gtest/gtest.h>

#include "flynn/config.hpp"
#include "flynn/error.hpp"

namespace flynn {
namespace {

std::string error_of(const HyperParams& p, std::uint32_t d, std::size_t L = 0) {
  try {
    p.resolve(d, L);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HyperParams, PaperFashionMnistSetting) {
  HyperParams p;
  p.expansion_factor = 138;
  p.connection_sparsity = 0.105;
  p.wta_nnz = 8;
  p.gamma = 0.8;
  const FlyConfig c = p.resolve(784, 10);
  EXPECT_EQ(c.m, 108192u);
  EXPECT_EQ(c.s, 82u);
  EXPECT_EQ(c.rho, 8u);
  EXPECT_EQ(c.gamma, 0.8);
}

TEST(HyperParams, WtaRatioDoesNotLoseOneToRounding) {
  HyperParams p;
  p.expansion_factor = 138;
  p.wta_ratio = 8.0 / 108192.0;  // the reference's int() gives 7 here
  EXPECT_EQ(p.resolve(784).rho, 8u);
}

TEST(HyperParams, ReferenceMinimumsOfTwo) {
  HyperParams p;
  p.m = 100;
  p.connection_sparsity = 0.01;
  p.wta_ratio = 0.001;
  const FlyConfig c = p.resolve(20);
  EXPECT_EQ(c.s, 2u);
  EXPECT_EQ(c.rho, 2u);
}

TEST(HyperParams, DefaultsAreValidForTinyAndWideData) {
  for (std::uint32_t d : {1u, 2u, 5u, 64u, 1000u, 4096u}) {
    const FlyConfig c = HyperParams{}.resolve(d, 10);
    EXPECT_LE(c.s, c.encoded_dim());
    EXPECT_LT(c.rho, c.m);
    EXPECT_GE(c.m, Defaults::min_m);
    EXPECT_LE(c.m, Defaults::max_m);
    EXPECT_LE(c.s, Defaults::max_s);
  }
}

// The documented default rules (docs/design/defaults.md): for d > 16 with relative filter scoring
// (every variant's default but paper's) m = 512·d in [4096, 131072] and
// ρ = max(128, ⌊m/(2d)⌋); otherwise m = 256·d in [4096, 131072] and ρ = max(128, ⌊m/(4d)⌋)
// (64 with the paper's absolute scoring); s = max(2, ⌊0.3·d⌋) ≤ 64, γ = 0.8, variant
// zsign-q+paper; for d ≤ 16 variant anchor with s = max(8, 2d) (at most half the 8·d anchor
// units), m = 256·d in [16384, 131072], ρ = 128 (no m/(4d) term) and γ = 0.5.
TEST(HyperParams, DefaultRulesForMSAndRho) {
  struct Case { std::uint32_t d, m, s, rho; const char* variant; };
  for (const Case& k : {Case{1, 16384, 4, 128, "anchor"}, Case{2, 16384, 8, 128, "anchor"},
                        Case{4, 16384, 8, 128, "anchor"}, Case{5, 16384, 10, 128, "anchor"},
                        Case{8, 16384, 16, 128, "anchor"}, Case{10, 16384, 20, 128, "anchor"},
                        Case{11, 16384, 22, 128, "anchor"}, Case{16, 16384, 32, 128, "anchor"},
                        // d > 16, relative scoring (the wide-units rule): m = 512·d capped,
                        // ρ = max(128, ⌊m/(2d)⌋): 256 up to d = 256, then down to 128
                        Case{17, 8704, 5, 256, "zsign-q+paper"}, Case{40, 20480, 12, 256, "zsign-q+paper"},
                        Case{256, 131072, 64, 256, "zsign-q+paper"}, Case{300, 131072, 64, 218, "zsign-q+paper"},
                        Case{784, 131072, 64, 128, "zsign-q+paper"}}) {
    const FlyConfig c = HyperParams{}.resolve(k.d);
    EXPECT_EQ(c.m, k.m) << k.d;
    EXPECT_EQ(c.s, k.s) << k.d;
    EXPECT_EQ(c.rho, k.rho) << k.d;
    EXPECT_EQ(variant_name(c.variant), k.variant) << k.d;
    EXPECT_EQ(c.filter_scoring, FilterScoring::Relative) << k.d;
    EXPECT_EQ(c.gamma, c.variant.anchors ? Defaults::anchor_gamma : Defaults::gamma) << k.d;
  }
  // A named anchor variant takes the anchor rules at any d; a given γ, m or ρ stays.
  HyperParams named;
  named.variant = parse_variant("anchor");
  FlyConfig a = named.resolve(40);
  EXPECT_EQ(a.m, 16384u);
  EXPECT_EQ(a.rho, 128u);
  EXPECT_EQ(a.gamma, 0.5);
  named.gamma = 0.8;
  named.m = 4096;
  named.rho = 300;
  a = named.resolve(4);
  EXPECT_EQ(a.m, 4096u);
  EXPECT_EQ(a.rho, 300u);
  EXPECT_EQ(a.gamma, 0.8);
  // At d ≤ 16 a named variant without anchor units keeps m = 256·d (at least 4096) and
  // ρ = max(128, ⌊m/(4d)⌋); above, any variant scored relatively takes the d > 16 rule.
  HyperParams zq;
  zq.variant = Defaults::variant();
  FlyConfig z = zq.resolve(16);
  EXPECT_EQ(z.m, 4096u);
  EXPECT_EQ(z.rho, 128u);
  zq.variant = parse_variant("zsign");
  z = zq.resolve(30);
  EXPECT_EQ(z.m, 15360u);
  EXPECT_EQ(z.rho, 256u);
  // The paper's method, and any variant scored absolutely, keep m = 256·d and the floor
  // of 64.
  for (const Case& k : {Case{10, 4096, 3, 102, "paper"}, Case{13, 4096, 3, 78, "paper"},
                        Case{16, 4096, 4, 64, "paper"}, Case{784, 131072, 64, 64, "paper"},
                        Case{784, 131072, 64, 64, "zsign-q+paper"}}) {
    HyperParams h;
    h.variant = parse_variant(k.variant);
    if (!h.variant->is_paper()) h.filter_scoring = FilterScoring::Absolute;
    const FlyConfig c = h.resolve(k.d);
    EXPECT_EQ(c.m, k.m) << k.d;
    EXPECT_EQ(c.rho, k.rho) << k.d << " " << k.variant;
    EXPECT_EQ(c.filter_scoring, FilterScoring::Absolute) << k.d;
  }
}

// The low-dimensional default is the anchor variant; a variant the user names keeps its own
// s rule (anchor variants: max(8, 2d) up to 16 features, max(8, d) above), and densify keeps
// the paper's method.
TEST(HyperParams, LowDimensionalDefaultsOnlyWithoutAGivenVariant) {
  HyperParams p;
  p.variant = Defaults::variant();
  FlyConfig c = p.resolve(4);
  EXPECT_EQ(variant_name(c.variant), "zsign-q+paper");
  EXPECT_EQ(c.rho, 256u);
  EXPECT_EQ(c.s, 2u);
  p = {};
  p.preprocess = Preprocess::Densify;
  c = p.resolve(4);
  EXPECT_EQ(variant_name(c.variant), "paper");
  EXPECT_EQ(c.rho, 256u);
  p = {};
  p.rho = 100;
  c = p.resolve(3);
  EXPECT_EQ(variant_name(c.variant), "anchor");
  EXPECT_EQ(c.rho, 100u);
  EXPECT_EQ(c.s, 8u);
  p = {};
  p.connection_sparsity = 0.5;
  c = p.resolve(6);
  EXPECT_EQ(variant_name(c.variant), "anchor");
  EXPECT_EQ(c.s, 3u);
  p = {};
  p.variant = parse_variant("anchor");
  c = p.resolve(20);
  EXPECT_EQ(c.s, 20u);
  EXPECT_EQ(c.rho, 128u);
  c = p.resolve(12);
  EXPECT_EQ(c.s, 24u);
}

TEST(HyperParams, InvalidValuesNameTheParameter) {
  HyperParams p;
  p.s = 30;
  EXPECT_NE(error_of(p, 20).find("s = 30"), std::string::npos);
  p = {};
  p.m = 100;
  p.rho = 100;
  EXPECT_NE(error_of(p, 20).find("rho = 100"), std::string::npos);
  p = {};
  p.gamma = 1.0;
  EXPECT_NE(error_of(p, 20).find("gamma"), std::string::npos);
  p.gamma = -0.1;
  EXPECT_NE(error_of(p, 20).find("[0, 1)"), std::string::npos);
  p = {};
  p.m = 0;
  EXPECT_NE(error_of(p, 20).find("m = 0"), std::string::npos);
  p = {};
  p.expansion_factor = -2;
  EXPECT_NE(error_of(p, 20).find("expansion_factor"), std::string::npos);
  p = {};
  p.connection_sparsity = 1.5;
  EXPECT_NE(error_of(p, 20).find("connection_sparsity"), std::string::npos);
  p = {};
  p.wta_ratio = 1.0;
  EXPECT_NE(error_of(p, 20).find("wta_ratio"), std::string::npos);
  p = {};
  p.m = 10;
  p.expansion_factor = 2;
  EXPECT_NE(error_of(p, 20).find("not both"), std::string::npos);
  EXPECT_NE(error_of(HyperParams{}, 0).find("d (input dimension)"), std::string::npos);
}

TEST(HyperParams, MemoryGuardRejectsHugeModels) {
  HyperParams p;
  p.m = 2000000000;
  const std::string e = error_of(p, 100, 1000);
  EXPECT_NE(e.find("GiB"), std::string::npos) << e;
  EXPECT_NE(e.find("m = 2000000000"), std::string::npos) << e;
}

TEST(FlyConfig, FirstDifferenceNamesTheField) {
  const FlyConfig a = HyperParams{}.resolve(10);
  FlyConfig b = a;
  EXPECT_EQ(a.first_difference(b), "");
  b.gamma = 0.1;
  EXPECT_EQ(a.first_difference(b), "gamma");
  b = a;
  b.preprocess = Preprocess::Densify;
  EXPECT_EQ(a.first_difference(b), "preprocess");
}

TEST(Preprocess, ParseNames) {
  EXPECT_EQ(parse_preprocess("none"), Preprocess::None);
  EXPECT_EQ(parse_preprocess("l2"), Preprocess::Normalize);
  EXPECT_EQ(parse_preprocess("densify"), Preprocess::Densify);
  EXPECT_THROW(parse_preprocess("zscore"), Error);
}

}  // namespace
}  // namespace flynn
