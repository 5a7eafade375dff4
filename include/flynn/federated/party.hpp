#pragma once
// One party of FlyNNFL (Algorithm 2 of Ram & Sinha, AAAI 2022; spec section 4): the
// protocol every party runs, whatever the transport (threads or MPI).
//
// Protocol (every party makes exactly these collective calls, in this order, whether or
// not something went wrong locally, so no party is ever left waiting in a collective):
//
//   1. Agreement — one all-gather of a "hello" block: the party's status (could it read
//      its shard? are its labels in the list? do its hyper-parameters resolve?), its
//      fingerprint, and, without DP, its rows per class. Party 0's block carries the
//      lifting-matrix seed: --seed when given, else one party 0 drew (this is the
//      broadcast of the seed; the all-gather doubles as the exchange of statuses). Every
//      party then applies the same checks to the same blocks, so all reach the same
//      verdict: any failed party, or any party whose fingerprint differs from party 0's,
//      stops EVERY party with the same FederationError, naming the party and the reason
//      or the differing field (hyper-parameter, seed, preprocessing, label list, DP
//      settings, format versions). Nothing is trained or written then.
//   1b. Standardising variants only (Variant::standardize): one all-reduce of the exact
//      per-feature sums (FeatureSums as 32-bit limbs), from which every party derives the
//      same statistics central training on the pooled rows would. Refused with DP (the
//      statistics would be an unprotected release): every party gets the refusal in step 1.
//   1c. Tables whose missing cells await the training means (the data's schema has columns
//      but no fill values, and `missing` is MissingPolicy::Mean: load with
//      LoadOptions::impute = false): one all-reduce of the exact ImputationSums, from which
//      every party fills its missing cells with the means central training on the pooled
//      rows would use; the model stores them. It comes before 1b, whose statistics are
//      those of the filled rows. The table's columns (names, categories) and the missing
//      policy are part of the fingerprint, so parties whose tables differ are refused.
//   2. Local training: the party builds the lifting matrix from the agreed seed and counts
//      its own rows (FlyNN::count); with DP it then privatises the counts (dp.hpp) with
//      budget ε' = ε/τ (or ε with DpUnit::Record), drawing noise from SecureRng only.
//   3. Status — one all-gather of "did local training succeed" (with the reason), so a
//      failure there (e.g. out of memory) also stops every party with the reason.
//   4. Aggregation — the single data collective: without DP one all-reduce (sum) of the
//      dense L×m counts; with DP one all-gather of each party's T (index, value) pairs,
//      summed locally. Every party ends with the same counts and builds the same model.
//
// Under secure aggregation (Communicator::secure_aggregation(), the gRPC backend) nothing
// private leaves a party unmasked: step 1 carries no rows per class — they are summed by
// one extra 64-bit all-reduce right after the fingerprint checks, and every party then
// applies the same row-total checks to the sums (at least two classes with rows, every
// class total below 2^32) — and a DP release is sent as a dense 64-bit vector into the
// all-reduce instead of the sparse all-gather (m·L·8 bytes instead of T·8: the price of
// hiding which entries were picked). Results are identical.
//
// What leaves a party under DP or secure aggregation (docs/guide/federated.md, "What leaves a
// party"): the fingerprint (settings, the label list, d, the public schema's digest or,
// for all-numeric tables, the column names), the seed, statuses, the masked sums or the DP
// release, and the report (model CRC and size, traffic). Not: rows per class, categories
// learned from the rows (under DP a table with text columns needs a public schema,
// public_schema.hpp), per-party timings or row counts, nor the text of a message that
// quotes the rows — a loader's error or an unknown label is reported to the others as
// "its data cannot be used", the reason staying in FederationError::local_detail().
//
// Theorem 4 (no DP): the aggregated counts equal central training on the pooled rows,
// for any split, so the model file is byte-identical to `flynn train` on the concatenation
// with the same seed, hyper-parameters and label list (provenance stays the default).
// Row totals are exchanged in the agreement step; a count can never exceed its class's
// rows, so checking that every class total fits in 32 bits rules out overflow in the
// all-reduce. With DP, rows per class are NOT exchanged (they are not protected by the
// mechanism) and the model stores zero rows per class.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flynn/feature_stats.hpp"
#include "flynn/classifier.hpp"
#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/communicator.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/public_schema.hpp"
#include "flynn/progress.hpp"

