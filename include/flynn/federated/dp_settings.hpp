#pragma once
// The differential-privacy settings as rows of one table, like the hyper-parameters'
// (flynn/settings_table.hpp): each row's wire name, CLI flag, help, fingerprint name, kind
// and typed access. The CLI's --dp-* flags, a gRPC party's overrides of the coordinator's
// DP settings, the wire pairs (flynn/federated/settings.hpp) and the DP part of the
// federation's fingerprint (party.hpp, step 1) are all made from it.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flynn/federated/dp.hpp"
#include "flynn/settings_table.hpp"

namespace flynn::federated {

/// One member of DpParams.
struct DpParamField {
  const char* name;         ///< "dp_epsilon": on the wire and in Python
  const char* flag;         ///< "--dp-epsilon"
  const char* fingerprint;  ///< "dp-epsilon": its name in the federation's fingerprint
  const char* help;         ///< the flag's help text
  SettingKind kind;
  /// dp_epsilon and dp_T: DP is on exactly when both are given.
  bool enables;
  SettingValue (*get)(const DpParams&);
  /// Throws flynn::Error naming the setting on a value of the wrong kind or an unknown name.
  void (*set)(DpParams&, const SettingValue& value);
  /// The fingerprint leaves the field out at this value (dp_postprocess at "none", so the
  /// paper's runs agree with parties that predate the option); null: always in it.
  const char* fingerprint_omitted_at;
};

/// The rows, in DpParams' member order.
const std::vector<DpParamField>& dp_param_fields();

/// The row named `name` ("dp_epsilon"), or null.
const DpParamField* find_dp_param(std::string_view name);

/// One optional value per row of dp_param_fields (the flags a user gave).
using DpGiven = std::vector<std::optional<SettingValue>>;

/// How messages name the rows: by CLI flag ("--dp-epsilon") or by name ("dp_epsilon",
/// Python's keyword).
enum class DpSpelling { Flag, Name };

/// The DP release a front-end asks for, or none when no DP flag was given. Unlike
/// DpParams{}, the release is post-processed with noise-units unless told otherwise: the
/// measured best, which never cost accuracy at the study's operating points
/// (docs/guide/federated.md, "Post-processing the release"). Throws flynn::Error when only one of
/// dp_epsilon and dp_T is given, when another field comes without them (naming the rows as
/// `spelling` says), or on an invalid value.
std::optional<DpParams> dp_params_from_given(const DpGiven& given, DpSpelling spelling = DpSpelling::Flag);

/// `base` (a coordinator's DP settings) with every given field replacing its own: a gRPC
/// party's overrides, whose differences the agreement step names. Without `base`, both
/// dp_epsilon and dp_T must be given. Throws flynn::Error on an invalid value.
std::optional<DpParams> dp_params_over(std::optional<DpParams> base, const DpGiven& given);

/// The DP fields of the federation's fingerprint, as (fingerprint name, canonical text).
std::vector<std::pair<std::string, std::string>> dp_fingerprint(const DpParams& dp);

}  // namespace flynn::federated
