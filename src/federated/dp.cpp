#include "flynn/federated/dp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

constexpr u128 kMaxNumerator = u128{1} << 121;  // leaves room for U + t·V in 128 bits
constexpr double kMaxScale = 0x1.0p50;           // noise values stay far inside int64

u128 gcd128(u128 a, u128 b) {
  while (b != 0) {
    const u128 r = a % b;
    a = b;
    b = r;
  }
  return a;
}

Rational reduced(u128 num, u128 den) {
  const u128 g = gcd128(num, den);
  return {num / g, den / g};
}

}  // namespace

DpExponent parse_dp_exponent(const std::string& name) {
  if (name == "paper") return DpExponent::Paper;
  if (name == "reference") return DpExponent::Reference;
  throw Error(fmt::format("dp-exponent: '{}' is not one of paper, reference", name));
}

const char* dp_exponent_name(DpExponent e) {
  return e == DpExponent::Paper ? "paper" : "reference";
}

DpUnit parse_dp_unit(const std::string& name) {
  if (name == "paper") return DpUnit::Paper;
  if (name == "record") return DpUnit::Record;
  throw Error(fmt::format("dp-unit: '{}' is not one of paper, record", name));
}

const char* dp_unit_name(DpUnit u) { return u == DpUnit::Paper ? "paper" : "record"; }

DpPostprocess parse_dp_postprocess(const std::string& name) {
  for (DpPostprocess p : all_dp_postprocesses())
    if (name == dp_postprocess_name(p)) return p;
  throw Error(fmt::format(
      "dp-postprocess: '{}' is not one of none, threshold, noise-units, class-balance, "
      "noise-units+class-balance", name));
}

const char* dp_postprocess_name(DpPostprocess p) {
  switch (p) {
    case DpPostprocess::None: return "none";
    case DpPostprocess::Threshold: return "threshold";
    case DpPostprocess::NoiseUnits: return "noise-units";
    case DpPostprocess::ClassBalance: return "class-balance";
    case DpPostprocess::NoiseUnitsClassBalance: return "noise-units+class-balance";
  }
  return "none";
}

std::vector<DpPostprocess> all_dp_postprocesses() {
  return {DpPostprocess::None, DpPostprocess::Threshold, DpPostprocess::NoiseUnits,
          DpPostprocess::ClassBalance, DpPostprocess::NoiseUnitsClassBalance};
}

void DpParams::validate(std::uint64_t cells) const {
  if (!(std::isfinite(epsilon) && epsilon >= 1e-6 && epsilon <= 1e6))
    throw Error(fmt::format("dp-epsilon = {}: must be a number in [1e-6, 1e6]", epsilon));
  if (T == 0 && !T_auto) throw Error("dp-T = 0: each party must release at least one entry");
  if (cells > 0 && T > cells)
    throw Error(fmt::format("dp-T = {}: more than the {} entries (m × classes) a party holds",
                            T, cells));
}

DpParams DpParams::resolved(std::uint64_t cells, std::uint32_t parties) const {
  DpParams out = *this;
  if (T_auto) out.T = auto_dp_T(*this, parties, cells);
  out.validate(cells);
  return out;
}

std::uint32_t auto_dp_T(const DpParams& params, std::uint32_t parties, std::uint64_t cells) {
  if (parties == 0) throw Error("a federation needs at least one party");
  if (cells == 0) throw Error("dp-T auto: the model has no cells");
  // T = 2^round(log2(kAutoTScale · ε'/τ)): ε' the party's budget, 1/τ its share of the
  // rows (the rows themselves are not public), within [1, kAutoTMax] and m·L.
  const double epsilon_party = params.unit == DpUnit::Paper ? params.epsilon / parties : params.epsilon;
  const double power = std::floor(std::log2(kAutoTScale * epsilon_party / parties) + 0.5);
  const std::uint64_t T = power <= 0 ? 1 : power >= 31 ? kAutoTMax : std::uint64_t{1} << static_cast<int>(power);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::min<std::uint64_t>(T, kAutoTMax), cells));
}

