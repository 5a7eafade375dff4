#pragma once
// Hyper-parameters of FlyNN: what a user gives (HyperParams, possibly as the reference's
// ratios) and what a model is built from (FlyConfig, concrete and validated).
//
// This header is the single source of parameter names, defaults and allowed ranges; the
// CLI, the model file and the docs take them from here.
#include <cstdint>
#include <optional>
#include <string>

namespace flynn {

/// Row preprocessing applied before FlyHash.
enum class Preprocess : std::uint8_t {
  None = 0,       ///< rows are hashed as given
  Normalize = 1,  ///< rows are scaled to unit L2 norm (zero rows stay zero); the default,
                  ///< as in the reference implementation
  Densify = 2,    ///< L2 normalisation, then the randomised Hadamard transform: random ±1
                  ///< signs (from the seed), zero-padding to the next power of two d',
                  ///< fast Walsh–Hadamard transform, scaling by 1/√d'
};

/// "none", "normalize" (also "l2"), "densify"; throws flynn::Error otherwise.
Preprocess parse_preprocess(const std::string& name);
const char* preprocess_name(Preprocess p);

/// A concrete, validated FlyNN configuration: everything needed to rebuild the lifting
/// matrix and interpret counts. Two models can be merged (and federated parties agree)
/// exactly when their FlyConfigs are equal.
struct FlyConfig {
  std::uint32_t input_dim = 0;   ///< d: features per input row
  std::uint32_t m = 0;           ///< FlyHash dimensionality (output units)
  std::uint32_t s = 0;           ///< ones per row of the lifting matrix (fan-in)
  std::uint32_t rho = 0;         ///< winners per hash (ρ)
  double gamma = 0.0;            ///< filter decay γ in [0, 1); 0 = binary filters
  std::uint64_t seed = 0;        ///< seed of the lifting matrix (and densify signs)
  Preprocess preprocess = Preprocess::Normalize;

  /// Columns of the lifting matrix: d, or the next power of two ≥ d with Densify.
  std::uint32_t hash_input_dim() const;

  /// Throws flynn::Error naming the first invalid field and its allowed range. With
  /// n_classes = 0 it checks the fields only, so any valid model can be constructed and
  /// loaded on any machine; n_classes > 0 adds check_memory(n_classes), for callers about
  /// to train or predict with that many classes.
  void validate(std::size_t n_classes = 0) const;

  /// Throws flynn::Error when model_memory_bytes(*this, n_classes) exceeds half of this
  /// machine's physical memory. Run by the operations that allocate that memory: FlyHasher
  /// construction (n_classes = 0: the lifting matrix alone) and FlyNN's training and
  /// prediction; not by constructing or loading a model.
  void check_memory(std::size_t n_classes) const;

  /// "m=…, s=…, rho=…, gamma=…, seed=…, preprocess=…, d=…".
  std::string describe() const;

  /// The first field in which two configs differ ("m", "seed", …), or "" when equal.
  std::string first_difference(const FlyConfig& other) const;
  bool operator==(const FlyConfig& other) const { return first_difference(other).empty(); }
  bool operator!=(const FlyConfig& other) const { return !(*this == other); }
};

/// flynn's defaults, chosen from a 10-fold CV study on the 60 OpenML sets against tuned
/// exact kNN (docs/defaults.md, scripts/defaults_study.py). Caps keep wide data cheap:
/// hashing costs n·m·s additions.
struct Defaults {
  static constexpr double expansion_factor = 256.0;    ///< m = 256·d, clamped to …
  static constexpr std::uint32_t min_m = 4096;         ///< … at least 4096 units …
  static constexpr std::uint32_t max_m = 131072;       ///< … and at most 2^17
  static constexpr double connection_sparsity = 0.3;   ///< s = max(2, ⌊0.3·d⌋), …
  static constexpr std::uint32_t max_s = 128;          ///< … at most 128
  static constexpr std::uint32_t rho = 64;             ///< ρ (capped below m)
  static constexpr double gamma = 0.8;                 ///< γ
  static constexpr std::uint64_t seed = 5489;          ///< the reference's seed
  static constexpr Preprocess preprocess = Preprocess::Normalize;
};

/// Hyper-parameters as a user gives them. Each of m, s and ρ is given directly, as the
/// reference's ratio, or left to the default; giving both forms of one is an error.
///   m = ⌊expansion_factor · d⌋
///   s = max(2, ⌊connection_sparsity · d⌋)
///   ρ = max(2, ⌊wta_ratio · m⌋), or ρ = wta_nnz
/// Floors are taken after adding 1e-9, so that e.g. 0.105·784 and 8/m·m land on the
/// integers they denote (the reference's int() turns ρ = 8 into 7 for Fashion-MNIST).
struct HyperParams {
  std::optional<std::uint64_t> m;
  std::optional<double> expansion_factor;
  std::optional<std::uint64_t> s;
  std::optional<double> connection_sparsity;
  std::optional<std::uint64_t> rho;
  std::optional<double> wta_ratio;
  std::optional<std::uint64_t> wta_nnz;   ///< the reference's name for ρ
  std::optional<double> gamma;
  std::optional<std::uint64_t> seed;
  std::optional<Preprocess> preprocess;

  /// The concrete configuration for d-dimensional inputs; validated (throws flynn::Error
  /// naming the parameter and its allowed range).
  FlyConfig resolve(std::uint32_t input_dim, std::size_t n_classes = 0) const;
};

/// Bytes a model with this config and class count needs in memory (counts, score table,
/// lifting matrix); what FlyConfig::check_memory compares with physical memory.
std::uint64_t model_memory_bytes(const FlyConfig& config, std::size_t n_classes);

}  // namespace flynn
