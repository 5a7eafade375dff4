#pragma once
// The FlyNN classifier (Algorithm 1 of Ram & Sinha, AAAI 2022): one Fly Bloom Filter per
// class over FlyHash codes, kept as integer counts.
#include <cstdint>
#include <optional>
#include <memory>
#include <span>
#include <vector>

#include "flynn/calibration.hpp"
#include "flynn/class_counts.hpp"
#include "flynn/config.hpp"
#include "flynn/data_view.hpp"
#include "flynn/dataset.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/progress.hpp"
#include "flynn/scoring.hpp"
#include "flynn/table_schema.hpp"

namespace flynn {

/// How predict() chooses among classes of equal (highest) probability.
enum class TieBreak {
  LowestClass,  ///< the class that comes first in the label list (default; deterministic)
  Random,       ///< uniformly among the tied classes, from SeededRng stream
                ///< (tie_seed, PredictTieBreak, row index): the reference's behaviour,
                ///< still reproducible
};

struct PredictOptions {
  TieBreak tie_break = TieBreak::LowestClass;
  std::uint64_t tie_seed = 0;  ///< for TieBreak::Random
  /// For TieBreak::Random: the index of the first row passed in the tie-break stream.
  /// A caller that predicts a file chunk by chunk passes the number of rows before each
  /// chunk, so the choices equal those of one call on all rows.
  std::uint64_t first_row = 0;
  int threads = 0;             ///< 0 = all cores
  ProgressFn progress;         ///< optional; counts rows
};

/// Where a model's counts came from; stored in the model file and shown by `info`.
/// The rules it sets live in FlyNN: counts released under differential privacy take no
/// exact rows (partial_fit, merge and forget refuse them); fit() starts over, exact.
struct Provenance {
  bool differentially_private = false;  ///< counts are a DP release (noisy), not row sums
  double epsilon = 0.0;                 ///< total privacy budget ε spent, when DP
  std::uint32_t dp_T = 0;               ///< entries released per party, when DP
  std::uint32_t dp_parties = 0;         ///< parties (τ) that shared ε, when DP
  bool operator==(const Provenance&) const = default;
};

/// A FlyNN model: configuration, label list, lifting matrix (rebuilt from the seed) and
/// per-class counts.
///
/// Scores: score_l(x) = Σ_{i ∈ h(x)} γ^{c_l[i]} with 0^0 = 1 (γ = 0 gives binary filters:
/// the number of winners class l has never seen). predict_proba() returns calibrated
/// probabilities (scores_to_probabilities: a softmax of −score/(ρ·t) mixed with the
/// smoothed class frequencies at the prior weight w), with the model's Calibration (t, w),
/// which fit() fits on the training rows' leave-one-out scores (calibration.hpp).
/// predict() returns the class of highest probability, the first class among equal ones
/// (argmax_class), so predict() and predict_proba() agree on every row. Scores are summed
/// in double over the winners in ascending unit order, so they are identical for identical
/// counts.
///
/// Training is exact integer counting: fit(S) then forget(S') equals fit(S ∖ S'); fit on
/// parts then merge equals fit on the whole; results do not depend on thread count.
///
/// Every operation on data comes in two forms: on a Dataset (labels matched to the
/// model's label list by name, errors naming the file and line), and on a DataView of
/// features the caller holds (float or uint8, not copied) with labels given as class ids
/// into labels(). Both give identical counts, models and predictions for the same values.
///
/// Standardising variants (config().variant.standardize) also hold per-feature statistics.
/// Rule: the statistics are fixed when a model first learns. fit() computes them from its
/// rows (exact integer sums, FeatureSums) and then counts; partial_fit() on a model without
/// statistics computes them from its rows first, otherwise keeps them; forget() uses them.
/// So fit(S).forget(S') equals a model given S's statistics (set_feature_stats) and then
/// trained on S ∖ S', and merge() requires equal statistics: train the parts after
/// set_feature_stats(FeatureSums of the whole), as a federation does with its all-reduce.
class FlyNN {
 public:
  /// An untrained model. The config is validated for `labels.size()` classes.
  FlyNN(const FlyConfig& config, LabelSet labels, int threads = 0);
  /// A model with given counts (from a model file or a federation).
  FlyNN(const FlyConfig& config, LabelSet labels, ClassCounts counts, int threads = 0);

  FlyNN(FlyNN&&) noexcept;
  FlyNN& operator=(FlyNN&&) noexcept;
  ~FlyNN();

