#pragma once
// Per-row top-ρ selection used by the FlyHash kernels. Each row keeps a buffer of
// candidates; when it fills, the candidates below the ρ-th best are dropped and the ρ-th
// best value becomes the row's admission threshold, so the SIMD kernels leave vector code
// only for the few activations that can still enter. Amortised O(1) per candidate, no
// allocation per row.
//
// Order: larger activation first; among equal activations the smaller tie key, where a
// unit's key is its index rotated by the row's offset: (unit − offset) mod m. The final
// set is the top ρ of everything offered under this strict total order, whatever the
// order of the offers.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace flynn::kernels {

template <typename T>
class TopK {
 public:
  /// Empties `rows` rows of capacity rho for m units; all tie offsets 0.
  void reset(std::size_t rows, std::uint32_t rho, std::uint32_t m) {
    rho_ = rho;
    m_ = m;
    capacity_ = 2 * rho + 32;  // model_footprint.cpp's topk_row_bytes counts the same
    values_.resize(rows * capacity_);
    keys_.resize(rows * capacity_);
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
    const std::size_t at = row * capacity_ + n++;
    values_[at] = value;
    keys_[at] = unit >= off ? unit - off : unit + m_ - off;
    if (n == capacity_) compact(row);
  }

  /// Row `row`'s winners as ascending unit indices (ρ of them; fewer only when fewer
  /// units were offered).
  void winners(std::size_t row, std::uint32_t* out) {
    if (size_[row] > rho_) compact_exact(row);
    const std::uint32_t* k = keys_.data() + row * capacity_;
    const std::uint32_t off = offset_[row];
    const std::uint32_t n = size_[row];
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t unit = std::uint64_t(k[i]) + off;
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

  // A full buffer. Integer activations: the ρ-th largest value v is found by bisection
  // over the values (branch-free counting loops that vectorise), and the candidates below
  // v are dropped: everything that can still win is kept, v becomes the threshold, and
  // no comparison of tie keys is needed until winners(). This replaced an nth_element
  // over (value, key) pairs, whose unpredictable branches were most of the selection's
  // cost. When ties at v would leave too little room, the exact compaction runs instead.
  void compact(std::size_t row) {
    if constexpr (std::is_integral_v<T>) {
      T* v = values_.data() + row * capacity_;
      std::uint32_t* k = keys_.data() + row * capacity_;
      const std::uint32_t n = size_[row];
      // Invariant: at least ρ values ≥ lo, fewer than ρ above hi.
      T lo = v[0], hi = v[0];
      for (std::uint32_t i = 1; i < n; ++i) {
        lo = std::min(lo, v[i]);
        hi = std::max(hi, v[i]);
      }
      while (lo < hi) {
        const T mid = static_cast<T>(std::int64_t(lo) + (std::int64_t(hi) - lo + 1) / 2);
        std::uint32_t at_least = 0;
        for (std::uint32_t i = 0; i < n; ++i) at_least += v[i] >= mid ? 1u : 0u;
        if (at_least >= rho_) lo = mid; else hi = static_cast<T>(mid - 1);
      }
      const T kth = lo;
      std::uint32_t kept = 0;
      for (std::uint32_t i = 0; i < n; ++i) kept += v[i] >= kth;
      if (kept + kMinRoom <= capacity_) {
        std::uint32_t w = 0;
        for (std::uint32_t i = 0; i < n; ++i) {
          v[w] = v[i];
          k[w] = k[i];
          w += v[i] >= kth;
        }
        size_[row] = w;
        threshold_[row] = kth;
        return;
      }
    }
    compact_exact(row);
  }

  // Keeps the best ρ candidates of the row under the full order; the worst of them is
  // the new threshold.
  void compact_exact(std::size_t row) {
    T* v = values_.data() + row * capacity_;
    std::uint32_t* k = keys_.data() + row * capacity_;
    const std::uint32_t n = size_[row];
    scratch_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) scratch_[i] = Entry{v[i], k[i]};
    auto by_rank = [](const Entry& a, const Entry& b) { return better(a.value, a.key, b.value, b.key); };
    std::nth_element(scratch_.begin(), scratch_.begin() + (rho_ - 1), scratch_.end(), by_rank);
    for (std::uint32_t i = 0; i < rho_; ++i) {
      v[i] = scratch_[i].value;
      k[i] = scratch_[i].key;
    }
    size_[row] = rho_;
    threshold_[row] = scratch_[rho_ - 1].value;
  }

  // The least room a value compaction must free; with less, ties at the ρ-th value
  // would make compactions frequent, and the exact one runs.
  static constexpr std::uint32_t kMinRoom = 16;

  std::uint32_t rho_ = 0, m_ = 0, capacity_ = 0;
  std::vector<T> values_;
  std::vector<std::uint32_t> keys_;
  std::vector<std::uint32_t> size_;
  std::vector<std::uint32_t> offset_;
  std::vector<T> threshold_;
  std::vector<Entry> scratch_;
};

}  // namespace flynn::kernels
