#pragma once
// Per-row top-ρ selection used by the FlyHash kernels: a bounded heap per row whose worst
// element is the row's admission threshold, so that the SIMD kernels only leave vector
// code for the few activations that can still enter.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace flynn::kernels {

template <typename T>
class TopK {
 public:
  /// Empties `rows` heaps of capacity rho for m units; all tie offsets 0.
  void reset(std::size_t rows, std::uint32_t rho, std::uint32_t m) {
    rows_ = rows;
    rho_ = rho;
    m_ = m;
    values_.resize(rows * rho);
    keys_.resize(rows * rho);
    size_.assign(rows, 0);
    offset_.assign(rows, 0);
    threshold_.assign(rows, std::numeric_limits<T>::lowest());
  }

  void set_offset(std::size_t row, std::uint32_t offset) { offset_[row] = offset; }

  /// Per-row admission thresholds: activations strictly below cannot enter (ties may).
  T* thresholds() { return threshold_.data(); }

  /// Offers activation `value` of unit `unit` to row `row`'s top-ρ.
  void offer(std::size_t row, T value, std::uint32_t unit) {
    if constexpr (std::numeric_limits<T>::has_quiet_NaN) {
      if (value != value) value = std::numeric_limits<T>::lowest();
    }
    const std::uint32_t off = offset_[row];
    const std::uint32_t key = unit >= off ? unit - off : unit + m_ - off;
    T* v = values_.data() + row * rho_;
    std::uint32_t* k = keys_.data() + row * rho_;
    std::uint32_t& n = size_[row];
    if (n < rho_) {
      // Sift up: the root is the worst entry.
      std::uint32_t i = n++;
      while (i > 0) {
        const std::uint32_t parent = (i - 1) / 2;
        if (!better(v[parent], k[parent], value, key)) break;
        v[i] = v[parent];
        k[i] = k[parent];
        i = parent;
      }
      v[i] = value;
      k[i] = key;
      if (n == rho_) threshold_[row] = v[0];
      return;
    }
    if (!better(value, key, v[0], k[0])) return;
    // Replace the root and sift down.
    std::uint32_t i = 0;
    for (;;) {
      const std::uint32_t l = 2 * i + 1;
      if (l >= rho_) break;
      std::uint32_t worst = l;
      const std::uint32_t r = l + 1;
      if (r < rho_ && better(v[l], k[l], v[r], k[r])) worst = r;
      if (!better(value, key, v[worst], k[worst])) break;
      v[i] = v[worst];
      k[i] = k[worst];
      i = worst;
    }
    v[i] = value;
    k[i] = key;
    threshold_[row] = v[0];
  }

  /// Row `row`'s winners as ascending unit indices (ρ of them).
  void winners(std::size_t row, std::uint32_t* out) const {
    const std::uint32_t* k = keys_.data() + row * rho_;
    const std::uint32_t off = offset_[row];
    const std::uint32_t n = size_[row];
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t unit = std::uint64_t(k[i]) + off;
      out[i] = static_cast<std::uint32_t>(unit >= m_ ? unit - m_ : unit);
    }
    insertion_sort(out, n);
  }

  /// Whether (va, ka) ranks above (vb, kb): larger activation, then smaller tie key.
  static bool better(T va, std::uint32_t ka, T vb, std::uint32_t kb) {
    return va > vb || (va == vb && ka < kb);
  }

 private:
  static void insertion_sort(std::uint32_t* a, std::uint32_t n) {
    if (n > 32) {
      std::sort(a, a + n);
      return;
    }
    for (std::uint32_t i = 1; i < n; ++i) {
      const std::uint32_t x = a[i];
      std::uint32_t j = i;
      while (j > 0 && a[j - 1] > x) {
        a[j] = a[j - 1];
        --j;
      }
      a[j] = x;
    }
  }

  std::size_t rows_ = 0;
  std::uint32_t rho_ = 0, m_ = 0;
  std::vector<T> values_;
  std::vector<std::uint32_t> keys_;
  std::vector<std::uint32_t> size_;
  std::vector<std::uint32_t> offset_;
  std::vector<T> threshold_;
};

}  // namespace flynn::kernels
