#pragma once
// Per-row top-ρ selection used by the FlyHash kernels. Each row keeps a buffer of
// candidates; when it fills, nth_element keeps the best ρ and the worst of those becomes
// the row's admission threshold, so the SIMD kernels leave vector code only for the few
// activations that can still enter. Amortised O(1) per candidate, no allocation per row.
//
// Order: larger activation first; among equal activations the smaller tie key, where a
// unit's key is its index rotated by the row's offset: (unit − offset) mod m. The final
// set is the top ρ of everything offered under this strict total order, whatever the
// order of the offers.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace flynn::kernels {

template <typename T>
class TopK {
 public:
  /// Empties `rows` rows of capacity rho for m units; all tie offsets 0.
  void reset(std::size_t rows, std::uint32_t rho, std::uint32_t m) {
    rho_ = rho;
    m_ = m;
    capacity_ = 2 * rho + 32;
    entries_.resize(rows * capacity_);
    size_.assign(rows, 0);
    offset_.assign(rows, 0);
    threshold_.assign(rows, std::numeric_limits<T>::lowest());
  }

  void set_offset(std::size_t row, std::uint32_t offset) { offset_[row] = offset; }

  /// Marks `row` as padding (a lane of a partial block that holds no input row): its
  /// threshold becomes the largest value, so its all-zero activations are never offered.
  /// Without this, every unit of a padding lane ties at the initial threshold and is
  /// offered, which made a one-row call cost as much selection work as a full block.
  void ignore_row(std::size_t row) { threshold_[row] = std::numeric_limits<T>::max(); }

  /// Per-row admission thresholds: activations strictly below cannot enter (ties may).
  T* thresholds() { return threshold_.data(); }

  /// Offers activation `value` of unit `unit` to row `row`'s top-ρ.
  void offer(std::size_t row, T value, std::uint32_t unit) {
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
      if (value != value) value = std::numeric_limits<T>::lowest();
    }
    if (value < threshold_[row]) return;
    const std::uint32_t off = offset_[row];
    std::uint32_t& n = size_[row];
    Entry* e = entries_.data() + row * capacity_;
    e[n++] = Entry{value, unit >= off ? unit - off : unit + m_ - off};
    if (n == capacity_) compact(row);
  }

  /// Row `row`'s winners as ascending unit indices (ρ of them; fewer only when fewer
  /// units were offered).
  void winners(std::size_t row, std::uint32_t* out) {
    if (size_[row] > rho_) compact(row);
    const Entry* e = entries_.data() + row * capacity_;
    const std::uint32_t off = offset_[row];
    const std::uint32_t n = size_[row];
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t unit = std::uint64_t(e[i].key) + off;
      out[i] = static_cast<std::uint32_t>(unit >= m_ ? unit - m_ : unit);
    }
    std::sort(out, out + n);
  }

  /// Whether (va, ka) ranks above (vb, kb): larger activation, then smaller tie key.
  static bool better(T va, std::uint32_t ka, T vb, std::uint32_t kb) {
    return va > vb || (va == vb && ka < kb);
  }

 private:
  struct Entry {
    T value;
    std::uint32_t key;
  };

  // Keeps the best ρ candidates of the row; the worst of them is the new threshold.
  void compact(std::size_t row) {
    Entry* e = entries_.data() + row * capacity_;
    const std::uint32_t n = size_[row];
    auto by_rank = [](const Entry& a, const Entry& b) { return better(a.value, a.key, b.value, b.key); };
    std::nth_element(e, e + (rho_ - 1), e + n, by_rank);
    size_[row] = rho_;
    threshold_[row] = e[rho_ - 1].value;
  }

  std::uint32_t rho_ = 0, m_ = 0, capacity_ = 0;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> size_;
  std::vector<std::uint32_t> offset_;
  std::vector<T> threshold_;
};

}  // namespace flynn::kernels
