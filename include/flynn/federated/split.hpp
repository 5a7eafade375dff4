#pragma once
// Splitting one labelled data set among τ simulated parties: the IID and non-IID
// partitions used by `flynn federated simulate`, the studies and the parity tests.
//
// Every split is a deterministic function of (labels, τ, spec, seed): all randomness comes
// from SeededRng streams (seed, RngStream::Split, index), so a split is reproducible on
// every platform. Every row goes to exactly one party; each party's rows are returned in
// ascending row order. Parties may be empty (e.g. Dirichlet skew, or sizes with a zero
// weight): FlyNNFL must handle that, and the parity tests check it does.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flynn::federated {

struct SplitSpec {
  enum class Kind {
    /// Rows shuffled, then dealt into τ contiguous chunks of ⌊n/τ⌋ or ⌈n/τ⌉ rows ("evenly
    /// split", the scaling study's setting).
    Iid,
    /// Each party holds whole classes only. τ ≤ L: party t holds the classes l with
    /// l mod τ = t (a single class when τ = L). τ > L: class l is dealt evenly among the
    /// parties t with t mod L = l, so every party still holds a single class.
    ByClass,
    /// Label skew (Hsu, Qi & Brown 2019): for each class, party proportions
    /// p ~ Dirichlet(α, …, α) and the class's shuffled rows cut at round(n_l·cumsum(p)).
    /// Small α gives strongly skewed, often empty, parties.
    Dirichlet,
    /// Rows shuffled and cut into τ chunks proportional to the given non-negative weights
    /// (largest-remainder rounding); a zero weight gives an empty party.
    Sizes,
  };
  Kind kind = Kind::Iid;
  double alpha = 1.0;           ///< Dirichlet concentration α > 0
  std::vector<double> weights;  ///< Sizes: one weight per party

  /// Parses "iid", "by-class", "dirichlet:ALPHA" (e.g. dirichlet:0.5) or
  /// "sizes:W1,W2,…"; throws flynn::Error naming the problem.
  static SplitSpec parse(const std::string& text);
  /// The canonical spelling ("dirichlet:0.5").
  std::string describe() const;
};

/// Row indices of each of `parties` parties. `labels` are class ids < n_classes.
/// Throws flynn::Error when parties < 1, or for Sizes when the weight count differs from
/// `parties` or all weights are zero.
std::vector<std::vector<std::size_t>> split_rows(const std::vector<std::uint32_t>& labels,
                                                 std::size_t n_classes, int parties,
                                                 const SplitSpec& spec, std::uint64_t seed);

}  // namespace flynn::federated
