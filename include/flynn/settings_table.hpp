#pragma once
// One definition of flynn's settings, from which every consumer is made:
//
//   * hyper_param_fields(): every hyper-parameter a user gives (a member of HyperParams),
//     a row of an option table (flynn/option_table.hpp): its name, CLI flag, help, kind and
//     typed access. The CLI's flags and help, a federation party's overrides (with_given),
//     the gRPC wire (flynn/federated/settings.hpp: one (name, text) pair per given row) and
//     Python's keyword names all come from it.
//   * config_fields(): every field of the configuration a model is built from (a member of
//     FlyConfig, what the hyper-parameters resolve to): its name in messages and in the
//     federation's fingerprint, its JSON and Python keys and its value. FlyConfig::
//     first_difference and describe(), the federation fingerprint (federated::fingerprint),
//     the JSON summaries (eval::config_json) and Python's config dictionaries come from it.
//
// Nothing lists these fields by hand elsewhere. A member added to HyperParams or FlyConfig
// without its row here is caught by tests/eval/settings_table_test.cpp: its structured
// bindings name every member (adding one fails to compile there) and it checks that each
// row reaches exactly its own member; the federation walk
// (tests/cli/settings_travel_test.cpp) needs an example value for every row.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/option_table.hpp"

namespace flynn {

/// One hyper-parameter a user may give: a member of HyperParams (its `name`, flag, help,
/// kind, get and set; see OptionField).
using HyperParamField = OptionField<HyperParams>;

/// The rows, in HyperParams' member order (also the order of the CLI's help).
const OptionTable<HyperParams>& hyper_param_fields();
/// The row named `name`, or null.
const HyperParamField* find_hyper_param(std::string_view name);

/// `base` with every field given in `given` replacing its own (a party's flags on top of
/// the coordinator's settings: the federation's agreement step then names any field in
/// which the parties differ).
HyperParams with_given(HyperParams base, const HyperParams& given);

/// One field of a concrete configuration: a member of FlyConfig.
struct ConfigField {
  const char* name;    ///< in messages, the fingerprint and first_difference: "d (input dimension)", "m"
  const char* key;     ///< in JSON and describe(): "d", "m"
  const char* python;  ///< in Python's config dictionaries: "n_features", "m"
  SettingKind kind;
  SettingValue (*get)(const FlyConfig&);
  /// In the federation's fingerprint. Not the seed: party 0 may draw it, so it is agreed
  /// separately (party.hpp, step 1).
  bool fingerprinted;
  /// A keyword argument of Python's FlyNNClassifier (config_params); not n_features.
  bool estimator_param;
  /// describe() and the fingerprint leave the field out at this value (the variant at
  /// "paper", so the paper's descriptions and hello blocks read as before variants
  /// existed); null: always shown.
  const char* omitted_at;
};

/// The rows, in FlyConfig's member order (also the order of describe() and the JSON).
const std::vector<ConfigField>& config_fields();

}  // namespace flynn
