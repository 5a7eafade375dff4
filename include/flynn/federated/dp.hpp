#pragma once
// The differential-privacy module of FlyNNFL (Algorithm 2 of Ram & Sinha, AAAI 2022; spec
// section 5): what one party releases instead of its counts.
//
// Input: the party's concatenated counts c ∈ ℕ^{m·L} (class-major, as ClassCounts stores
// them), the per-party budget ε' = ε/τ and the number of released entries T.
//   1. T distinct indices are picked by the exponential mechanism: sequentially, without
//      replacement, index i with probability ∝ exp(a·c[i]), a = ε'/(4T) (the paper's
//      exponent; DpExponent::Reference uses the reference code's a = ε'/(2T)).
//   2. Each picked count is released as c̃[i] = max(c[i] + η, 0), η ~ discrete
//      Laplace with scale b = 2T/ε' (P[η = k] ∝ exp(−|k|/b), k ∈ ℤ).
//   3. Every other entry is 0 (filter value γ^0 = 1: "never seen"); only the T
//      (index, value) pairs leave the party.
// Theorem 6: each pick costs ε'/(2T) for the selection and ε'/(2T) for the value, so a
// party spends T·ε'/T = ε' and the federation τ·ε' = ε (sequential composition). A
// training row changes any single count by at most 1, which is the sensitivity both
// steps use.
//
// Selection, efficiently and exactly in distribution: the Gumbel-top-T trick. Adding an
// independent standard Gumbel variable G_i = −log(−log U_i) to each log-weight a·c[i] and
// keeping the T largest keys draws the same ordered sample as T sequential draws without
// replacement (Vieira 2014; Kool, van Hoof & Welling 2019). Cost O(m·L) to draw the keys
// and partition (nth_element), O(T log T) to order the winners: O(m·L + T log T) instead of
// the sequential O(T·m·L). Keys are log-weights, never exp(a·c), so large counts cannot
// overflow (a pitfall of direct implementations). The Gumbel variables use 53-bit
// uniforms from SecureRng; this is the only floating point in the mechanism.
//
// Noise, floating-point-safe: textbook Laplace sampling (−b·sign(u)·log(1−2|u|) in
// doubles) leaks through the uneven spacing of floating-point numbers (Mironov, CCS
// 2012). Counts are integers with sensitivity 1, so flynn adds DISCRETE Laplace noise,
// sampled exactly with integer arithmetic only (Canonne, Kamath & Steinke 2020,
// Algorithm 2) from SecureRng's exact Bernoulli trials. The scale b = 2Tτ/ε is taken as
// an exact rational: ε is a double, i.e. exactly M·2^e with an odd integer M, so
// b = (2Tτ·2^−e)/M exactly (or 2Tτ/(M·2^e) for e ≥ 0), held in 128-bit integers. The
// discrete Laplace mechanism with scale b is exactly (1/b)-DP for sensitivity 1, the same
// guarantee as the continuous one, and its output is already an integer count.
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/class_counts.hpp"
#include "flynn/federated/secure_random.hpp"

