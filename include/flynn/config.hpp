#pragma once
// Hyper-parameters of FlyNN: what a user gives (HyperParams, possibly as the reference's
// ratios) and what a model is built from (FlyConfig, concrete and validated).
//
// This header is the single source of parameter names, defaults and allowed ranges; the
// CLI, the model file and the docs take them from here.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flynn/class_weight.hpp"
#include "flynn/value_transform.hpp"

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

/// How a class's filter values over a row's ρ winners become its score (scoring.hpp).
///   Absolute  the paper's: the sum of the winners' filter values w_l[i] = γ^{c_l[i]}.
///   Relative  that sum with each class's values divided by the class's mean filter value
///             over all m units. A class of many rows has high counts everywhere, also at
///             units none of its rows resembles the query at, so its absolute score is low
///             (it looks near) for every query; with many winners per hash that background
///             outweighs the evidence and the largest class wins. Dividing by the class's
///             mean removes the background and keeps the evidence (docs/design/defaults.md,
///             "Relative filter scoring"). A function of the counts alone: merge, forget, federation
///             and DP (post-processing of the released counts) are unchanged.
enum class FilterScoring : std::uint8_t {
  Absolute = 0,
  Relative = 1,
};

/// "absolute", "relative"; throws flynn::Error otherwise.
FilterScoring parse_filter_scoring(const std::string& name);
const char* filter_scoring_name(FilterScoring s);

/// A method variant beyond the paper: how a row is encoded before FlyHash and how
/// the lifting matrix is weighted. Every variant keeps FlyNN's properties: training is one
/// pass of integer counting, the lifting matrix is rebuilt from the seed, results do not
/// depend on thread count. All fields zero/false is the paper's method ("paper"), whose
/// model files are byte-identical to those of flynn before variants existed.
///
/// Encoding of a raw row x (d features), in this order:
///   1. standardize: z_j = clamp((x_j − mean_j) / scale_j, ±kStandardClip), computed in
///      double and rounded to float; mean and scale come from the training rows
///      (FeatureStats, exact integer sums, stored in the model file).
///   2. thermometer = K ≥ 2: each z_j becomes K binary units [z_j > t_k], k = 1..K, with
///      t_k the standard normal quantile at k/(K+1) (a fixed grid: no data quantiles, so
///      nothing to agree on in a federation). Encoded width w = d·K; otherwise w = d.
///      anchors = K ≥ 2 (instead of thermometer): each z_j becomes K closeness units
///      round(kAnchorSteps·max(0, kAnchorReach − (z_j − t_k)²)), integers in [0, 64], on
///      the same grid t_k. A lifting row then sums s of them, so a unit's activation is
///      s·kAnchorSteps·kAnchorReach minus (kAnchorSteps times) the squared distance from
///      the row to a grid point in the unit's own few coordinates (clipped where a
///      coordinate is more than 4 standard deviations away), and the ρ winners are the
///      ρ grid points nearest the row: a locality-sensitive hash of where the row lies,
///      where FlyHash of the raw row sees only which features are largest (its winners
///      do not change when the row is scaled). Encoded width w = d·K.
///   3. quantize = Q ≥ 1 (without thermometer or anchors): z_j is rounded to the integer
///      round(z_j·Q), so every row takes the exact integer kernels.
///   4. signed_lifting: lifting row j still picks s distinct columns of the w encoded ones,
///      and gives each a sign ±1 from SeededRng stream (seed, LiftingSigns, j) (bit k of
///      the first 64-bit draw, then of further draws, gives the sign of the row's k-th
///      column in ascending order; 1 = −1). It is computed as an unsigned lifting over the
///      mirrored row [e, −e] (2w columns): column c with sign −1 becomes column w + c, so
///      the fast kernels run unchanged.
///   5. paper_half: the model is two FlyHashes side by side, summed into one filter. The
///      first ⌊m/2⌋ units (⌊ρ/2⌋ winners) hash the row encoded as in 1–4; the other
///      m − ⌊m/2⌋ units (ρ − ⌊ρ/2⌋ winners) hash the raw row exactly as the paper's method
///      does (with the config's preprocessing), from their own lifting matrix, seeded by
///      FlyConfig::paper_half_seed(). Each half takes its own winner-take-all, so a hash
///      still has ρ winners among m units and everything downstream (counts, filters,
///      federation, DP, merge/forget) is unchanged; a class's score is the sum of the two
///      halves' scores. The standardised half breaks the paper hash's shift invariance and
///      scale dominance; the raw half keeps what standardising columns destroys (rows
///      whose signal is their shape, e.g. hill-valley). docs/design/defaults.md has the study.
struct Variant {
  bool standardize = false;       ///< z-score features with training statistics
  bool signed_lifting = false;    ///< ±1 weights in the lifting rows
  std::uint32_t thermometer = 0;  ///< 0 = off; K in [2, 64]: K threshold units per feature
  std::uint32_t quantize = 0;     ///< 0 = off; Q in [1, 1024]: z rounded to multiples of 1/Q
  bool paper_half = false;        ///< half the units hash the raw row the paper's way (5.)
  std::uint32_t anchors = 0;      ///< 0 = off; K in [2, 64]: K anchor units per feature (2.)