  const FlyConfig& config() const { return hasher_->config(); }
  const LabelSet& labels() const { return labels_; }
  const ClassCounts& counts() const { return counts_; }
  const FlyHasher& hasher() const { return *hasher_; }
  /// FlyHasher::set_one_row_path on this model's hasher (for tests and benchmarks: the
  /// winners, hence every prediction, are the same either way).
  void set_one_row_path(bool enabled) { hasher_->set_one_row_path(enabled); }
  const Provenance& provenance() const { return provenance_; }
  /// The weight of each class when scoring: config().class_weight applied to the counts
  /// (ClassWeight::weights; "balanced" follows the counts, so it is that of the model
  /// trained on all rows after any merge, forget or federation). Empty: every class 1.
  std::vector<double> class_weights() const;
  void set_provenance(const Provenance& p) { provenance_ = p; }

  /// The standardising variants' per-feature statistics (empty when none are needed or
  /// none were computed yet).
  const FeatureStats& feature_stats() const { return stats_; }
  /// Sets the statistics (from a model file, a federation's all-reduce, or to train parts
  /// that will be merged). Counts learned under other statistics keep their meaning only
  /// if the statistics are equal: set them before training. Throws flynn::Error when the
  /// sizes do not match d; ignored by variants that do not standardise.
  void set_feature_stats(FeatureStats stats);

  /// The table the model was trained on (feature column names, one-hot categories,
  /// missing-value fill means; see table_schema.hpp), stored in the model file. Empty for
  /// data read by position. The model itself never looks at it: loaders use it to turn a
  /// table into the model's features at prediction.
  const TableSchema& table_schema() const { return schema_; }
  /// Sets it (e.g. the training Dataset's schema). Throws flynn::Error unless it is empty
  /// or its columns have d features (and `fill`, when set, d values).
  void set_table_schema(TableSchema schema);

  /// How predict_proba (and so predict) turns scores into probabilities: the temperature
  /// and prior weight fitted by fit() (CalibrationSource::LeaveOneOut), set by the caller,
  /// public under DP, or Calibration{} (Defaults::temperature, prior weight 1) when none
  /// was fitted. Stored in the model file. Changing the counts (partial_fit, forget, merge,
  /// set_counts) keeps it: it describes the rows it was fitted on.
  const Calibration& calibration() const { return calibration_; }
  /// Throws flynn::Error (model unchanged) unless the calibration is valid.
  void set_calibration(const Calibration& calibration);
  /// Fits the calibration on the leave-one-out scores of the sample's rows, which the
  /// model must hold (they were counted into it): choose_calibration of
  /// calibration_loss(sample). What fit() does after counting; an empty sample gives
  /// Calibration{}.
  void calibrate(const CalibrationSample& sample);
  /// The fit's summed losses of the sample's rows against this model's counts: what a
  /// party of a federation computes from its own rows and the aggregated counts.
  CalibrationLoss calibration_loss(const CalibrationSample& sample) const;
  /// Scores of rows the model has learned, each by the model without it (rows × L
  /// row-major; LeaveOneOutScorer): exact out-of-sample scores of training rows, the input
  /// of the calibration fit. Throws flynn::Error for a row of a class id ≥ L.
  std::vector<double> leave_one_out_scores(const DataView& rows, std::span<const std::uint32_t> class_ids,
                                           const PredictOptions& options = {}) const;
  /// The calibration's temperature t.
  double temperature() const { return calibration_.temperature; }
  /// Whether a calibration was fitted or set (and is stored in the model file).
  bool has_temperature() const { return calibration_.source != CalibrationSource::Default; }
  /// Sets the temperature t (keeping the prior weight; source Given). Throws flynn::Error
  /// unless t is finite and positive.
  void set_temperature(double t);
  /// Back to Calibration{} (nothing stored).
  void clear_temperature() { calibration_ = Calibration{}; }

  /// The missing-value policy of the table the model was trained on (LoadOptions::missing),
  /// when it was recorded: prediction fills missing cells the same way unless told
  /// otherwise (io::model_load_options), so e.g. a model trained with --missing zero, which
  /// stores no means, predicts a table with missing cells. Stored in the model file.
  const std::optional<MissingPolicy>& missing_policy() const { return missing_policy_; }
  void set_missing_policy(std::optional<MissingPolicy> policy) { missing_policy_ = policy; }

  /// Threads for training and prediction (0 = all cores). Never changes results.
  void set_threads(int threads) { threads_ = threads; }
  int threads() const { return threads_; }

