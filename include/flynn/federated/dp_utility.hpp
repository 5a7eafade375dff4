#pragma once
// Whether a DP release is useful, said where it can be known (docs/guide/privacy.md, "When a release is useful").
//
// A party holds its own rows, so once the federation has released the model each party
// can judge the release on them: its accuracy against the share of the party's most
// frequent class. The check runs locally and nothing of it is sent: its figures are
// statistics of the party's rows, which the release does not cover. When the release is
// no better than always answering the most frequent class, the party is told so, with
// what would help, from the quantities behind the mechanism: the noise scale b = 2T/ε'
// against the counts the party's rows make (the mechanism picks large counts only when
// ε'·c/(4T) is not small, and a released value stands out of its noise only where the
// count is not far below b), the privacy unit, and the counts per unit (m units share a
// class's rows, each row marks ρ of them).
//
// The probabilities of a released model cannot be fitted on rows (that statistic would
// leave the parties outside the release): dp_calibration gives the calibration from public
// quantities only.
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/calibration.hpp"
#include "flynn/classifier.hpp"
#include "flynn/dataset.hpp"
#include "flynn/federated/dp.hpp"

namespace flynn::federated {

/// What a party learns by scoring the released model on its own rows (never sent).
struct ReleaseCheck {
  std::uint64_t rows = 0;          ///< the party's rows scored
  double accuracy = 0.0;           ///< the released model's accuracy on them
  double balanced_accuracy = 0.0;  ///< its mean recall over the classes the rows hold
  double majority_share = 0.0;     ///< the share of the rows' most frequent class
  std::string majority_class;      ///< that class
  /// Whether the accuracy is above majority_share by more than two standard errors of a
  /// proportion over `rows` rows: the release beats the constant answer on these rows.
  bool useful = false;
  /// Counts behind the advice: the largest count of the party's own (exact) counts, and
  /// the mechanism's noise scale b and selection exponent ε'·c_max/(4T).
  std::uint32_t largest_count = 0;
  double noise_scale = 0.0;
  double selection_strength = 0.0;
  /// What would help, one suggestion per entry (empty when useful).
  std::vector<std::string> advice;
};

/// Scores `model` (the released model) on the party's `rows` (labelled with the model's
/// classes) and compares it with the most frequent class. `counts` are the party's own
/// exact counts (what it privatised), `mechanism` its release's. Throws flynn::Error for
/// rows without labels or none at all.
ReleaseCheck check_release(const FlyNN& model, const Dataset& rows, const ClassCounts& counts,
                           const DpMechanism& mechanism, std::uint32_t parties);

/// The warning a party prints for a check that is not useful: the figures and the advice,
/// one paragraph; "" when the release is useful.
std::string release_warning(const ReleaseCheck& check);

/// The calibration of a released model, from public quantities only (no row is scored):
/// temperature Defaults::temperature and prior weight kDpPriorWeight, source Public. A
/// released model stores no rows per class, so its priors are uniform and the prior weight
/// only keeps the probabilities from the extremes; the decisions are the score order's.
Calibration dp_calibration();

/// The prior weight of dp_calibration (docs/guide/privacy.md, "When a release is useful").
inline constexpr double kDpPriorWeight = 0.2;

}  // namespace flynn::federated
