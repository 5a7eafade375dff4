// The one-row path: each layout of the plan holds every column of every unit exactly once
// with its sign (checked by walking it in scalar code, on any machine); each one-row kernel
// gives the plan's exact sums (the same winners) on every SIMD target that runs it; and the
// hasher's winners, with the one-row path and without it, equal the scalar reference for
// every kind of row, every variant, every batch size up to past a block, one and two
// threads, on every SIMD target.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/one_row_kernel.hpp"
#include "core/one_row_plan.hpp"
#include "flynn/config.hpp"
#include "flynn/detail/simd.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/lifting_matrix.hpp"
#include "flynn/model_footprint.hpp"
#include "flynn/random.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using kernels::OneRowLayout;
using kernels::OneRowPlan;
using kernels::Permute128;
using kernels::Shuffle16;

constexpr OneRowLayout kLayouts[] = {OneRowLayout::Permute128, OneRowLayout::Shuffle16};

const char* name(OneRowLayout layout) {
  return layout == OneRowLayout::Permute128 ? "Permute128" : "Shuffle16";
}

// The slot bytes of step `st` of a plan, [unit][slot] (Permute128: [group][lane][slot]),
// Shuffle16's unpacked from their 4 bits.
std::vector<std::uint8_t> step_slots(const OneRowPlan& p, std::uint32_t st) {
  const std::uint8_t* at = p.slots.data() + std::size_t(st) * p.step_bytes();
  if (p.layout == OneRowLayout::Permute128) return {at, at + p.step_bytes()};
  std::vector<std::uint8_t> out(2 * Shuffle16::kStepBytes);
  for (std::uint32_t j = 0; j < Shuffle16::kStepBytes; ++j) {
    out[j] = at[j] & 0x0F;
    out[Shuffle16::kStepBytes + j] = at[j] >> 4;
  }
  return out;
}

// What slot k (of a unit) of a step reads: its byte in the row buffer, as the kernel takes
// it (−127..127 when `is_signed`; Shuffle16 with signed lifting holds v + 128), with the
// slot's sign.
std::int64_t read_slot(const OneRowPlan& p, const std::vector<std::uint8_t>& buf,
                       std::size_t base, std::uint8_t byte, std::uint32_t k, bool is_signed) {
  const std::size_t at = base + (byte & 0x7F);
  EXPECT_LT(at, buf.size());
  if (p.layout == OneRowLayout::Shuffle16) {
    EXPECT_LT(byte, 16);
    if (p.signed_lifting) {
      const std::int64_t v = std::int64_t(buf[at]) - Shuffle16::kSignedBias;
      return k == 0 ? v : -v;  // first slot positive, second negative
    }
    return is_signed ? static_cast<std::int8_t>(buf[at]) : buf[at];
  }
  const std::int64_t v = is_signed ? static_cast<std::int8_t>(buf[at]) : buf[at];
  return (byte & Permute128::kNegative) ? -v : v;
}

// Every unit's sum as the plan gives it for byte values `x` (w of them, −127..127 when
// `signed_values`, else 0..255): each slot reads its window's byte, negated when the slot
// says so. Checks that every unit is in one batch and the lanes past the last unit read 0.
std::vector<std::int64_t> walk_plan(const OneRowPlan& p, const std::vector<std::int32_t>& x,
                                    bool signed_values) {
  std::vector<std::uint8_t> bytes(p.columns), buf(p.row_bytes(), 0xEE);
  for (std::uint32_t c = 0; c < p.columns; ++c) bytes[c] = static_cast<std::uint8_t>(x[c]);
  p.lay_out_row(bytes.data(), buf.data());
  std::vector<std::int64_t> sums(p.m, 0);
  std::vector<int> seen(p.m, 0);
  const std::uint32_t slots_per_unit = p.slots_per_unit();
  for (std::size_t b = 0; b + 1 < p.batch_steps.size(); ++b) {
    const std::uint32_t* units = p.units.data() + b * OneRowPlan::kBatchUnits;
    for (std::uint32_t st = p.batch_steps[b]; st < p.batch_steps[b + 1]; ++st) {
      const std::size_t base = p.windows[st];
      if (p.layout == OneRowLayout::Permute128) {
        EXPECT_EQ(base % 64, 0u);
      }
      EXPECT_LE(base + (p.layout == OneRowLayout::Permute128 ? 128 : 16), buf.size());
      const std::vector<std::uint8_t> slots = step_slots(p, st);
      for (std::uint32_t l = 0; l < OneRowPlan::kBatchUnits; ++l) {
        for (std::uint32_t k = 0; k < slots_per_unit; ++k) {
          const std::int64_t v = read_slot(p, buf, base, slots[l * slots_per_unit + k], k, signed_values);
          if (units[l] == OneRowPlan::kNoUnit) {
            EXPECT_EQ(v, 0);
          } else {
            sums[units[l]] += v;
          }
        }
      }
    }
    for (std::uint32_t l = 0; l < OneRowPlan::kBatchUnits; ++l)
      if (units[l] != OneRowPlan::kNoUnit) ++seen[units[l]];
  }
  for (std::uint32_t u = 0; u < p.m; ++u) EXPECT_EQ(seen[u], 1) << "unit " << u;
  return sums;
}

