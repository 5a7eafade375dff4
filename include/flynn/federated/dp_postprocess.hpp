#pragma once
// Post-processing of a DP release (docs/guide/federated.md, "Post-processing the release").
//
// What it acts on: the aggregated released counts, i.e. the sum over parties of each
// party's T noisy entries max(c + η, 0) (zeros elsewhere), class-major L×m as ClassCounts
// stores them, before they become the model's filters γ^c. Every function here reads only
// that sum and public parameters (the mechanism's noise scale b, T, τ, the decay γ, m, L),
// never the data, so by the post-processing property of differential privacy the model
// stays exactly as private as the release, (ε, 0)-DP with the same ε: it is free.
//
// Why the release needs it. A released value v = max(c + η, 0) carries noise of scale
// b = 2T/ε' (tens to thousands), while the filters saturate within a few dozen counts
// (0.9^50 ≈ 0.005). Under the paper's model an entry whose true count is 0 but whose noise
// came out at +b is as "familiar" as the most frequent unit of the class, and an entry
// within the noise of zero is as familiar as one far above it. The modes:
//   * None: the paper's model (the sum as released).
//   * Threshold: re-threshold the released filter: values below the noise scale b are set
//     to 0 ("never seen"). An entry with true count 0 that was picked survives with
//     probability ≈ e^−1/2 instead of ≈ 1/2; entries far above the noise are untouched.
//   * NoiseUnits: express each value in units of the noise before it becomes a filter:
//     v' = round(v / (b·ln(1/γ))), capped at v, so γ^v' ≈ e^(−v/b). e^(−v/b) is (twice)
//     the probability that an entry with true count 0 releases a value ≥ v: the filter
//     becomes that p-value, and its familiarity 1 − γ^v' the confidence that the count is
//     really non-zero. Values already far above the noise keep saturating; when the noise
//     is below the decay scale (b·ln(1/γ) ≤ 1) nothing changes. Needs 0 < γ < 1 (γ = 0 is a
//     binary filter: identity).
//   * ClassBalance: re-normalise per class: every class's total familiarity
//     Σ_i (1 − γ^{c_l[i]}) is brought down to the smallest non-zero one (γ = 0: every class
//     keeps as many non-zero entries as the class with the fewest, its largest ones), so
//     a class that by chance got more or larger released entries does not attract every
//     test point.
//   * NoiseUnitsClassBalance: NoiseUnits, then ClassBalance on the rescaled counts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/federated/dp.hpp"

namespace flynn::federated {

/// Post-processes `counts` (the aggregated release, class-major: `classes` runs of `cells`)
/// in place, each block of FlyConfig::cell_blocks on its own at its own decay (the units at
/// the model's γ; with second-order filters the pair cells at Defaults::pair_gamma, balanced
/// among the classes' pair cells). `noise_scale` is the mechanism's per-party scale b
/// (DpMechanism::noise_scale). Deterministic: every party computes the same model from the
/// same sum. Throws flynn::Error when counts.size() != classes·cells, a block lies outside
/// [0, cells) or a block's γ is outside [0, 1).
void postprocess_release(std::vector<std::uint32_t>& counts, std::uint32_t cells, std::size_t classes,
                         const std::vector<FlyConfig::CellBlock>& blocks, const Rational& noise_scale,
                         DpPostprocess how);

/// The same with one block, all m cells of each class at decay `gamma` (a model without
/// pairs). Throws like the above.
void postprocess_release(std::vector<std::uint32_t>& counts, std::uint32_t m, std::size_t classes,
                         const Rational& noise_scale, double gamma, DpPostprocess how);

}  // namespace flynn::federated
