#include "flynn/federated/dp_utility.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/metrics.hpp"

namespace flynn::federated {

namespace {

// The advice for a release that is not useful, from the quantities of the mechanism and
// the party's own counts (all local: nothing here is sent).
std::vector<std::string> advise(const ReleaseCheck& c, const DpMechanism& mech, const FlyConfig& config,
                                std::size_t classes, std::uint32_t parties) {
  std::vector<std::string> out;
  const double eps_party = mech.epsilon_party;
  const std::uint32_t T = mech.params.T;
  const double b = c.noise_scale;
  if (c.largest_count < b) {
    // T' with 2T'/ε' ≤ c_max: the noise scale at most the largest count.
    const double fitting_T = std::floor(eps_party * c.largest_count / 2.0);
    out.push_back(
        fitting_T >= 1.0
            ? fmt::format("fewer released entries: the noise scale 2T/ε' = {:.0f} is above this party's largest count "
                          "({}); with --dp-T {:.0f} or less it is not",
                          b, c.largest_count, fitting_T)
            : fmt::format("a larger --dp-epsilon: even T = 1 gives noise of scale 2/ε' = {:.0f}, above this party's "
                          "largest count ({}); ε' ≥ {:.2g} would bring it down to that count",
                          2.0 / eps_party, c.largest_count, 2.0 / std::max<double>(1, c.largest_count)));
  }
  if (c.selection_strength < 1.0)
    out.push_back(fmt::format("the exponential mechanism hardly prefers large counts (ε'·c_max/(4T) = {:.2g}): its "
                              "{} picks per party are close to uniform over the {} entries; fewer picks (smaller "
                              "--dp-T) or a larger --dp-epsilon sharpen them",
                              c.selection_strength, T, std::uint64_t(config.cells()) * classes));
  // A class's counts are spread over m units (each row marks ρ): fewer units gather more
  // rows per unit, so counts grow against the noise.
  const double per_unit = static_cast<double>(c.rows) * config.rho / (static_cast<double>(config.m) * classes);
  if (per_unit < b)
    out.push_back(fmt::format("fewer units: this party's rows mark about {:.2g} units per class on average at m = {}; "
                              "a smaller --m (and --rho) gathers more rows per unit",
                              per_unit, config.m));
  if (mech.params.unit == DpUnit::Paper && parties > 1)
    out.push_back(fmt::format("--dp-unit record, if every record is held by one party only: each party then spends ε "
                              "instead of ε/{} (docs/guide/federated.md, \"Privacy unit\")",
                              parties));
  return out;
}

}  // namespace

ReleaseCheck check_release(const FlyNN& model, const Dataset& rows, const ClassCounts& counts,
                           const DpMechanism& mechanism, std::uint32_t parties) {
  if (!rows.has_labels) throw Error(fmt::format("{}: the release check needs labelled rows", rows.source));
  if (rows.n_rows == 0) throw Error(fmt::format("{}: the release check needs rows", rows.source));
  ReleaseCheck c;
  const std::vector<std::uint32_t> truth = rows.row_class_ids_in(model.labels());
  const std::vector<std::uint32_t> predicted = model.predict(rows);
  const std::size_t L = model.labels().size();
  c.rows = rows.n_rows;
  c.accuracy = accuracy(truth, predicted);
  c.balanced_accuracy = balanced_accuracy(truth, predicted, L);
  std::vector<std::uint64_t> per_class(L, 0);
  for (std::uint32_t y : truth) ++per_class[y];
  const std::size_t top = static_cast<std::size_t>(std::max_element(per_class.begin(), per_class.end()) - per_class.begin());
  c.majority_class = model.labels().name(top);
  c.majority_share = static_cast<double>(per_class[top]) / static_cast<double>(c.rows);
  const double se = std::sqrt(c.majority_share * (1.0 - c.majority_share) / static_cast<double>(c.rows));
  c.useful = c.accuracy > c.majority_share + 2.0 * se;
  c.largest_count = counts.max_count();
  c.noise_scale = mechanism.noise_scale.to_double();
  c.selection_strength = mechanism.exponent_coefficient * c.largest_count;
  if (!c.useful) c.advice = advise(c, mechanism, model.config(), L, parties);
  return c;
}

std::string release_warning(const ReleaseCheck& c) {
  if (c.useful) return "";
  std::string text = fmt::format(
      "warning: on this party's {} rows the released model is no better than always answering its most frequent class "
      "'{}': accuracy {:.4f} against {:.4f} (balanced accuracy {:.4f}). Checked here only; nothing of it was sent.",
      c.rows, c.majority_class, c.accuracy, c.majority_share, c.balanced_accuracy);
  if (!c.advice.empty()) {
    text += " What would help:";
    for (const std::string& a : c.advice) text += "\n  - " + a;
  }
  return text + "\n";
}

Calibration dp_calibration() {
  return Calibration{Defaults::temperature, kDpPriorWeight, CalibrationSource::Public, 0};
}

}  // namespace flynn::federated
