#include "flynn/federated/dp_postprocess.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

// γ^k by squaring: multiplications only, so every party (whatever its libm) computes the
// same bits, and so the same model, from the same sum.
double power(double gamma, std::uint32_t k) {
  double result = 1.0, base = gamma;
  while (k) {
    if (k & 1) result *= base;
    base *= base;
    k >>= 1;
  }
  return result;
}

// ⌈num/den⌉ of the exact scale, saturated to the count range.
std::uint32_t ceil_scale(const Rational& b) {
  const u128 c = (b.num + b.den - 1) / b.den;
  return c > std::numeric_limits<std::uint32_t>::max() ? std::numeric_limits<std::uint32_t>::max()
                                                        : static_cast<std::uint32_t>(c);
}

// One block of every class's cells: class l's run starts at counts[l·stride + first].
struct Block {
  std::uint32_t* base;  // class 0's first cell of the block
  std::size_t stride;   // cells per class
  std::uint32_t size;   // cells of the block per class
  std::size_t classes;
  double gamma;
  std::uint32_t* of_class(std::size_t l) const { return base + l * stride; }
  /// Calls f(count) on every cell of the block, class by class.
  template <class F>
  void for_each_cell(F f) const {
    for (std::size_t l = 0; l < classes; ++l)
      for (std::uint32_t* v = of_class(l); v != of_class(l) + size; ++v) f(*v);
  }
};

void threshold(const Block& b, const Rational& scale) {
  const std::uint32_t theta = ceil_scale(scale);
  b.for_each_cell([theta](std::uint32_t& v) {
    if (v < theta) v = 0;
  });
}

void noise_units(const Block& b, const Rational& scale) {
  if (b.gamma <= 0) return;  // binary filters: only zero / non-zero matters
  // γ^v' = e^(−v/b) ⇔ v' = v / (b·ln(1/γ)); never amplify (factor capped at 1).
  const double factor = std::min(1.0, 1.0 / (scale.to_double() * std::log(1.0 / b.gamma)));
  if (factor >= 1.0) return;
  b.for_each_cell([factor](std::uint32_t& v) { v = static_cast<std::uint32_t>(std::floor(v * factor + 0.5)); });
}

// Σ (1 − γ^round(s·c)) over one class's entries.
double familiarity(const std::uint32_t* c, std::uint32_t m, double gamma, double s) {
  double sum = 0;
  for (std::uint32_t i = 0; i < m; ++i) {
    if (c[i] == 0) continue;
    const auto k = static_cast<std::uint32_t>(std::floor(c[i] * s + 0.5));
    sum += 1.0 - power(gamma, k);
  }
  return sum;
}

void class_balance(const Block& b) {
  const std::uint32_t m = b.size;
  const double gamma = b.gamma;
  std::vector<double> mass(b.classes);
  for (std::size_t l = 0; l < b.classes; ++l) mass[l] = familiarity(b.of_class(l), m, gamma, 1.0);
  double target = std::numeric_limits<double>::infinity();
  for (double x : mass)
    if (x > 0) target = std::min(target, x);
  if (!std::isfinite(target)) return;  // nothing released anywhere
  for (std::size_t l = 0; l < b.classes; ++l) {
    std::uint32_t* c = b.of_class(l);
    if (!(mass[l] > target)) continue;
    if (gamma == 0) {
      // Binary filters: keep the class's K largest non-zero entries, K = the smallest
      // class's number (ties at the cut-off resolved by the lower index).
      const auto keep = static_cast<std::size_t>(target);
      std::vector<std::uint32_t> order;
      for (std::uint32_t i = 0; i < m; ++i)
        if (c[i]) order.push_back(i);
      std::stable_sort(order.begin(), order.end(),
                       [c](std::uint32_t x, std::uint32_t y) { return c[x] > c[y]; });
      for (std::size_t k = keep; k < order.size(); ++k) c[order[k]] = 0;
      continue;
    }
    // The largest scale s in [0, 1] whose rescaled counts round(s·c) have at most the
    // target familiarity (monotone in s): bisection to double precision.
    double lo = 0.0, hi = 1.0;
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (familiarity(c, m, gamma, mid) <= target) lo = mid;
      else hi = mid;
    }
    for (std::uint32_t i = 0; i < m; ++i)
      c[i] = static_cast<std::uint32_t>(std::floor(c[i] * lo + 0.5));
  }
}

void postprocess_block(const Block& b, const Rational& noise_scale, DpPostprocess how) {
  switch (how) {
    case DpPostprocess::None: return;
    case DpPostprocess::Threshold: threshold(b, noise_scale); return;
    case DpPostprocess::NoiseUnits: noise_units(b, noise_scale); return;
    case DpPostprocess::ClassBalance: class_balance(b); return;
    case DpPostprocess::NoiseUnitsClassBalance:
      // Rescale first, so the balance compares the classes' familiarity as the model will
      // see it (saturated noise no longer counts as full familiarity).
      noise_units(b, noise_scale);
      class_balance(b);
      return;
  }
}

}  // namespace

void postprocess_release(std::vector<std::uint32_t>& counts, std::uint32_t cells, std::size_t classes,
                         const std::vector<FlyConfig::CellBlock>& blocks, const Rational& noise_scale,
                         DpPostprocess how) {
  if (counts.size() != std::size_t(cells) * classes)
    throw Error(fmt::format("dp post-processing: {} counts, expected {} classes × {} cells = {}", counts.size(),
                            classes, cells, std::size_t(cells) * classes));
  for (const FlyConfig::CellBlock& b : blocks) {
    if (b.first > b.last || b.last > cells)
      throw Error(fmt::format("dp post-processing: cells [{}, {}) are not within the {} cells of a class", b.first,
                              b.last, cells));
    if (!(b.gamma >= 0 && b.gamma < 1))
      throw Error(fmt::format("dp post-processing: gamma = {} is not in [0, 1)", b.gamma));
  }
  // Each block is post-processed on its own, at its own decay: a class's pair cells are
  // balanced against the other classes' pair cells, never against its units.
  for (const FlyConfig::CellBlock& b : blocks)
    postprocess_block({counts.data() + b.first, cells, b.last - b.first, classes, b.gamma}, noise_scale, how);
}

void postprocess_release(std::vector<std::uint32_t>& counts, std::uint32_t m, std::size_t classes,
                         const Rational& noise_scale, double gamma, DpPostprocess how) {
  postprocess_release(counts, m, classes, {FlyConfig::CellBlock{0, m, gamma}}, noise_scale, how);
}

}  // namespace flynn::federated
