#include "flynn/pair_codes.hpp"

#include <algorithm>
#include <bit>

#include "flynn/random.hpp"

namespace flynn {

PairCoder::PairCoder(const FlyConfig& config)
    : m_(config.m),
      rho_(config.rho),
      pairs_(config.pairs),
      cells_(config.pair_cells()),
      key_(SeededRng::keyed(config.seed, RngStream::PairCodes, 0).next_u64()) {}

void PairCoder::row_codes(const std::uint32_t* winners, std::uint32_t* out, Scratch& sc) const {
  std::copy(winners, winners + rho_, out);
  if (!pairs_) return;
  const std::size_t n_pairs = std::size_t(rho_) * pairs_;
  // The set of cells taken by this row: open addressing over at least 2·n_pairs slots,
  // emptied by moving to the next generation instead of clearing.
  const std::size_t slots = std::bit_ceil(2 * n_pairs);
  if (sc.taken.size() != slots) {
    sc.taken.assign(slots, 0);
    sc.stamp.assign(slots, 0);
    sc.generation = 0;
  }
  if (++sc.generation == 0) {
    std::fill(sc.stamp.begin(), sc.stamp.end(), 0);
    sc.generation = 1;
  }
  sc.order.resize(rho_);
  for (std::uint32_t k = 0; k < rho_; ++k)
    sc.order[k] = (mix64(winners[k] ^ key_) & 0xFFFFFFFF00000000ULL) | winners[k];
  std::sort(sc.order.begin(), sc.order.end());
  const auto take = [&](std::uint32_t cell) {  // false when the row holds the cell already
    for (std::size_t s = cell & (slots - 1);; s = (s + 1) & (slots - 1)) {
      if (sc.stamp[s] != sc.generation) {
        sc.stamp[s] = sc.generation;
        sc.taken[s] = cell;
        return true;
      }
      if (sc.taken[s] == cell) return false;
    }
  };
  std::uint32_t* pair_out = out + rho_;
  for (std::uint32_t i = 0; i < rho_; ++i) {
    const std::uint32_t a = static_cast<std::uint32_t>(sc.order[i]);
    for (std::uint32_t j = 1; j <= pairs_; ++j) {
      const std::uint32_t b = static_cast<std::uint32_t>(sc.order[(i + j) % rho_]);
      const std::uint64_t pair = (std::uint64_t{std::min(a, b)} << 32) | std::max(a, b);
      std::uint32_t cell = static_cast<std::uint32_t>((static_cast<unsigned __int128>(mix64(pair ^ key_)) * cells_) >> 64);
      while (!take(cell)) cell = cell + 1 == cells_ ? 0 : cell + 1;
      *pair_out++ = m_ + cell;
    }
  }
}

const std::uint32_t* PairCoder::block_codes(const std::uint32_t* winners, std::size_t n, Scratch& sc) const {
  if (!pairs_) return winners;
  const std::size_t per_row = codes_per_row();
  sc.codes.resize(n * per_row);
  for (std::size_t r = 0; r < n; ++r) row_codes(winners + r * rho_, sc.codes.data() + r * per_row, sc);
  return sc.codes.data();
}

}  // namespace flynn