namespace flynn::federated {

/// Which exponent the exponential mechanism uses (see docs/guide/federated.md).
enum class DpExponent : std::uint8_t {
  /// a = ε'/(4T): the paper's mechanism, (ε'/(2T))-DP per pick by the general
  /// exponential-mechanism theorem (privacy 2·Δ·a with sensitivity Δ = 1). The default.
  Paper = 0,
  /// a = ε'/(2T): the reference code's weights (exp(c / (2Tτ/ε))). Also (ε'/(2T))-DP per
  /// pick, but only through the monotone-utility form of the theorem (privacy Δ·a),
  /// valid because adding a row can only increase counts; the paper's proof does not
  /// use that argument. It selects large counts more sharply.
  Reference = 1,
};

/// "paper" or "reference"; throws flynn::Error otherwise.
DpExponent parse_dp_exponent(const std::string& name);
const char* dp_exponent_name(DpExponent e);

/// The privacy unit and how ε is composed across parties (docs/guide/federated.md, "Privacy
/// unit"). In both, the protected unit is one training row (record-level DP: the
/// released model changes little whether or not any single row is in some party's data).
enum class DpUnit : std::uint8_t {
  /// The paper's Theorem 6: each party spends ε' = ε/τ and the federation τ·ε' = ε by
  /// sequential composition — valid even if one record were held by every party. The
  /// default, for reproduction.
  Paper = 0,
  /// Each record lives at exactly one party (disjoint data): by parallel composition the
  /// federation is ε-DP when every party spends the full ε, so each party adds τ× less
  /// noise than under Paper.
  Record = 1,
};

/// "paper" or "record"; throws flynn::Error otherwise.
DpUnit parse_dp_unit(const std::string& name);
const char* dp_unit_name(DpUnit u);

/// How the aggregated release is post-processed before it becomes the model
/// (dp_postprocess.hpp says what each mode does and why it is free under DP).
enum class DpPostprocess : std::uint8_t {
  None = 0,          ///< the paper's model: the released sum as is
  Threshold = 1,     ///< values below the noise scale b become 0
  NoiseUnits = 2,    ///< values rescaled to units of the noise: γ^v' ≈ e^(−v/b)
  ClassBalance = 3,  ///< every class's total familiarity brought to the smallest non-zero one
  NoiseUnitsClassBalance = 4,  ///< NoiseUnits, then ClassBalance on the rescaled counts
};

/// "none", "threshold", "noise-units", "class-balance" or "noise-units+class-balance";
/// throws flynn::Error naming the valid choices otherwise.
DpPostprocess parse_dp_postprocess(const std::string& name);
/// The name parse_dp_postprocess accepts for `p`.
const char* dp_postprocess_name(DpPostprocess p);
/// Every mode, in enum order (for studies that compare them).
std::vector<DpPostprocess> all_dp_postprocesses();

/// What a user asks for.
struct DpParams {
  double epsilon = 1.0;   ///< total budget ε of the whole federation (> 0)
  std::uint32_t T = 0;    ///< entries each party releases (1 ≤ T ≤ m·L)
  DpExponent exponent = DpExponent::Paper;
  DpUnit unit = DpUnit::Paper;  ///< how ε is split among the parties (see DpUnit)
  /// What every party does to the aggregated release before it becomes the model (free:
  /// post-processing). None, the paper's model, by default.
  DpPostprocess postprocess = DpPostprocess::None;
  /// `--dp-T auto`: T is auto_dp_T's, from public quantities only; it is fixed by
  /// resolved() once the federation's m·L is known (T stays 0 until then).
  bool T_auto = false;

  /// Throws flynn::Error naming the parameter when ε is not in [1e-6, 1e6] or T = 0
  /// (unless T_auto and not yet resolved), or T > m·L (when `cells` > 0: the party's m·L
  /// entries).
  void validate(std::uint64_t cells = 0) const;
  /// These parameters with T fixed: under T_auto, T = auto_dp_T(*this, parties, cells)
  /// (T_auto stays set, so reports can say where T came from); otherwise unchanged. The
  /// one place `--dp-T auto` becomes a number. Throws as validate(cells) does.
  DpParams resolved(std::uint64_t cells, std::uint32_t parties) const;
};

/// The rule behind `--dp-T auto` (docs/guide/privacy.md, "Choosing T"): the T that gave
/// (near) the best balanced accuracy at each ε on the selection half of the OpenML sets
/// (research/dp-utility/README.md), from quantities every party knows identically, never
/// from rows: the per-party budget ε' (ε/τ under DpUnit::Paper, ε under DpUnit::Record),
/// the number of parties τ and the m·L cells a party holds (T ≤ cells). Rows per party
/// are not among them: under DP the federation does not share them.
///   T = 2^round(log2(kAutoTScale · ε'/τ)), within [1, kAutoTMax] and at most m·L
/// (ε'/τ: the party's budget times its share 1/τ of the rows, as if the parties held equal
/// shares; under the paper's unit ε/τ²).
std::uint32_t auto_dp_T(const DpParams& params, std::uint32_t parties, std::uint64_t cells);
/// The rule's scale and cap (research/dp-utility/README.md, "The rule for T").
inline constexpr double kAutoTScale = 8.0;
inline constexpr std::uint32_t kAutoTMax = 1024;

/// An exact positive rational num/den (128-bit).
struct Rational {
  u128 num = 0;
  u128 den = 1;
  double to_double() const;
};

/// The exact rational value of a finite positive double (reduced).
Rational exact_rational(double x);

/// Exact discrete Laplace sampler: P[X = k] = (1 − q)/(1 + q) · q^|k| with q = exp(−1/b),
/// for a rational scale b. CKS 2020 Algorithm 2 with t/s = b: integer arithmetic and exact
/// Bernoulli trials only.
class DiscreteLaplace {
 public:
  /// Scale b = num/den > 0. Throws flynn::Error when b is too large for exact
  /// arithmetic (b ≥ 2^50, or num ≥ 2^121).
  explicit DiscreteLaplace(Rational scale);
  const Rational& scale() const { return scale_; }
  /// One sample.
  std::int64_t sample(SecureRng& rng) const;
  /// P[X = k] (for tests).
  double pmf(std::int64_t k) const;
  /// P[X ≤ k] (for tests).
  double cdf(std::int64_t k) const;