namespace flynn::federated {

/// Version of the messages exchanged by the protocol (checked in the agreement step). 2:
/// the report carries the SHA-256 of the model file.
inline constexpr std::uint32_t kProtocolVersion = 2;

/// The purposes of the protocol's collectives, as every party names them to the
/// communicator (communicator.hpp): the gRPC backend binds each relayed block's signature
/// and each sum's masks to them. agree_on_status's purpose is its stage.
namespace purpose {
inline constexpr std::string_view kAgreement = "agreement";            ///< the hello all-gather
inline constexpr std::string_view kRowTotals = "row totals";           ///< masked rows per class
inline constexpr std::string_view kImputationSums = "imputation sums"; ///< step 1c
inline constexpr std::string_view kFeatureSums = "feature sums";       ///< step 1b
inline constexpr std::string_view kTrainingStatus = "local training";  ///< step 3
inline constexpr std::string_view kCounts = "counts";                  ///< step 4 without DP
inline constexpr std::string_view kDpRelease = "dp release";           ///< step 4 with DP
/// Step 5 without DP: the calibration's loss sums of every party's rows against the
/// aggregated counts (calibration.hpp), so the model's calibration is central training's.
inline constexpr std::string_view kCalibration = "calibration";
inline constexpr std::string_view kReport = "report";                  ///< compare_models
/// Federated evaluation (evaluate_together): which parties give test rows, and whether
/// each could score them; then their confusion matrices' sum.
inline constexpr std::string_view kEvaluationStatus = "evaluation";
inline constexpr std::string_view kEvaluation = "test confusion matrix";
inline constexpr std::string_view kWriting = "writing the model";      ///< the model is staged
}  // namespace purpose

/// A failure of the federation as a whole, raised with the same message on every party
/// (so every rank can exit non-zero with the reason). Parties that did nothing wrong get
/// it too: the federation cannot proceed without the others.
class FederationError : public Error {
 public:
  using Error::Error;
  FederationError(const std::string& message, std::string local_detail)
      : Error(message), local_detail_(std::move(local_detail)) {}
  /// This party's own reason, when the federation was only told that it failed: under DP
  /// or secure aggregation a message that quotes the party's rows (a loader's "data.csv:17:4:
  /// 'abc' is not a number", an unknown label) never leaves the party (party.hpp, "What
  /// leaves a party"). Front-ends print it locally; it is in no message. "" otherwise.
  const std::string& local_detail() const { return local_detail_; }

