#pragma once
// What a coordinator hands every party of a federation (SharedSettings), and its text form:
// one (name, value) pair per setting, made from one table (federation_setting_fields), so
// that every setting `flynn federated serve` takes reaches the parties — the gRPC wire
// carries exactly these pairs (proto/federation.proto, Settings.values) — and a field added
// to the table travels without further code.
//
// The table: every hyper-parameter (flynn/settings_table.hpp: hyper_param_fields, same
// names), "missing" (the tables' missing-cell policy, table_schema.hpp) and the DP
// parameters "dp_epsilon", "dp_T", "dp_exponent", "dp_unit", "dp_postprocess" (dp.hpp). The
// label list is a list, not one value: it travels beside the pairs.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/settings_table.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::federated {

/// The configuration the coordinator hands every party (the gRPC Welcome).
struct SharedSettings {
  HyperParams hyper;           ///< as given to the coordinator (unset: library defaults)
  LabelSet labels;             ///< the federation's full, ordered label list
  /// How the parties' tables treat missing cells; unset: each party's own --missing
  /// (default mean). The policy is part of the fingerprint, so the parties must agree.
  std::optional<MissingPolicy> missing;
  std::optional<DpParams> dp;  ///< differential privacy, or none
};

/// One setting of SharedSettings other than the label list.
struct FederationSettingField {
  std::string name;  ///< "m", …, "missing", "dp_epsilon", …
  SettingKind kind;
  /// The value when set (with DP: every DP field; without: none of them).
  std::function<std::optional<SettingValue>(const SharedSettings&)> get;
  /// Sets it (a DP field turns DP on with DpParams' defaults for the other DP fields).
  /// Throws flynn::Error naming the setting on an invalid name or value.
  std::function<void(SharedSettings&, const SettingValue&)> set;
};

/// The table: the hyper-parameters in hyper_param_fields' order, then "missing", then the
/// DP fields.
const std::vector<FederationSettingField>& federation_setting_fields();

/// Every set field of `s` as (name, canonical text) in table order (setting_text).
std::vector<std::pair<std::string, std::string>> settings_to_text(const SharedSettings& s);

/// The inverse of settings_to_text, with `labels` as the label list. Strict, so a party
/// never trains on settings it misread: an unknown or repeated name, a value that does not
/// parse or is not in the canonical form settings_to_text writes, DP fields without both
/// dp_epsilon and dp_T, or invalid DP parameters throw flynn::Error naming the setting.
SharedSettings settings_from_text(const std::vector<std::pair<std::string, std::string>>& pairs,
                                  LabelSet labels);

}  // namespace flynn::federated