double Rational::to_double() const {
  return static_cast<double>(static_cast<long double>(num) / static_cast<long double>(den));
}

Rational exact_rational(double x) {
  if (!(std::isfinite(x) && x > 0)) throw Error(fmt::format("{} is not a positive finite number", x));
  int e2 = 0;
  const double f = std::frexp(x, &e2);  // x = f·2^e2, f in [0.5, 1)
  auto mant = static_cast<std::uint64_t>(std::ldexp(f, 53));  // exact: 53 significant bits
  int e = e2 - 53;
  while ((mant & 1) == 0) {
    mant >>= 1;
    ++e;
  }
  if (e >= 0) {
    if (e + std::bit_width(mant) > 126) throw Error(fmt::format("{} is too large", x));
    return {static_cast<u128>(mant) << e, 1};
  }
  if (-e > 126) throw Error(fmt::format("{} is too small", x));
  return {mant, u128{1} << (-e)};
}

DiscreteLaplace::DiscreteLaplace(Rational scale) : scale_(reduced(scale.num, scale.den)) {
  if (scale_.num == 0 || scale_.den == 0) throw Error("discrete Laplace: the scale must be positive");
  if (scale_.num >= kMaxNumerator || scale_.to_double() >= kMaxScale)
    throw Error(fmt::format("discrete Laplace: scale {} is too large for exact sampling",
                            scale_.to_double()));
}

std::int64_t DiscreteLaplace::sample(SecureRng& rng) const {
  // CKS 2020, Algorithm 2, with t = num and s = den (scale t/s).
  const u128 t = scale_.num, s = scale_.den;
  const u128 q = t / s, r = t % s;
  for (;;) {
    const u128 u = rng.uniform_below_u128(t);
    if (!rng.bernoulli_exp_neg(u, t)) continue;
    std::uint64_t v = 0;
    while (rng.bernoulli_exp_neg(1, 1)) {
      // P[v ≥ 4096] = e^-4096: never; the bound keeps q·v inside int64 (q < 2^50).
      if (++v >= 4096) throw Error("discrete Laplace: impossible geometric run (RNG failure?)");
    }
    // Y = ⌊(U + t·V)/s⌋ = q·V + ⌊(U + r·V)/s⌋, without forming t·V.
    const u128 y = q * v + (u + r * v) / s;
    const bool negative = rng.uniform_below(2) == 1;
    if (negative && y == 0) continue;
    const auto magnitude = static_cast<std::int64_t>(y);
    return negative ? -magnitude : magnitude;
  }
}

double DiscreteLaplace::pmf(std::int64_t k) const {
  const double q = std::exp(-1.0 / scale_.to_double());
  return (1.0 - q) / (1.0 + q) * std::pow(q, static_cast<double>(k < 0 ? -k : k));
}

double DiscreteLaplace::cdf(std::int64_t k) const {
  const double q = std::exp(-1.0 / scale_.to_double());
  if (k < 0) return std::pow(q, static_cast<double>(-k)) / (1.0 + q);
  return 1.0 - std::pow(q, static_cast<double>(k) + 1.0) / (1.0 + q);
}

DpMechanism::DpMechanism(const DpParams& p, std::uint32_t tau) : params(p), parties(tau) {
  params.validate();
  if (tau == 0) throw Error("a federation needs at least one party");
  if (params.T == 0) throw Error("dp-T auto: T is fixed once m and the classes are known (DpParams::resolved)");
  // Under the record unit each party spends the whole ε (parallel composition).
  const std::uint32_t split = params.unit == DpUnit::Paper ? tau : 1;
  epsilon_party = params.epsilon / split;
  const double denominator = params.exponent == DpExponent::Paper ? 4.0 : 2.0;
  exponent_coefficient = epsilon_party / (denominator * params.T);
  // b = 2T/ε' = 2Tτ/ε exactly: ε = num/den, so b = 2Tτ·den/num.
  const Rational eps = exact_rational(params.epsilon);
  const u128 two_t_tau = u128{2} * params.T * split;
  if (eps.den > kMaxNumerator / two_t_tau)
    throw Error(fmt::format("dp: epsilon = {} with T = {} and {} parties gives a noise scale "
                            "that cannot be represented exactly",
                            params.epsilon, params.T, tau));
  noise_scale = reduced(two_t_tau * eps.den, eps.num);
  DiscreteLaplace check(noise_scale);  // throws when the scale is out of range
}