struct PlanShape {
  std::uint32_t w, m, s;
};
// One window, several, a row that ends mid-block, m not a multiple of a batch, s = 2, the
// widest rows, a dense matrix.
constexpr PlanShape kPlanShapes[] = {{20, 300, 4},     {126, 1000, 30},
                                     {784, 3000, 82},  {200, 77, 2},
                                     {1000, 2048, 64}, {OneRowPlan::kMaxColumns, 64, 4000},
                                     {OneRowPlan::kMaxColumns, 100, 16}, {3072, 700, 8},
                                     {400, 500, 300}};

// w byte values of a row: −127..127 for signed lifting, else 0..255.
std::vector<std::int32_t> byte_values(std::uint32_t w, bool signed_values, std::uint64_t seed) {
  SeededRng r(seed);
  std::vector<std::int32_t> x(w);
  for (auto& v : x)
    v = signed_values ? static_cast<std::int32_t>(r.uniform_below(255)) - 127
                      : static_cast<std::int32_t>(r.uniform_below(256));
  return x;
}

TEST(OneRowPlan, EveryColumnOnceWithItsSign) {
  for (OneRowLayout layout : kLayouts) {
    for (bool signed_lifting : {false, true}) {
      for (const PlanShape& sh : kPlanShapes) {
        SCOPED_TRACE(testing::Message() << name(layout) << ", w " << sh.w << ", m " << sh.m
                                        << ", s " << sh.s << ", signed " << signed_lifting);
        const LiftingMatrix M(sh.m, sh.s, signed_lifting ? 2 * sh.w : sh.w, 17, 1, signed_lifting);
        const auto plan = kernels::build_one_row_plan(M, signed_lifting, layout);
        ASSERT_TRUE(plan);
        EXPECT_EQ(plan->layout, layout);
        EXPECT_LE(plan->bytes(), kernels::plan_bytes_bound(sh.m, sh.s, sh.w));
        const std::vector<std::int32_t> x = byte_values(sh.w, signed_lifting, sh.w + sh.m);
        const std::vector<std::int64_t> sums = walk_plan(*plan, x, signed_lifting);
        for (std::uint32_t u = 0; u < sh.m; ++u) {
          std::int64_t expected = 0;
          for (std::uint32_t k = 0; k < sh.s; ++k) {
            const std::uint32_t c = M.row(u)[k];
            expected += c >= sh.w ? -x[c - sh.w] : x[c];
          }
          ASSERT_EQ(sums[u], expected) << "unit " << u;
        }
      }
    }
  }
}

TEST(OneRowPlan, NoneForRowsWiderThanL1) {
  const LiftingMatrix M(64, 2, OneRowPlan::kMaxColumns + 1, 3, 1);
  for (OneRowLayout layout : kLayouts)
    EXPECT_EQ(kernels::build_one_row_plan(M, false, layout), nullptr) << name(layout);
}

TEST(OneRowPlan, FootprintCountsIt) {
  FlyConfig c;
  c.input_dim = 784;
  c.m = 108192;
  c.s = 82;
  c.rho = 8;
  c.gamma = 0.8;
  const ModelFootprint f = model_footprint(c, 10, ModelUse::Predict, 1);
  EXPECT_GE(f.one_row_plan, kernels::plan_bytes_bound(c.m, c.s, c.input_dim));
  EXPECT_EQ(model_footprint(c, 10, ModelUse::Inspect, 1).one_row_plan, 0u);
}