 private:
  Rational scale_;
};

/// The concrete mechanism one party runs: exponent, noise scale and the privacy it
/// spends, derived from DpParams and the number of parties τ.
struct DpMechanism {
  DpParams params;
  std::uint32_t parties = 1;        ///< τ
  double epsilon_party = 0.0;       ///< ε' = ε/τ (DpUnit::Paper) or ε (DpUnit::Record)
  double exponent_coefficient = 0;  ///< a: weights ∝ exp(a·c)
  Rational noise_scale;             ///< b = 2T/ε' (= 2Tτ/ε under Paper), exactly

  /// Validates the parameters (see DpParams::validate); T must be resolved
  /// (DpParams::resolved) when T_auto is set.
  DpMechanism(const DpParams& params, std::uint32_t parties);

  /// Privacy spent by one pick's selection: 2·a for the paper's exponent (general
  /// exponential mechanism, sensitivity 1), a for the reference's (monotone form).
  double selection_epsilon() const;
  /// Privacy spent by one pick's noisy value: 1/b (sensitivity 1), from the exact scale.
  double noise_epsilon() const;
};

/// Theorem 6's accounting of a run, derived from the mechanism's actual parameters.
struct PrivacyAccount {
  double per_pick = 0.0;   ///< selection_epsilon + noise_epsilon
  double per_party = 0.0;  ///< T · per_pick   (= ε')
  /// ε of the federation: τ · per_party (= ε) under DpUnit::Paper (sequential
  /// composition); per_party (= ε) under DpUnit::Record (parallel composition).
  double total = 0.0;
  std::uint32_t T = 0;
  std::uint32_t parties = 0;
};
PrivacyAccount account(const DpMechanism& mechanism);

/// One released entry: index into the class-major L×m counts, and its noisy value.
struct DpEntry {
  std::uint32_t index = 0;
  std::uint32_t value = 0;
  bool operator==(const DpEntry&) const = default;
};

/// Gumbel-top-T: T distinct indices of `counts` drawn as T sequential draws without
/// replacement with probabilities ∝ exp(a·counts[i]), returned in draw order.
/// O(n + T log T). Requires 1 ≤ T ≤ n.
std::vector<std::uint32_t> gumbel_top_t(const std::uint32_t* counts, std::size_t n, double a,
                                        std::uint32_t T, SecureRng& rng);

/// The party's release: T entries sorted by index (values may be 0 after clamping).
/// Values are max(c + η, 0), saturated at 2^32 − 1.
std::vector<DpEntry> privatize(const ClassCounts& counts, const DpMechanism& mechanism,
                               SecureRng& rng);
std::vector<DpEntry> privatize(const std::uint32_t* counts, std::size_t n,
                               const DpMechanism& mechanism, SecureRng& rng);

/// Sums releases into dense class-major counts of n entries (what every party computes
/// after the all-gather); throws flynn::Error on an out-of-range index or if a sum would
/// exceed 2^32 − 1.
std::vector<std::uint32_t> sum_releases(const std::vector<std::vector<DpEntry>>& releases,
                                        std::size_t n);

}  // namespace flynn::federated