double DpMechanism::selection_epsilon() const {
  return params.exponent == DpExponent::Paper ? 2.0 * exponent_coefficient : exponent_coefficient;
}

double DpMechanism::noise_epsilon() const {
  return static_cast<double>(static_cast<long double>(noise_scale.den) /
                             static_cast<long double>(noise_scale.num));
}

PrivacyAccount account(const DpMechanism& mech) {
  PrivacyAccount a;
  a.T = mech.params.T;
  a.parties = mech.parties;
  a.per_pick = mech.selection_epsilon() + mech.noise_epsilon();
  a.per_party = a.per_pick * a.T;
  a.total = mech.params.unit == DpUnit::Paper ? a.per_party * a.parties : a.per_party;
  return a;
}

std::vector<std::uint32_t> gumbel_top_t(const std::uint32_t* counts, std::size_t n, double a,
                                        std::uint32_t T, SecureRng& rng) {
  FLYNN_ASSERT(T >= 1 && T <= n);
  std::vector<double> key(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Standard Gumbel: −log(−log U), U in the open interval (0, 1).
    key[i] = a * static_cast<double>(counts[i]) - std::log(-std::log(rng.uniform_open01()));
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  // Larger key first; equal keys (probability ~0) by index, so the order is a strict one.
  const auto before = [&key](std::uint32_t x, std::uint32_t y) {
    return key[x] > key[y] || (key[x] == key[y] && x < y);
  };
  if (T < n) std::nth_element(order.begin(), order.begin() + T, order.end(), before);
  order.resize(T);
  std::sort(order.begin(), order.end(), before);
  return order;
}

std::vector<DpEntry> privatize(const std::uint32_t* counts, std::size_t n,
                               const DpMechanism& mech, SecureRng& rng) {
  mech.params.validate(n);
  const std::vector<std::uint32_t> picks =
      gumbel_top_t(counts, n, mech.exponent_coefficient, mech.params.T, rng);
  const DiscreteLaplace noise(mech.noise_scale);
  std::vector<DpEntry> out;
  out.reserve(picks.size());
  for (std::uint32_t i : picks) {
    const std::int64_t v = static_cast<std::int64_t>(counts[i]) + noise.sample(rng);
    const std::int64_t clamped =
        std::clamp<std::int64_t>(v, 0, std::numeric_limits<std::uint32_t>::max());
    out.push_back({i, static_cast<std::uint32_t>(clamped)});
  }
  std::sort(out.begin(), out.end(),
            [](const DpEntry& x, const DpEntry& y) { return x.index < y.index; });
  return out;
}

std::vector<DpEntry> privatize(const ClassCounts& counts, const DpMechanism& mech,
                               SecureRng& rng) {
  return privatize(counts.values().data(), counts.values().size(), mech, rng);
}

std::vector<std::uint32_t> sum_releases(const std::vector<std::vector<DpEntry>>& releases,
                                        std::size_t n) {
  std::vector<std::uint64_t> sum(n, 0);
  for (std::size_t p = 0; p < releases.size(); ++p) {
    for (const DpEntry& e : releases[p]) {
      if (e.index >= n)
        throw Error(fmt::format("party {}'s release names entry {}, but there are only {}", p,
                                e.index, n));
      sum[e.index] += e.value;
    }
  }
  std::vector<std::uint32_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (sum[i] > std::numeric_limits<std::uint32_t>::max())
      throw Error(fmt::format("aggregated private count of entry {} exceeds 2^32 - 1", i));
    out[i] = static_cast<std::uint32_t>(sum[i]);
  }
  return out;
}

}  // namespace flynn::federated
