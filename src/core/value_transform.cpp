#include "flynn/value_transform.hpp"

#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"

// CMakeLists.txt compiles this file with -ffp-contract=off: see value_transform.hpp.

namespace flynn {

ValueTransform parse_value_transform(const std::string& name) {
  if (name == "none") return ValueTransform::None;
  if (name == "sqrt") return ValueTransform::Sqrt;
  if (name == "log1p") return ValueTransform::Log1p;
  throw Error(fmt::format("value_transform: '{}' is not one of none, sqrt, log1p", name));
}

const char* value_transform_name(ValueTransform t) {
  switch (t) {
    case ValueTransform::None: return "none";
    case ValueTransform::Sqrt: return "sqrt";
    case ValueTransform::Log1p: return "log1p";
  }
  return "?";
}

namespace {

// 2·atanh(t) − 2t = 2t·(t²/3 + t⁴/5 + …) for |t| ≤ 0.1716 (t² ≤ 0.02944: 12 terms leave
// less than 1e-19 of the sum), by Horner's rule in a fixed order.
double two_atanh_tail(double t) {
  const double t2 = t * t;
  double r = 1.0 / 25.0;
  for (int k = 11; k >= 1; --k) r = 1.0 / (2 * k + 1) + t2 * r;
  return 2.0 * t * (t2 * r);
}

}  // namespace

double deterministic_log1p(double a) {
  if (std::isnan(a)) return a;
  if (a == 0.0) return a;
  if (a == std::numeric_limits<double>::infinity()) return a;
  // log(1 + a) = 2·atanh(a / (2 + a)) exactly: below √2 − 1 the argument needs no reduction,
  // and 1 + a is never rounded.
  if (a < 0.41421356237309504880) {
    const double t = a / (2.0 + a);
    return 2.0 * t + two_atanh_tail(t);
  }
  const double u = 1.0 + a;
  // The part of a that 1 + a lost to rounding (exact: Sterbenz), relative to u.
  const double lost = (a - (u - 1.0)) / u;
  int e = 0;
  double f = std::frexp(u, &e);  // u = f·2^e, f in [0.5, 1): exact
  if (f < 0.70710678118654752440) {
    f *= 2.0;  // exact
    e -= 1;
  }
  const double t = (f - 1.0) / (f + 1.0);  // f − 1 exact; |t| ≤ 0.1716
  // ln 2 as a high part with zeros in its low bits (e·hi is exact for |e| < 2^11) and the rest.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double ed = static_cast<double>(e);
  return ed * kLn2Hi + (2.0 * t + (two_atanh_tail(t) + (ed * kLn2Lo + lost)));
}

namespace {

// T(v) computed in full (the definition).
float compute_transform(ValueTransform t, float v) {
  switch (t) {
    case ValueTransform::None: return v;
    case ValueTransform::Sqrt: {
      const double a = std::sqrt(std::fabs(static_cast<double>(v)));
      return static_cast<float>(std::signbit(v) ? -a : a);
    }
    case ValueTransform::Log1p: {
      const double a = deterministic_log1p(std::fabs(static_cast<double>(v)));
      return static_cast<float>(std::signbit(v) ? -a : a);
    }
  }
  return v;
}

// Pixels and counts are mostly small non-negative integers: their transforms are looked up
// (the same floats compute_transform gives, computed once per process).
constexpr int kTableSize = 256;
using SmallIntegerTable = std::array<float, kTableSize>;

const SmallIntegerTable& small_integer_table(ValueTransform t) {
  static const std::array<SmallIntegerTable, 3> tables = [] {
    std::array<SmallIntegerTable, 3> out{};
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < kTableSize; ++i)
        out[k][i] = compute_transform(static_cast<ValueTransform>(k), static_cast<float>(i));
    return out;
  }();
  return tables[static_cast<int>(t)];
}

}  // namespace

namespace detail {

float transform_nonidentity(ValueTransform t, float v) {
  if (t != ValueTransform::Sqrt && t != ValueTransform::Log1p) return v;
  // +0 only: −0 keeps its sign through compute_transform. NaN fails the comparisons.
  if (v >= 0.0f && v < static_cast<float>(kTableSize) && !std::signbit(v)) {
    const int i = static_cast<int>(v);
    if (static_cast<float>(i) == v) return small_integer_table(t)[i];
  }
  return compute_transform(t, v);
}

}  // namespace detail

}  // namespace flynn