  /// |z| is clipped at this many standard deviations, so an outlier cannot dominate every
  /// unit it feeds (and quantised values stay small enough for the int16 kernel).
  static constexpr double kStandardClip = 6.0;
  /// Anchor units (2.): squared distances are clipped at kAnchorReach (4 standard
  /// deviations) and scaled by kAnchorSteps before rounding, so every value is an integer
  /// in [0, 64] and anchor rows take the byte kernel.
  static constexpr double kAnchorReach = 16.0;
  static constexpr double kAnchorSteps = 4.0;

  /// True for the paper's method (nothing enabled).
  bool is_paper() const {
    return !standardize && !signed_lifting && !thermometer && !quantize && !paper_half &&
           !anchors;
  }
  /// The variant of the first half of a paper_half variant (paper_half cleared).
  Variant first_half() const {
    Variant v = *this;
    v.paper_half = false;
    return v;
  }
  /// Units per feature of the encoded row: thermometer or anchors K, else 1.
  std::uint32_t units_per_feature() const {
    return thermometer ? thermometer : anchors ? anchors : 1;
  }
  /// Throws flynn::Error naming the field: thermometer, anchors and quantize need
  /// standardize and exclude each other (anchors also exclude signed lifting, whose
  /// mirrored units would be the farthest grid points); paper_half needs some other part
  /// (its first half must differ from the paper's method); ranges as above.
  void validate() const;
  bool operator==(const Variant&) const = default;
};