 private:
  std::string local_detail_;
};

/// How a party is configured. The agreed part is compared across parties before training.
struct FederationSettings {
  /// Hyper-parameters as this party was given them, resolved with its data's d (so
  /// ratios and direct values that resolve alike agree). When `seed` is unset, party 0
  /// draws a fresh seed (from SecureRng) and every party uses it; a party that sets one
  /// must match party 0's.
  HyperParams hyper;
  /// The full, ordered label list every party uses (required: a party may hold no rows
  /// of some classes, and class ids must mean the same everywhere).
  LabelSet labels;
  /// Differential privacy (spec section 5), or none.
  std::optional<DpParams> dp;
  int threads = 0;       ///< local worker threads (0 = all cores); never changes results
  ProgressFn progress;   ///< optional progress of the local counting
  /// How the parties' tables treat missing cells (LoadOptions::missing); with Mean, data
  /// loaded with LoadOptions::impute = false gets the federation's means (step 1c).
  MissingPolicy missing = MissingPolicy::Mean;
  /// Standardisation statistics from public knowledge (io::load_feature_stats), for a
  /// standardising variant: used instead of the exact all-reduce of the parties' feature
  /// sums, so no statistic of the rows leaves a party. Required for standardising variants
  /// under DP; every party must give the same (they join the fingerprint).
  std::optional<FeatureStats> feature_stats;
  /// The tables' feature set from public knowledge (public_schema.hpp, CLI --schema): the
  /// data must have been read against it (public_schema_load_options), the parties agree
  /// on it by digest, and the model stores its table. Required under DP when the data has a
  /// categorical column: the categories would otherwise come from the rows.
  std::optional<PublicSchema> schema;
  /// With DP: called with the privacy this party's release spends, after the release is
  /// computed and before it leaves the party. Throwing refuses the release: the message
  /// stops every party at the status step (e.g. the budget ledger, budget_ledger.hpp).
  std::function<void(const PrivacyAccount&)> approve_release;
};

/// What a party's data lacks for a federation of these settings: every problem found
/// locally, each named, and the configuration the settings resolve to for this data (its
/// seed not yet agreed) when they do. The protocol runs it before the agreement (and stops
/// every party with its problems); `flynn federated join --check` runs it alone, before
/// any coordinator is involved (check_party_files).
struct DataExamination {
  std::vector<std::string> problems;
  /// Whether a problem quotes the rows (an unknown label): under DP or secure aggregation
  /// its text stays with this party.
  bool quotes_rows = false;
  std::optional<FlyConfig> config;
  /// The DP settings with T fixed (--dp-T auto resolved for this configuration), under DP.
  std::optional<DpParams> dp_params;
};
/// Checks `data` against `settings` with the class names `labels`, for a federation of
/// `parties` (the DP noise scale depends on it): labels, public schema and text columns,
/// missing cells under DP, hyper-parameters, public statistics, DP settings.
DataExamination examine_party_data(const FederationSettings& settings, const LabelSet& labels, int parties,
                                   const Dataset& data);

/// This party's rows, or why it has none.
struct PartyInput {
  const Dataset* data = nullptr;  ///< the party's rows (not owned); null when unreadable
  std::string error;              ///< why `data` is null (e.g. the loader's message)
};

/// Seconds spent in each phase by one party.
struct PartyTimings {
  double agree = 0;      ///< agreement all-gather (+ waiting for the slowest to arrive)
  double setup = 0;      ///< building the lifting matrix from the agreed seed
  // Braced: Doxygen misreads "local = 0" (a keyword of other languages it parses).
  double local{};        ///< counting the party's rows (FlyNN::count)
  double privatize = 0;  ///< DP release (0 without DP)
  double wait = 0;       ///< status all-gather: mostly waiting for slower parties
  double aggregate = 0;  ///< the counts all-reduce / DP all-gather and summing
  double finalize = 0;   ///< building the final model from the aggregated counts
  /// Training time: from the start until this party holds the aggregated counts
  /// (agree + setup + local + privatize + wait + aggregate; finalize excluded).
  double training = 0;
  double total = 0;      ///< everything, finalize included
  /// CPU seconds of the party's own thread in setup + local + privatize: the party's work,
  /// whatever else competes for the cores (all of it when the party runs with one worker
  /// thread, as in the scaling study; with more, the other workers' CPU is not included).
  double compute_cpu = 0;
};

/// What train_party returns: the aggregated model (identical on every party) and how this
/// party got there.
struct PartyResult {
  explicit PartyResult(FlyNN m) : model(std::move(m)) {}
  FlyNN model;
  int rank = 0;
  int parties = 1;
  std::string backend;          ///< the communicator's backend ("threads", "mpi")
  std::uint64_t rows = 0;       ///< this party's training rows
  bool seed_drawn = false;      ///< the seed was drawn by party 0 (no --seed anywhere)
  PartyTimings timings;
  Traffic control_traffic;      ///< agreement + status all-gathers
  Traffic aggregate_traffic;    ///< the counts all-reduce or the DP all-gather
  std::optional<PrivacyAccount> privacy;  ///< with DP: Theorem 6's accounting
  /// With DP: this party's check of the release on its own rows (federated/dp_utility.hpp;
  /// computed locally, never sent): the warning when the release is no better than the
  /// party's most frequent class, "" when it is (and without DP).
  std::string release_warning;
};

/// Runs this party's side of FlyNNFL over `comm` (see the header comment). Throws
/// FederationError (the same on every party) when the federation cannot proceed.
PartyResult train_party(Communicator& comm, const PartyInput& input,
                        const FederationSettings& settings);

/// What each party reports about its run; exchanged by compare_models so that every party
/// (in practice rank 0, which prints) sees the whole federation.
struct PartyReport {
  int rank = 0;
  /// Training rows of the party; withheld (std::nullopt) under DP, where row counts are
  /// not protected by the mechanism, and under secure aggregation.
  std::optional<std::uint64_t> rows;
  /// The party's phase timings; withheld (std::nullopt) under DP and secure aggregation:
  /// counting time grows with the party's rows (0.0005 s for 200 rows, 0.5 s for 400k), so
  /// it would tell its row count. (A simulation, which runs every party, fills them in.)
  std::optional<PartyTimings> timings;
  Traffic control_traffic;
  Traffic aggregate_traffic;
  std::uint32_t model_crc32 = 0;  ///< CRC-32 of the party's serialised model file
  std::uint64_t model_bytes = 0;  ///< size of that file
  /// SHA-256 of that file (32 bytes): what the party signs it would write (over gRPC every
  /// report is signed by its party, so every party verifies every other's digest).
  std::string model_sha256;
};

/// Serialises this party's model into `model_file` and exchanges every party's report
/// (one all-gather): every party checks that all hold byte-identical model files (same
/// size, CRC-32 and SHA-256) and throws FederationError naming the parties otherwise.
/// Returns the reports, indexed by rank.
std::vector<PartyReport> compare_models(Communicator& comm, const PartyResult& result,
                                        std::string& model_file);

/// The federation's evaluation of its model on the parties' held-out rows (evaluate_together).
struct FederatedEvaluation {
  std::size_t classes = 0;
  /// classes × classes row counts, row-major: the true class, then the predicted class;
  /// the sum over the parties that gave test rows.
  std::vector<std::uint64_t> confusion;
  std::uint64_t rows = 0;        ///< the federation's test rows
  int parties_with_rows = 0;     ///< parties that gave test rows (of `parties`)
  int parties = 0;
  double accuracy = 0;           ///< correct / rows
  double balanced_accuracy = 0;  ///< mean recall over the classes with test rows
  /// Why nothing was summed ("" when the matrix is the sum): no party gave test rows, or
  /// one of several only (the sum would be its own matrix, which the others must not learn).
  std::string skipped;
};

/// Federated evaluation, after compare_models, on every party (a collective, like training):
/// each party scores its own held-out rows (`test`, labelled, read for this model; null =
/// this party gives none) with the federation's model, and the parties learn which of them
/// gave rows (one all-gather, which also stops every party when one could not read or score
/// its rows: `local_error`). When at least two did (or the federation is one party), their
/// classes × classes confusion matrices are summed by one all-reduce (masked under secure
/// aggregation), so every party learns the federation's matrix, accuracy and balanced
/// accuracy, and no party's own beyond what the sum tells (with two parties giving rows,
/// each can subtract its own). Test rows are not training rows: under DP the matrix is
/// exact and not covered by the release's ε; a party that gives no test rows adds nothing.
/// Throws FederationError (the same on every party) when a party failed.
FederatedEvaluation evaluate_together(Communicator& comm, const FlyNN& model, const Dataset* test,
                                      const std::string& local_error = "");

// ---- the checks on the aggregate (train_party's, and the party-level API's: Python's
// flynn.federated.aggregate) --------------------------------------------------------------

/// The checks every party applies to the federation's rows per class (`totals`, one per
/// class of `labels`): each at most 2^32 − 1 (so that no count can wrap in the 32-bit
/// all-reduce) and rows of at least two classes. `secure` keeps the counts out of the
/// message (under secure aggregation they are the parties' to know). Throws FederationError.
void check_row_totals(const std::vector<std::uint64_t>& totals, const LabelSet& labels,
                      bool secure);

/// Every training row adds exactly FlyConfig::codes_per_row() ones (ρ, and its pair cells)
/// to its class (the model file checks the same): throws FederationError naming the class
/// whose exact aggregated counts do not sum to its rows (`totals`) × codes_per_row, i.e. a
/// party whose counts disagree with the rows it announced.
void check_aggregated_counts(const ClassCounts& aggregated, const std::vector<std::uint64_t>& totals,
                             std::uint32_t codes_per_row, const LabelSet& labels, bool secure);

/// The exact aggregate of parties' counts (each labels.size() × cells with its rows per class),
/// as a federation computes it in the clear: the sums, checked with check_row_totals, per
/// cell against its class's rows (a row adds at most one to each unit) and with
/// check_aggregated_counts. Throws FederationError naming the problem (a part of another
/// shape too).
ClassCounts aggregate_exact_counts(const std::vector<ClassCounts>& parts, std::uint32_t codes_per_row,
                                   const LabelSet& labels);

/// Agreement on a local outcome (e.g. "writing the model"): each party passes its error
/// message ("" = success); one all-gather; when any party failed, every party throws
/// FederationError "<stage> failed: party r says: \"<message>\"; …" (each party's message
/// escaped and cut: relayed_text.hpp).
void agree_on_status(Communicator& comm, const std::string& local_error,
                     const std::string& stage);

/// The fingerprint of a configuration: ordered (field, value) pairs that every party must
/// share. Fields: "federation protocol", "model format version", "hash version",
/// "label list", the configuration's fields from the table of settings
/// (settings_table.hpp, config_fields: "d (input dimension)", "m", "s", "rho", "gamma",
/// "preprocess"), "differential privacy", "variant" unless paper, and with DP "dp-epsilon",
/// "dp-T", "dp-exponent", "dp-unit". (The seed is agreed separately: it may be left to
/// party 0.)
std::vector<std::pair<std::string, std::string>> fingerprint(const FlyConfig& config,
                                                             const LabelSet& labels,
                                                             const std::optional<DpParams>& dp);

/// `pattern` with every "{rank}" replaced by the decimal rank ("shard_{rank}.csv").
std::string expand_rank(const std::string& pattern, int rank);

}  // namespace flynn::federated
