#include "flynn/lifting_matrix.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "flynn/detail/parallel.hpp"
#include "flynn/random.hpp"

namespace flynn {

namespace {

constexpr std::uint32_t kMaxStackRow = 1024;  // apply_signs keeps its moved columns on the stack up to this s

// Writes the chosen columns (chosen[c] = 1) to out in ascending order and clears them, by a
// scan of the flags eight at a time: the same sorted set std::sort gives, in O(columns/8 + s)
// instead of O(s log s) (sorting was most of a matrix's build time: 44 % on Fashion-MNIST's).
void collect_chosen(std::uint8_t* chosen, std::uint32_t columns, std::uint32_t* out) {
  std::uint32_t c = 0;
  for (; c + 8 <= columns; c += 8) {
    std::uint64_t word;
    std::memcpy(&word, chosen + c, 8);
    if (word == 0) continue;
    // Flags are 0 or 1, so byte i of the word is its bit 8i: walk the set bits.
    for (; word; word &= word - 1) *out++ = c + static_cast<std::uint32_t>(__builtin_ctzll(word)) / 8;
    std::memset(chosen + c, 0, 8);
  }
  for (; c < columns; ++c)
    if (chosen[c]) {
      *out++ = c;
      chosen[c] = 0;
    }
}

}  // namespace

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
  // Ascending order. Scanning the flags costs a pass over the columns; sorting costs
  // s log s: scan where the columns are at most 16 per chosen one (every variant's default).
  if (columns <= 16ull * s) {
    collect_chosen(chosen, columns, out);
  } else {
    for (std::uint32_t i = 0; i < s; ++i) chosen[out[i]] = 0;
    std::sort(out, out + s);
  }
}

void LiftingMatrix::apply_signs(std::uint64_t seed, std::uint32_t j, std::uint32_t s,
                                std::uint32_t w, std::uint32_t* cols) {
  SeededRng rng = SeededRng::keyed(seed, RngStream::LiftingSigns, j);
  // Columns are ascending and below w; those with sign −1 move to w + c, above every
  // other. So the sorted row is the +1 columns in their order, then the moved ones in
  // theirs: a stable partition, without a sort.
  std::uint32_t moved[kMaxStackRow];
  std::vector<std::uint32_t> heap;
  std::uint32_t* up = s <= kMaxStackRow ? moved : (heap.resize(s), heap.data());
  std::uint32_t kept = 0, n_up = 0;
  std::uint64_t bits = 0;
  for (std::uint32_t k = 0; k < s; ++k) {
    if (k % 64 == 0) bits = rng.next_u64();
    if ((bits >> (k % 64)) & 1) up[n_up++] = cols[k] + w;
    else cols[kept++] = cols[k];
  }
  std::copy(up, up + n_up, cols + kept);
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