/// Named variants accepted by --variant:
///   paper        the paper's method (FlyHash on L2-normalised rows)
///   sign         signed lifting only (no training statistics: works with DP)
///   z            standardize
///   zsign        standardize + signed lifting
///   zsign-q      standardize + signed lifting + quantize 16 (integer kernels)
///   thermo       standardize + thermometer 8
///   thermo-sign  standardize + thermometer 8 + signed lifting
///   anchor       standardize + anchors 8
///   anchor+paper anchor on half the units, the paper's hash on the other half
///   zsign-q+paper  zsign-q on half the units, the paper's hash on the other half
///   zsign+paper    zsign on half the units, the paper's hash on the other half
/// It also reads the description variant_name gives a combination without a name
/// ("standardize+thermometer=4"), so every valid variant has a text that parses back to it.
/// Throws flynn::Error listing the names otherwise.
Variant parse_variant(const std::string& name);
/// The name parse_variant accepts for `v`, or a description such as
/// "standardize+thermometer=4" for combinations without a name.
std::string variant_name(const Variant& v);
/// The names parse_variant accepts, comma-separated (for help and error messages).
const char* variant_names();

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
  Variant variant;               ///< the method variant (default: the paper's)
  /// How much each class's rows weigh when the model scores (class_weight.hpp; default
  /// none). Not used by hashing or counting: counts stay exact row sums.
  ClassWeight class_weight;
  /// How filter values become class scores (default here: the paper's; HyperParams
  /// resolves Defaults::filter_scoring). Not used by hashing or counting.
  FilterScoring filter_scoring = FilterScoring::Absolute;
  /// Second-order filters (pair_codes.hpp; 0 = off): each class also counts pairs of its
  /// rows' winners, each winner paired with the next `pairs` in a fixed order, in
  /// pair_cells() cells after the m units. Counting stays one pass of integer sums.
  std::uint32_t pairs = 0;
  /// Paper-half variants with a standardising first half (0 = off: the second half always
  /// hashes the raw row): the second half hashes the raw row only when the training
  /// statistics spread the raw rows' energy over at least this many columns
  /// (raw_energy_columns in feature_stats.hpp); below that a few columns (an amount in
  /// dollars beside one-hot columns) fix the direction of every L2-normalised raw row, and
  /// the second half hashes the row as the first half does, from its own seed. Decided when
  /// the statistics are set (paper_half_hashes_raw_row), so every party of a federation,
  /// each fold of a CV and a loaded model decide alike. docs/design/defaults.md, "The paper half".
  std::uint32_t paper_half_min_columns = 0;
  /// A fixed transform of each feature value before the standardised encoding reads it and
  /// before its statistics are summed (value_transform.hpp; None = off). Only for variants
  /// that standardise; a paper half still hashes the raw row. docs/design/defaults.md, "Value
  /// transforms".
  ValueTransform value_transform = ValueTransform::None;

  /// Cells of the pair block: Defaults::pair_cells_per_unit · m with pairs, else 0.
  std::uint32_t pair_cells() const;
  /// A run [first, last) of each class's count cells with the filter decay its values take.
  struct CellBlock {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    double gamma = 0.0;
  };
  /// The blocks of cells(): the m units at `gamma` (the model's γ), then, with pairs, the
  /// pair block at Defaults::pair_gamma. The one definition of which decay each cell takes,
  /// read by the scoring table and by the DP release's post-processing.
  std::vector<CellBlock> cell_blocks(double gamma) const;
  /// Count cells per class: m units, then the pair block.
  std::uint32_t cells() const { return m + pair_cells(); }
  /// Codes each row adds to its class: ρ winners and pairs · ρ distinct pair cells.
  std::uint32_t codes_per_row() const { return rho * (1 + pairs); }

  /// Width w of an encoded row (Variant): d·thermometer, d·anchors, or d. The lifting rows choose
  /// their s distinct columns among these.
  std::uint32_t encoded_dim() const;
  /// Columns of the lifting matrix: d, or the next power of two ≥ d with Densify; with a
  /// variant, w (2w with signed lifting: the mirrored row).
  std::uint32_t hash_input_dim() const;

  /// For a paper_half variant, the configs of its two halves: {m/2 units, ρ/2 winners, the
  /// first-half variant, this seed} and {m − m/2 units, ρ − ρ/2 winners, the paper's
  /// method, paper_half_seed()}; d, s, γ and preprocess are shared, pairs and
  /// paper_half_min_columns are not (a half only hashes: the pair cells come from the
  /// joined winners). With `raw_second_half` false the second half takes the first half's
  /// variant instead of the paper's (paper_half_min_columns). The value transform goes
  /// with the standardised encoding: the first half's, and the second half's only when it
  /// does not hash the raw row. Throws flynn::Error for other variants.
  std::array<FlyConfig, 2> halves(bool raw_second_half = true) const;
  /// The lifting-matrix seed of the second (paper) half:
  /// SeededRng::keyed(seed, PaperHalfSeed, 0).next_u64(), so its columns do not repeat
  /// the first half's.
  std::uint64_t paper_half_seed() const;

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

  /// "d=…, m=…, s=…, rho=…, gamma=…, seed=…, preprocess=…" (and ", variant=…" unless
  /// paper), from the table of settings (settings_table.hpp: config_fields).
  std::string describe() const;

  /// The first field in which two configs differ ("d (input dimension)", "m", "seed", …,
  /// config_fields' names), or "" when equal.
  std::string first_difference(const FlyConfig& other) const;
  bool operator==(const FlyConfig& other) const { return first_difference(other).empty(); }
  bool operator!=(const FlyConfig& other) const { return !(*this == other); }
};