// The targets to run on: each Highway target of this machine that the block kernels are
// built for, and all of them at once (0: the one-row kernel's AVX3_DL where there is one).
std::vector<std::int64_t> targets() {
  std::vector<std::int64_t> t = hwy::SupportedAndGeneratedTargets();
  t.push_back(0);
  return t;
}
std::string target_label(std::int64_t t) { return t ? hwy::TargetName(t) : "the best target"; }

// The winners of one row from sums: what a kernel offering exactly these sums must give.
std::vector<std::uint32_t> winners_of(const std::vector<std::int64_t>& sums, std::uint32_t rho,
                                      std::uint32_t offset) {
  kernels::TopK<std::int32_t> topk;
  topk.reset(1, rho, static_cast<std::uint32_t>(sums.size()));
  topk.set_offset(0, offset);
  for (std::uint32_t u = 0; u < sums.size(); ++u) topk.offer(0, static_cast<std::int32_t>(sums[u]), u);
  std::vector<std::uint32_t> w(rho);
  topk.winners(0, w.data());
  return w;
}

// Each layout's kernel, on every target that runs it, on rows of unsigned bytes, signed
// bytes and (for signed lifting) signed bytes with signs, including sums past 16 bits (s =
// 300, 4000): the winners of the plan's exact sums.
TEST(OneRowKernel, EachKernelGivesThePlansSumsOnEveryTargetThatRunsIt) {
  int runs[kernels::kOneRowLayouts] = {};
  for (std::int64_t t : targets()) {
    hwy::SetSupportedTargetsForTest(t);
    const std::optional<OneRowLayout> layout = kernels::one_row_layout();
    if (!layout) continue;
    for (bool signed_lifting : {false, true}) {
      for (const PlanShape& sh : kPlanShapes) {
        const LiftingMatrix M(sh.m, sh.s, signed_lifting ? 2 * sh.w : sh.w, 19, 1, signed_lifting);
        const auto plan = kernels::build_one_row_plan(M, signed_lifting, *layout);
        ASSERT_TRUE(plan);
        for (bool signed_values : {false, true}) {
          if (signed_lifting && !signed_values) continue;  // signed lifting reads −127..127
          SCOPED_TRACE(testing::Message() << target_label(t) << ", " << name(*layout) << ", w "
                                          << sh.w << ", s " << sh.s << ", signed lifting "
                                          << signed_lifting << ", signed values " << signed_values);
          const std::vector<std::int32_t> x = byte_values(sh.w, signed_values, 7 * sh.s + sh.w);
          std::vector<std::uint8_t> bytes(sh.w);
          for (std::uint32_t c = 0; c < sh.w; ++c) bytes[c] = static_cast<std::uint8_t>(x[c]);
          std::vector<std::uint8_t> storage(plan->row_bytes() + 64);
          auto* buf = reinterpret_cast<std::uint8_t*>(
              (reinterpret_cast<std::uintptr_t>(storage.data()) + 63) & ~std::uintptr_t{63});
          plan->lay_out_row(bytes.data(), buf);
          const std::uint32_t rho = std::min<std::uint32_t>(sh.m, 24), offset = sh.m / 3;
          kernels::TopK<std::int32_t> topk;
          topk.reset(1, rho, sh.m);
          topk.set_offset(0, offset);
          kernels::project_one_row(*plan, buf,
                                   signed_values ? kernels::ByteValues::Signed
                                                 : kernels::ByteValues::Unsigned,
                                   topk);
          std::vector<std::uint32_t> w(rho);
          topk.winners(0, w.data());
          EXPECT_EQ(w, winners_of(walk_plan(*plan, x, signed_values), rho, offset));
        }
      }
    }
    ++runs[static_cast<int>(*layout)];
  }
  hwy::SetSupportedTargetsForTest(0);
  // The shuffle kernel runs on every SIMD target this test is built for but SCALAR.
  EXPECT_GE(runs[static_cast<int>(OneRowLayout::Shuffle16)], 1);
}

FlyConfig config(std::uint32_t d, std::uint32_t m, std::uint32_t s, std::uint32_t rho,
                 const std::string& variant = "paper", Preprocess p = Preprocess::Normalize) {
  FlyConfig c;
  c.input_dim = d;
  c.m = m;
  c.s = s;
  c.rho = rho;
  c.gamma = 0.5;
  c.seed = 5489;
  c.preprocess = p;
  c.variant = parse_variant(variant);
  c.validate();
  return c;
}