  /// Forgets everything, then learns `data` and fits the calibration on the rows'
  /// leave-one-out scores (every row, or a sample of about kCalibrationRows). The counts
  /// are then exact row sums, so a differentially private provenance is reset to exact
  /// (Provenance{}).
  void fit(const Dataset& data, const ProgressFn& progress = {});
  /// Learns `data` on top of what the model holds. Rows' labels are matched to the
  /// model's label list by name; an unknown label throws (naming file and line) before
  /// the model changes. Throws flynn::Error (model unchanged) when the counts are a
  /// differentially private release: the model claims its ε, and exact rows added to it
  /// would not be covered by it. The calibration is kept; rows that `sample` wants are
  /// added to it (a caller that learns a file chunk by chunk then calls calibrate()).
  void partial_fit(const Dataset& data, const ProgressFn& progress = {},
                   CalibrationSample* sample = nullptr);
  /// Removes rows that were learned before: afterwards the model equals one trained
  /// without them. Throws (model unchanged) when some row cannot have been learned, or
  /// when the counts are a differentially private release.
  void forget(const Dataset& data, const ProgressFn& progress = {});
  /// Removes counts that count() gave for rows learned before (e.g. summed over the chunks
  /// of a file, so a file's rows are removed at once): forget() in two steps, with its
  /// checks (and one on the shape); the model is unchanged when it throws.
  void forget_counts(const ClassCounts& removed);
  /// Adds another model's counts. Throws unless configs and label lists are equal (the
  /// message names the differing field), and for differentially private models (their
  /// releases are combined by federated aggregation, which accounts for the budget).
  /// Table schemas must have the same columns (names, categories); the fill means stay
  /// this model's (they cannot be recomputed from counts).
  void merge(const FlyNN& other);

  /// Grows the label list to `extended`, which must start with labels() in the same order
  /// and may add new names after them; the new classes start with no rows. Class ids of
  /// existing classes, the counts and the lifting matrix stay as they are, so learning
  /// rows of the new classes afterwards (partial_fit) equals training on everything with
  /// `extended` from the start. Throws flynn::Error (model unchanged) naming the first
  /// position where `extended` departs from labels().
  void add_classes(const LabelSet& extended);

  /// Replaces the counts (same shape: classes × FlyConfig::cells()), e.g. with a federation's aggregate;
  /// keeps the lifting matrix, so no rebuild. Throws flynn::Error on a shape mismatch.
  void set_counts(ClassCounts counts);

  /// The counts `data` would add (the same work as partial_fit, without changing the
  /// model): what a federated party computes. Rows that `sample` wants are added to it.
  ClassCounts count(const Dataset& data, const ProgressFn& progress = {},
                    CalibrationSample* sample = nullptr) const;

  /// Predicted class ids (into labels()) for every row.
  std::vector<std::uint32_t> predict(const Dataset& data, const PredictOptions& options = {}) const;
  /// Scores, n × L row-major (lower = more familiar).
  std::vector<double> scores(const Dataset& data, const PredictOptions& options = {}) const;
  /// Class probabilities (scores_to_probabilities with calibration(), priors from the
  /// training rows per class), n × L row-major. Where scores (nearly) tie, the class
  /// frequencies order the probabilities, and predict() follows them.
  std::vector<double> predict_proba(const Dataset& data, const PredictOptions& options = {}) const;

  // ---- The same operations on caller-held features (see DataView for lifetimes). The
  // view must have config().input_dim columns; `class_ids` holds one class id per row, each
  // an index into labels() (so classes are named by the model's label list, in its
  // order). Shape and id errors throw flynn::Error before the model changes.