/// flynn's defaults, chosen from a 10-fold CV study on the 60 OpenML sets against tuned
/// exact kNN (docs/design/defaults.md; research/defaults/). Caps keep wide data cheap:
/// hashing costs n·m·s additions.
struct Defaults {
  static constexpr double expansion_factor = 256.0;    ///< m = 256·d, clamped to …
  static constexpr std::uint32_t min_m = 4096;         ///< … at least 4096 units …
  static constexpr std::uint32_t max_m = 131072;       ///< … and at most 2^17
  static constexpr double connection_sparsity = 0.3;   ///< s = max(2, ⌊0.3·d⌋), …
  static constexpr std::uint32_t max_s = 64;           ///< … at most 64 (hashing costs m·s)
  /// ρ = max(floor, ⌊m/(4d)⌋), capped below m, with floor = `rho` (64) for the paper's
  /// absolute filter scoring and `relative_rho` (128) for relative scoring: the floor
  /// wherever m = 256·d; where m is held at its 4096 floor (small d) ρ keeps the ratio
  /// ρ/m = 1/(4d), so low-dimensional data, whose units repeat the few distinct column
  /// sets, gets enough winners. More winners widen what a hash calls near; under absolute
  /// scoring that adds each class's count background, under relative scoring it does not,
  /// and 128 beat 64 on the selection groups (docs/design/defaults.md, "Relative filter scoring").
  static constexpr std::uint32_t rho = 64;
  static constexpr std::uint32_t relative_rho = 128;
  static constexpr double rho_per_unit_and_feature = 0.25;  ///< the 1/4 in ⌊m/(4d)⌋
  static constexpr double gamma = 0.8;                 ///< γ
  static constexpr std::uint64_t seed = 5489;          ///< the reference's seed
  static constexpr Preprocess preprocess = Preprocess::Normalize;
  /// Probability temperature t of an untuned model (scores_to_probabilities in
  /// scoring.hpp): fitted once on the out-of-fold scores of the SELECTION half of the
  /// OpenML sets, never on the validation half; `flynn tune` fits one per dataset. Measured
  /// again under relative scoring and the anchor rules, the rule's new value did worse on
  /// the validation half, so it stays (docs/design/defaults.md, "Probability temperature").
  static constexpr double temperature = 0.054;
  /// The prior weight w of a model without a fitted calibration (calibration.hpp): none,
  /// so its probabilities follow the score order.
  static constexpr double prior_weight = 0.0;
  /// The variant used when none is given for d > low_dim_max features (defined in
  /// config.cpp; docs/design/defaults.md).
  static Variant variant();
  /// Low-dimensional data (d ≤ low_dim_max, without a given variant or preprocess densify):
  /// FlyHash of the (standardised) row sees only which features are largest, which says
  /// little where there are few features; it gets low_dim_variant() (anchor: 8 anchor
  /// units per feature, a hash of where the row lies). Variants with anchor units take,
  /// unless s is given, s = max(low_dim_min_s, anchor_s_per_feature·d) for d ≤ low_dim_max
  /// and max(low_dim_min_s, d) above (at most half the K·d anchor units, and max_s);
  /// unless given, m = 256·d clamped to [anchor_min_m, max_m], ρ = anchor_rho
  /// (without the m/(4d) term, whatever the scoring) and γ = anchor_gamma (docs/design/defaults.md, "Anchor units"). An anchor unit is one grid point,
  /// a distinct place in the row's space, so more units make the hash finer rather than
  /// repeat few column sets (the reason ρ grows with m/(4d) for the other variants); with
  /// 4× the units each unit gathers ¼ of the counts, and a smaller γ lets a few counts
  /// say "near" as many did at 4096 units.
  static constexpr std::uint32_t low_dim_max = 16;
  /// Above low_dim_max features, variants scored relatively without anchor units (the
  /// default zsign-q+paper among them) take, unless given, m = wide_expansion_factor·d
  /// (clamped to [min_m, max_m] as above: twice the units below d = 256, the same cap) and
  /// ρ = max(relative_rho, ⌊m/(2d)⌋): 256 wherever m = 512·d, falling to the floor of 128
  /// as the cap holds m for wider data (Fashion-MNIST keeps m = 131072, ρ = 128). Twice
  /// the units and twice the winners, the paper half unchanged in kind, gained on every
  /// selection group and on the held-out OpenML half, binary and one-hot kinds
  /// (docs/design/defaults.md, "The size of the hash").
  static constexpr double wide_expansion_factor = 512.0;
  static constexpr double wide_rho_per_unit_and_feature = 0.5;  ///< the 1/2 in ⌊m/(2d)⌋
  static constexpr std::uint32_t low_dim_min_s = 8;
  /// Twice the features per anchor unit up to low_dim_max features (under the anchors' m,
  /// ρ and γ, s = 2d beat d, 3d and 4d on the low-dimensional selection groups;
  /// docs/design/defaults.md, "Anchor units"). Wider data keeps s = d (not measured there).
  static constexpr std::uint32_t anchor_s_per_feature = 2;
  static constexpr std::uint32_t anchor_min_m = 16384;
  static constexpr std::uint32_t anchor_rho = 128;
  static constexpr double anchor_gamma = 0.5;
  static Variant low_dim_variant();
  /// The filter scoring of a model of `variant` when none is given: Relative, except for
  /// the paper's method, which keeps the paper's Absolute scores (its models, and
  /// `flynn reproduce`, stay byte-identical).
  static FilterScoring filter_scoring(const Variant& variant);
  /// Second-order filters (FlyConfig::pairs; docs/design/defaults.md, "Second-order filters"): the pair
  /// block has pair_cells_per_unit cells per unit, its filter decay is pair_gamma, and a
  /// class's score is (unit part + pair_weight · pair part / pairs) / (1 + pair_weight),
  /// each part relative to its own block, so scores keep the ρ scale of the unit scores
  /// (the calibrated temperature's). Chosen on the selection groups.
  static constexpr std::uint32_t pair_cells_per_unit = 8;
  static constexpr double pair_gamma = 0.5;
  static constexpr double pair_weight = 0.5;
  /// The largest `pairs` accepted (each costs ρ more reads per row and is bounded by ρ − 1).
  static constexpr std::uint32_t max_pairs = 16;
  /// The `pairs` that `flynn tune` tries on its chosen configuration (TuneOptions::try_pairs):
  /// r = 4, the choice on the selection groups.
  static constexpr std::uint32_t tune_pairs = 4;
  /// The value transform `flynn tune` tries on its chosen configuration when it standardises
  /// (TuneOptions::try_value_transform): log1p (docs/design/defaults.md, "Value transforms").
  static constexpr ValueTransform tune_value_transform = ValueTransform::Log1p;
  /// FlyConfig::paper_half_min_columns of the default variant above low_dim_max features
  /// (0 for any other variant or width): chosen on the OpenML selection half and the shared
  /// tables among 2, 4, 8, 16, 32 (docs/design/defaults.md, "The paper half").
  static constexpr std::uint32_t paper_half_min_columns = 16;
  /// The paper_half_min_columns a model of `variant` for d features takes when none is
  /// given: paper_half_min_columns for variant() above low_dim_max, else 0 (resolve, and
  /// the search's configurations, which score each variant as its default does).
  static std::uint32_t paper_half_min_columns_for(const Variant& variant, std::uint32_t d);
  /// The largest paper_half_min_columns accepted.
  static constexpr std::uint32_t max_paper_half_min_columns = 1u << 24;
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
  /// Default: Defaults::variant() (Defaults::low_dim_variant() for d ≤
  /// Defaults::low_dim_max), except with preprocess densify (a paper-only preprocessing),
  /// where it is the paper's method.
  std::optional<Variant> variant;
  /// Default: ClassWeight{} (none).
  std::optional<ClassWeight> class_weight;
  /// Default: Defaults::filter_scoring(the resolved variant).
  std::optional<FilterScoring> filter_scoring;
  /// Default: 0 (no second-order filters).
  std::optional<std::uint64_t> pairs;
  /// Default: Defaults::paper_half_min_columns for the default variant (Defaults::variant())
  /// above Defaults::low_dim_max features, else 0.
  std::optional<std::uint64_t> paper_half_min_columns;
  /// Default: ValueTransform::None.
  std::optional<ValueTransform> value_transform;

  /// The concrete configuration for d-dimensional inputs; validated (throws flynn::Error
  /// naming the parameter and its allowed range).
  FlyConfig resolve(std::uint32_t input_dim, std::size_t n_classes = 0) const;
  /// The variant resolve() chooses for d-dimensional inputs (not validated), e.g. for a
  /// reader that must know, before it has read the data, whether the model standardises.
  Variant resolve_variant(std::uint32_t input_dim) const;
  /// The value transform resolve() gives (not validated): for a reader that sums feature
  /// statistics before the model exists (streaming training's first pass).
  ValueTransform resolve_value_transform() const { return value_transform.value_or(ValueTransform::None); }
};

/// Bytes a model with this config and class count needs in memory (counts, score table,
/// lifting matrix); what FlyConfig::check_memory compares with physical memory.
std::uint64_t model_memory_bytes(const FlyConfig& config, std::size_t n_classes);

}  // namespace flynn