// n rows of integers in [lo, hi] (zeros with probability `zeros`), or normal floats.
std::vector<float> rows(std::size_t n, std::uint32_t d, std::uint64_t seed, int lo, int hi,
                        double zeros = 0.2) {
  SeededRng r(seed);
  std::vector<float> x(n * d);
  for (auto& v : x)
    v = r.uniform01() < zeros
            ? 0.0f
            : static_cast<float>(
                  lo + static_cast<int>(r.uniform_below(static_cast<std::uint64_t>(hi - lo + 1))));
  return x;
}

// Pixel-like statistics for the standardising variants: z = (x − 100) / 40.
FeatureStats pixel_stats(std::uint32_t d) {
  return FeatureStats{std::vector<float>(d, 100.0f), std::vector<float>(d, 40.0f)};
}

constexpr std::size_t kMaxRows = 40;  // past a full block (32 int16 lanes) and a half one

// For every batch size n = 1..kMaxRows, on one and two threads: the one-row path gives
// the block kernels' winners, and both give the reference's.
void expect_one_row_exact(FlyHasher& h, const std::vector<float>& x, const std::string& what) {
  const std::size_t n_rows = x.size() / h.input_dim();
  ASSERT_GE(n_rows, kMaxRows);
  h.set_one_row_path(false);
  const std::vector<std::uint32_t> block = h.hash(x.data(), kMaxRows, 1);
  std::vector<std::uint32_t> ref(h.rho());
  for (std::size_t r = 0; r < kMaxRows; ++r) {
    h.hash_row_reference(x.data() + r * h.input_dim(), ref.data());
    ASSERT_TRUE(std::equal(ref.begin(), ref.end(), block.begin() + r * h.rho()))
        << what << ": block kernels differ from the reference at row " << r;
  }
  h.set_one_row_path(true);
  for (int threads : {1, 2}) {
    for (std::size_t n = 1; n <= kMaxRows; ++n) {
      const std::vector<std::uint32_t> w =
          h.hash(x.data() + (kMaxRows - n) * h.input_dim(), n, threads);
      ASSERT_TRUE(std::equal(w.begin(), w.end(), block.begin() + (kMaxRows - n) * h.rho()))
          << what << ": " << n << " rows, " << threads << " threads (path "
          << h.row_path(x.data()) << ")";
    }
  }
}

struct Case {
  std::string what;
  FlyConfig config;
  std::vector<float> x;
  const char* path;  // the kernel the first row takes (nullptr: not checked)
};

std::vector<Case> cases() {
  std::vector<Case> out;
  // The paper's method: pixels (uint8 path, unsigned bytes), small signed integers (int8,
  // signed bytes), integers past a byte (int16, block kernels), a wide sum of signed bytes
  // (int32 path), floats and sparse rows (their own kernels), tie-heavy rows.
  out.push_back({"pixels", config(100, 1000, 10, 16), rows(kMaxRows, 100, 1, 0, 255), "uint8"});
  out.push_back(
      {"signed bytes", config(150, 1111, 20, 24), rows(kMaxRows, 150, 2, -127, 127), "int8"});
  out.push_back(
      {"past a byte", config(150, 700, 20, 24), rows(kMaxRows, 150, 3, -300, 300), "int16"});
  out.push_back(
      {"int32 sums", config(400, 500, 300, 20), rows(kMaxRows, 400, 4, -127, 127, 0.0), "int32"});
  out.push_back({"floats", config(60, 900, 8, 16), test::normal_rows(kMaxRows, 60, 5), "float"});
  out.push_back(
      {"sparse", config(400, 3000, 100, 24), rows(kMaxRows, 400, 6, 1, 5, 0.985), "sparse-int"});
  out.push_back({"ties", config(64, 3000, 8, 16, "paper", Preprocess::None),
                 rows(kMaxRows, 64, 7, 0, 3, 0.6), "uint8"});
  out.push_back({"few columns per window", config(3000, 1000, 8, 16),
                 rows(kMaxRows, 3000, 14, 0, 255), "uint8"});
  out.push_back({"preprocess none", config(300, 2000, 30, 20, "paper", Preprocess::None),
                 rows(kMaxRows, 300, 8, 0, 255), "uint8"});
  // Variants: the Fashion-MNIST default's halves (zsign-q: signed lifting over quantised
  // z-scores), thermometer codes with signs (0/1 bytes), signed lifting of raw pixels (up
  // to 255: block kernels; up to 127: one-row), the joined paper half.
  out.push_back(
      {"zsign-q", config(200, 2000, 30, 32, "zsign-q"), rows(kMaxRows, 200, 9, 0, 255), "int8"});
  out.push_back({"thermo-sign", config(50, 1500, 20, 16, "thermo-sign"),
                 rows(kMaxRows, 50, 10, 0, 255), nullptr});
  out.push_back({"sign, pixels", config(120, 1000, 20, 16, "sign"), rows(kMaxRows, 120, 11, 0, 255),
                 "int16"});
  out.push_back(
      {"sign, small", config(120, 1000, 20, 16, "sign"), rows(kMaxRows, 120, 12, 0, 127), "int8"});
  out.push_back({"zsign-q+paper", config(200, 4000, 40, 64, "zsign-q+paper"),
                 rows(kMaxRows, 200, 13, 0, 255), nullptr});
  // Every other named variant: standardised floats (z, zsign and their paper half: float
  // rows, the one-row path declines), thermometer bits, anchor closeness units (0..64).
  for (const char* v : {"z", "zsign", "thermo", "zsign+paper", "anchor", "anchor+paper"})
    out.push_back({v, config(60, 1200, 12, 16, v), rows(kMaxRows, 60, 30, 0, 255), nullptr});
  return out;
}

