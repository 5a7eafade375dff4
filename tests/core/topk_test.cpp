// The kernels' per-row top-ρ (core/topk.hpp) against a full sort of everything offered:
// integer rows compact by the ρ-th largest value and fall back to the exact (value, key)
// compaction when ties at that value would leave too little room; floats always compact
// exactly. Winners must be the top ρ under (larger value, smaller rotated key) whatever
// the order of the offers, the number of ties or the rotation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "core/topk.hpp"
#include "flynn/random.hpp"

namespace flynn {
namespace {

template <typename T>
std::vector<std::uint32_t> brute_force(const std::vector<T>& values, std::uint32_t rho,
                                       std::uint32_t offset) {
  const auto m = static_cast<std::uint32_t>(values.size());
  std::vector<std::uint32_t> units(m);
  std::iota(units.begin(), units.end(), 0u);
  auto key = [&](std::uint32_t u) { return u >= offset ? u - offset : u + m - offset; };
  std::sort(units.begin(), units.end(), [&](std::uint32_t a, std::uint32_t b) {
    return kernels::TopK<T>::better(values[a], key(a), values[b], key(b));
  });
  units.resize(std::min(rho, m));
  std::sort(units.begin(), units.end());
  return units;
}

template <typename T>
void check_rows(std::uint32_t m, std::uint32_t rho, std::int64_t spread, std::uint64_t seed) {
  SeededRng rng(seed);
  constexpr std::size_t kRows = 3;
  kernels::TopK<T> topk;
  topk.reset(kRows, rho, m);
  std::vector<std::vector<T>> values(kRows, std::vector<T>(m));
  std::vector<std::uint32_t> offsets(kRows);
  for (std::size_t r = 0; r < kRows; ++r) {
    offsets[r] = static_cast<std::uint32_t>(rng.uniform_below(m));
    topk.set_offset(r, offsets[r]);
    for (auto& v : values[r])
      v = static_cast<T>(static_cast<std::int64_t>(rng.uniform_below(std::uint64_t(spread))) - spread / 2);
  }
  // Offers interleaved across rows, in ascending unit order as the kernels make them,
  // each only when it reaches the row's current threshold (as the kernels filter).
  for (std::uint32_t u = 0; u < m; ++u)
    for (std::size_t r = 0; r < kRows; ++r)
      if (!(values[r][u] < topk.thresholds()[r])) topk.offer(r, values[r][u], u);
  for (std::size_t r = 0; r < kRows; ++r) {
    std::vector<std::uint32_t> got(std::min(rho, m));
    topk.winners(r, got.data());
    ASSERT_EQ(got, brute_force(values[r], rho, offsets[r]))
        << "m " << m << " rho " << rho << " spread " << spread << " row " << r;
  }
}

TEST(TopK, WinnersAreTheTopRhoUnderTheTieOrder) {
  for (std::uint32_t rho : {1u, 2u, 7u, 64u})
    for (std::int64_t spread : {1, 2, 5, 40, 3000, 60000})  // 1: every value ties
      for (std::uint32_t m : {rho + 1, 300u, 5000u}) {
        check_rows<std::int16_t>(m, rho, spread, 11 * m + rho);
        check_rows<std::int32_t>(m, rho, spread, 13 * m + rho);
        check_rows<float>(m, rho, spread, 17 * m + rho);
      }
}

TEST(TopK, ExtremeIntegerValuesBisectWithoutOverflow) {
  // Values at both ends of the type: the bisection's midpoints must not wrap.
  for (std::uint32_t rho : {1u, 5u}) {
    kernels::TopK<std::int16_t> topk;
    const std::uint32_t m = 400;
    topk.reset(1, rho, m);
    std::vector<std::int16_t> values(m);
    SeededRng rng(rho);
    for (auto& v : values) v = rng.uniform01() < 0.5 ? std::int16_t(-32768) : std::int16_t(32767 - rng.uniform_below(3));
    for (std::uint32_t u = 0; u < m; ++u)
      if (!(values[u] < topk.thresholds()[0])) topk.offer(0, values[u], u);
    std::vector<std::uint32_t> got(rho);
    topk.winners(0, got.data());
    EXPECT_EQ(got, brute_force(values, rho, 0));
  }
}

}  // namespace
}  // namespace flynn
