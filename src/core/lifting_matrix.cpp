#include "flynn/lifting_matrix.hpp"

#include <algorithm>

#include "flynn/detail/parallel.hpp"
#include "flynn/random.hpp"

namespace flynn {

void LiftingMatrix::generate_row(std::uint64_t seed, std::uint32_t j, std::uint32_t s,
                                 std::uint32_t columns, std::uint32_t* out,
                                 std::uint8_t* chosen) {
  SeededRng rng = SeededRng::keyed(seed, RngStream::LiftingMatrix, j);
  std::uint32_t k = 0;
  for (std::uint32_t t = columns - s; t < columns; ++t) {
    const auto r = static_cast<std::uint32_t>(rng.uniform_below(std::uint64_t(t) + 1));
    const std::uint32_t pick = chosen[r] ? t : r;
    chosen[pick] = 1;
    out[k++] = pick;
  }
  for (std::uint32_t i = 0; i < s; ++i) chosen[out[i]] = 0;
  std::sort(out, out + s);
}

void LiftingMatrix::apply_signs(std::uint64_t seed, std::uint32_t j, std::uint32_t s,
                                std::uint32_t w, std::uint32_t* cols) {
  SeededRng rng = SeededRng::keyed(seed, RngStream::LiftingSigns, j);
  std::uint64_t bits = 0;
  for (std::uint32_t k = 0; k < s; ++k) {
    if (k % 64 == 0) bits = rng.next_u64();
    if ((bits >> (k % 64)) & 1) cols[k] += w;
  }
  std::sort(cols, cols + s);
}

LiftingMatrix::LiftingMatrix(std::uint32_t m, std::uint32_t s, std::uint32_t columns,
                             std::uint64_t seed, int threads, bool signed_rows)
    : m_(m), s_(s), columns_(columns), cols_(std::size_t(m) * s) {
  const std::uint32_t choose_from = signed_rows ? columns / 2 : columns;
  constexpr std::uint32_t kRowsPerTask = 4096;
  const std::size_t tasks = (m + kRowsPerTask - 1) / kRowsPerTask;
  detail::parallel_for(tasks, threads, [&](std::size_t task, int) {
    std::vector<std::uint8_t> scratch(choose_from, 0);
    const std::uint32_t begin = static_cast<std::uint32_t>(task * kRowsPerTask);
    const std::uint32_t end = std::min(m, begin + kRowsPerTask);
    for (std::uint32_t j = begin; j < end; ++j) {
      std::uint32_t* row = cols_.data() + std::size_t(j) * s;
      generate_row(seed, j, s, choose_from, row, scratch.data());
      if (signed_rows) apply_signs(seed, j, s, choose_from, row);
    }
  });
}

}  // namespace flynn