TEST(OneRowKernel, SameWinnersAsBlockKernelsAndReferenceOnEveryTarget) {
  for (Case& c : cases()) {
    FlyHasher h(c.config, 1);
    if (c.config.variant.standardize) h.set_feature_stats(pixel_stats(c.config.input_dim));
    if (c.path) {
      ASSERT_STREQ(h.row_path(c.x.data()), c.path) << c.what;
    }
    // Every one of these matrices has a one-row layout (where the CPU runs a kernel).
    EXPECT_EQ(h.has_one_row_kernel(), kernels::one_row_kernel_available()) << c.what;
    for (std::int64_t t : targets()) {
      hwy::SetSupportedTargetsForTest(t);
      expect_one_row_exact(h, c.x, c.what + " on " + target_label(t));
    }
    hwy::SetSupportedTargetsForTest(0);
  }
}

// Permutes where the CPU has AVX-512 VBMI and VNNI (and the dispatch is not pinned below
// AVX3_DL), shuffles on every other SIMD target, none on SCALAR.
TEST(OneRowKernel, PermutesWithVbmiAndVnniShufflesElsewhere) {
#if HWY_ARCH_X86
  const bool dl = (detail::simd::supported_targets() & HWY_AVX3_DL) != 0 &&
                  __builtin_cpu_supports("avx512vnni");
#else
  const bool dl = false;
#endif
  EXPECT_EQ(kernels::one_row_layout(),
            dl ? OneRowLayout::Permute128 : OneRowLayout::Shuffle16);
  const FlyHasher h(config(784, 108192, 82, 8), 1);
  EXPECT_TRUE(h.has_one_row_kernel());
  for (std::int64_t t : hwy::SupportedAndGeneratedTargets()) {  // all but AVX3_DL
    hwy::SetSupportedTargetsForTest(t);
    EXPECT_EQ(kernels::one_row_layout(),
              t == HWY_SCALAR ? std::nullopt : std::optional(OneRowLayout::Shuffle16))
        << hwy::TargetName(t);
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Threads and a batch's position do not matter with the one-row path either: the tail of
// a batch (block kernels until a small call has built the one-row layout, the one-row
// kernel after) and calls of one row give each row the winners of the block kernels.
TEST(OneRowKernel, TailOfABatchAndThreads) {
  FlyHasher h(config(784, 20000, 64, 32, "zsign-q+paper"), 2);
  h.set_feature_stats(pixel_stats(784));
  const std::vector<float> x = rows(1024 + 5, 784, 21, 0, 255);
  h.set_one_row_path(false);
  const std::vector<std::uint32_t> block = h.hash(x.data(), 1029, 1);
  h.set_one_row_path(true);
  EXPECT_EQ(h.hash(x.data(), 1029, 2), block);  // before any small call
  for (std::size_t r : {std::size_t{0}, std::size_t{500}, std::size_t{1028}}) {
    const std::vector<std::uint32_t> alone = h.hash(x.data() + r * 784, 1, 3);
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), block.begin() + r * h.rho())) << r;
  }
  EXPECT_EQ(h.hash(x.data(), 1029, 2), block);  // the tail through the one-row layout
  EXPECT_EQ(h.hash(x.data(), 1029, 1), block);
}

}  // namespace
}  // namespace flynn