  /// Forgets everything, then learns the rows with their class ids and fits the
  /// calibration (provenance: exact).
  void fit(const DataView& rows, std::span<const std::uint32_t> class_ids,
           const ProgressFn& progress = {});
  /// Learns the rows on top of what the model holds; refused for a differentially
  /// private release, as partial_fit(const Dataset&).
  void partial_fit(const DataView& rows, std::span<const std::uint32_t> class_ids,
                   const ProgressFn& progress = {}, CalibrationSample* sample = nullptr);
  /// Removes rows learned before (see forget(const Dataset&)); the model is unchanged when
  /// it throws.
  void forget(const DataView& rows, std::span<const std::uint32_t> class_ids,
              const ProgressFn& progress = {});
  /// The counts the rows would add, without changing the model; rows that `sample` wants
  /// are added to it.
  ClassCounts count(const DataView& rows, std::span<const std::uint32_t> class_ids,
                    const ProgressFn& progress = {}, CalibrationSample* sample = nullptr) const;
  /// Predicted class ids (into labels()) for every row of the view.
  std::vector<std::uint32_t> predict(const DataView& rows, const PredictOptions& options = {}) const;
  /// Scores, rows × L row-major (lower = more familiar).
  std::vector<double> scores(const DataView& rows, const PredictOptions& options = {}) const;
  /// Class probabilities (as predict_proba(const Dataset&)), rows × L row-major.
  std::vector<double> predict_proba(const DataView& rows,
                                    const PredictOptions& options = {}) const;
  /// The logarithms of predict_proba's probabilities, rows × L row-major, computed without
  /// underflow (finite where a probability rounds to 0): a decision function that orders
  /// the classes as the probabilities do.
  std::vector<double> logits(const DataView& rows, const PredictOptions& options = {}) const;
  /// Each row's FlyHash h(x): its ρ winning units in ascending order, rows × ρ row-major;
  /// exactly the units fit() counts for the row and scores() looks up (with second-order
  /// filters, FlyConfig::pairs, also the pair cells PairCoder derives from them). For studies of the
  /// hash itself (which rows share winners) and for FlyHash as a sparse feature map.
  /// Standardising variants need their statistics (a trained model has them).
  std::vector<std::uint32_t> hash(const DataView& rows, const PredictOptions& options = {}) const;

  // ---- From scores already computed (scores() of n rows, n × L), so that a caller wanting
  // both classes and probabilities hashes each row once.

  /// Scores (n × L) turned into predict_proba()'s probabilities, in place.
  void to_probabilities(std::vector<double>& scores, std::size_t n) const;
  /// The predicted class of each of n rows from their probabilities (to_probabilities,
  /// n × L): the class of highest probability, ties by options.tie_break; what predict()
  /// returns for the same rows and options (options.first_row numbers the rows for the
  /// random tie rule).
  std::vector<std::uint32_t> classes_of_probabilities(const std::vector<double>& probabilities, std::size_t n,
                                                      const PredictOptions& options = {}) const;

 private:
  void check_features(const Dataset& data) const;
  void check_view(const DataView& rows) const;
  void check_class_ids(std::size_t n_rows, std::span<const std::uint32_t> class_ids) const;
  // Each row's class id in labels() (throws for unlabelled data or an unknown label).
  std::vector<std::uint32_t> row_class_ids(const Dataset& data) const;
  // Throws unless `size` scores are n rows of labels().size() classes.
  void check_scores_shape(std::size_t size, std::size_t n) const;
  // counts_ -= removed, refusing (model unchanged) rows the model cannot contain.
  void subtract(const ClassCounts& removed);
  // partial_fit's counting: counts_ += the rows' counts, leaving counts_ unchanged when a
  // count would overflow. A call of few rows adds their codes in place.
  void add_counts(const DataView& rows, std::span<const std::uint32_t> class_ids,
                  const ProgressFn& progress);
  // count() after the checks: hashes the rows and adds each to its class (and to
  // `sample` when it wants the row).
  ClassCounts count_checked(const DataView& rows, std::span<const std::uint32_t> class_ids,
                            const ProgressFn& progress, CalibrationSample* sample) const;
  // fit()'s counting and calibration, after the statistics.
  void fit_counts(const DataView& rows, std::span<const std::uint32_t> class_ids, const ProgressFn& progress);
  // scores() after the checks.
  std::vector<double> scores_checked(const DataView& rows, const PredictOptions& options) const;
  // Computes the statistics from `data` when the variant standardises.
  void learn_feature_stats(const DataView& rows);
  // The scorer of counts_ (its filter table or seen bits: m·L work), built by the first
  // prediction after the counts change and then reused, so one row costs what a row of a
  // batch costs; with it the class weights it applies (class_weights(): "balanced" reads
  // all L·m counts). Every change of counts_ goes through counts_changed().
  std::shared_ptr<const FilterScorer> scorer() const;
  // predict_proba's class priors, from the scorer's class weights; cached likewise.
  std::shared_ptr<const std::vector<double>> class_priors_cached() const;
  void counts_changed();

  LabelSet labels_;
  std::unique_ptr<FlyHasher> hasher_;
  ClassCounts counts_;
  Provenance provenance_;
  FeatureStats stats_;
  TableSchema schema_;
  Calibration calibration_;
  std::optional<MissingPolicy> missing_policy_;
  int threads_ = 0;
  struct ScorerCache;  // a mutex, the scorer and its weights; concurrent predictions build them once
  std::unique_ptr<ScorerCache> scorer_cache_;
};

}  // namespace flynn
