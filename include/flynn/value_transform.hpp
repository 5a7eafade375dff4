#pragma once
// A fixed monotone transform of each feature value before the standardised encoding reads
// it (FlyConfig::value_transform): it compresses the large end of skewed non-negative
// columns (pixel intensities, counts, amounts), where standardising alone lets the few
// brightest values decide which units win (docs/design/defaults.md, "Value transforms").
//
// Determinism: a federation's parties and every load of a model must compute the same
// floats on every machine, so the transforms are built from IEEE operations that are
// exactly rounded (+, −, ×, ÷, √) in a fixed order, never from the platform's libm, whose
// log1p may differ in the last bit between versions. The source file is compiled without
// floating-point contraction (no fused multiply-add), so the compiler cannot change a
// rounding either.
#include <cstdint>
#include <string>

namespace flynn {

/// T(v) for a feature value v, odd (T(−v) = −T(v)) and increasing, so signs, zeros and the
/// order of values are kept:
///   None   v
///   Sqrt   sign(v)·√|v|
///   Log1p  sign(v)·log(1 + |v|)
enum class ValueTransform : std::uint8_t {
  None = 0,
  Sqrt = 1,
  Log1p = 2,
};

/// "none", "sqrt", "log1p"; throws flynn::Error listing them otherwise.
ValueTransform parse_value_transform(const std::string& name);
const char* value_transform_name(ValueTransform t);

namespace detail {
/// transform_value for Sqrt and Log1p (out of line: its file is compiled without contraction).
float transform_nonidentity(ValueTransform t, float v);
}  // namespace detail

/// T(v), computed in double and rounded once to float (NaN stays NaN, ±inf stays ±inf).
/// What FeatureSums sums and RowEncoder standardises, so both see the same values. Inline
/// for None, so models without a transform (every default) pay no call per value.
inline float transform_value(ValueTransform t, float v) {
  return t == ValueTransform::None ? v : detail::transform_nonidentity(t, v);
}

/// log(1 + a) for a ≥ 0 (NaN for NaN, +inf for +inf), from exactly rounded operations only:
/// u = 1 + a is split as 2^e·f with f in [√½, √2), log f = 2·atanh((f − 1)/(f + 1)) by its
/// series to 1e-17, plus e·ln 2 in two parts, plus the rounding error of 1 + a (a − (u − 1))/u.
/// Within 2 ulp of the exact value (tests/value_transform_test.cpp compares it with libm).
double deterministic_log1p(double a);

}  // namespace flynn
