// The SIMD target pin (flynn/detail/simd.hpp): pinning AVX2 makes the block kernels run
// AVX2 and the one-row path take the byte-shuffle kernel, even on an AVX-512 machine, with
// the same winners; a name that is no target of this build, or one this CPU cannot run,
// is an error that changes nothing; the report says which kernels run.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "core/one_row_kernel.hpp"
#include "flynn/config.hpp"
#include "flynn/detail/simd.hpp"
#include "flynn/error.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/simd.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {


// Restores the pin a test found (the environment's, in a pinned test run).
struct KeepPin {
  std::string before = simd::pinned_target();
  ~KeepPin() { simd::pin_target(before); }
};

FlyConfig pixel_config() {
  FlyConfig c;
  c.input_dim = 100;
  c.m = 2000;
  c.s = 12;
  c.rho = 16;
  c.gamma = 0.5;
  c.validate();
  return c;
}

std::vector<float> pixel_rows(std::size_t n, std::uint32_t d) {
  std::vector<float> x = test::normal_rows(n, d, 3);
  for (float& v : x) v = static_cast<float>(static_cast<int>(std::abs(v) * 60.0f) % 256);
  return x;
}

TEST(SimdTarget, PinningAvx2RunsTheAvx2KernelsWithTheSameWinners) {
#if !HWY_ARCH_X86
  GTEST_SKIP() << "AVX2 is an x86 target";
#endif
  if (!(detail::simd::supported_targets() & HWY_AVX2) && simd::pinned_target().empty())
    GTEST_SKIP() << "this CPU has no AVX2";
  const KeepPin keep;
  const FlyHasher h(pixel_config(), 1);
  const std::vector<float> x = pixel_rows(3, 100);
  simd::pin_target("");
  const std::vector<std::uint32_t> best = h.hash(x.data(), 1, 1);
  simd::pin_target("Avx2");  // any case
  EXPECT_EQ(detail::simd::target_name(), "AVX2");
  EXPECT_EQ(simd::pinned_target(), "AVX2");
  EXPECT_EQ(kernels::one_row_layout(), kernels::OneRowLayout::Shuffle16);
  const simd::KernelReport r = simd::kernel_report();
  EXPECT_EQ(r.target, "AVX2");
  EXPECT_EQ(r.block_rows, 16u);  // int16 lanes of a 256-bit vector
  EXPECT_TRUE(r.one_row);
  EXPECT_NE(r.one_row_kernel.find("Shuffle16"), std::string::npos) << r.one_row_kernel;
  const std::string text = simd::kernel_report_text(r);
  EXPECT_NE(text.find("SIMD target: AVX2 (pinned to AVX2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("one-row kernel: in use, byte shuffle"), std::string::npos) << text;
  EXPECT_EQ(h.hash(x.data(), 1, 1), best);
  std::vector<std::uint32_t> ref(h.rho());
  h.hash_row_reference(x.data(), ref.data());
  EXPECT_EQ(ref, best);
}

TEST(SimdTarget, UnknownOrUnrunnableTargetsAreErrorsThatChangeNothing) {
  const KeepPin keep;
  const std::string before = detail::simd::target_name();
  try {
    simd::pin_target("avx9");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown SIMD target 'avx9'"), std::string::npos)
        << e.what();
  }
  // Another architecture's target is no target of this build.
  EXPECT_THROW(simd::pin_target(HWY_ARCH_X86 ? "neon" : "avx2"), Error);
  EXPECT_EQ(detail::simd::target_name(), before);
  EXPECT_EQ(simd::pinned_target(), keep.before);
}

TEST(SimdTarget, ReportNamesTheKernelsInUse) {
  const simd::KernelReport r = simd::kernel_report();
  std::cout << simd::kernel_report_text(r);  // which target this run tests, in its log
  EXPECT_EQ(r.target, detail::simd::target_name());
  EXPECT_EQ(r.one_row, kernels::one_row_kernel_available());
  EXPECT_GE(r.block_rows, 1u);
  EXPECT_NE(r.cpu_targets.find(r.target), std::string::npos) << r.cpu_targets;
  const std::string text = simd::kernel_report_text(r);
  EXPECT_NE(text.find("SIMD target: " + r.target), std::string::npos) << text;
  EXPECT_NE(text.find("block kernels: in use"), std::string::npos) << text;
}

}  // namespace
}  // namespace flynn
