#include "flynn/federated/settings.hpp"

#include <set>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/dp_settings.hpp"

namespace flynn::federated {

namespace {

// A DP field (dp_settings.hpp): reads DpParams when DP is on; setting one turns DP on.
FederationSettingField dp_field(const char* name, SettingKind kind,
                                std::optional<SettingValue> (*get)(const DpParams&),
                                void (*set)(DpParams&, const SettingValue&)) {
  return {name, kind,
          [get](const SharedSettings& s) -> std::optional<SettingValue> {
            if (!s.dp) return std::nullopt;
            return get(*s.dp);
          },
          [set](SharedSettings& s, const SettingValue& v) {
            if (!s.dp) s.dp = DpParams{};
            set(*s.dp, v);
          }};
}

std::vector<FederationSettingField> make_fields() {
  std::vector<FederationSettingField> out;
  for (const HyperParamField& f : hyper_param_fields())
    out.push_back({f.name, f.kind, [&f](const SharedSettings& s) { return f.get(s.hyper); },
                   [&f](SharedSettings& s, const SettingValue& v) { f.set(s.hyper, v); }});
  out.push_back({"missing", SettingKind::Choice,
                 [](const SharedSettings& s) -> std::optional<SettingValue> {
                   if (!s.missing) return std::nullopt;
                   return SettingValue(std::string(missing_policy_name(*s.missing)));
                 },
                 [](SharedSettings& s, const SettingValue& v) {
                   s.missing = parse_missing_policy(setting_as<std::string>(v, "missing"));
                 }});
  for (const DpParamField& f : dp_param_fields())
    out.push_back(dp_field(f.name, f.kind, f.get, f.set));
  return out;
}

}  // namespace

const std::vector<FederationSettingField>& federation_setting_fields() {
  static const std::vector<FederationSettingField> fields = make_fields();
  return fields;
}

std::vector<std::pair<std::string, std::string>> settings_to_text(const SharedSettings& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const FederationSettingField& f : federation_setting_fields())
    if (const auto v = f.get(s)) out.emplace_back(f.name, setting_text(*v));
  return out;
}

SharedSettings settings_from_text(const std::vector<std::pair<std::string, std::string>>& pairs,
                                  LabelSet labels) {
  SharedSettings s;
  s.labels = std::move(labels);
  std::set<std::string> seen;
  for (const auto& [name, text] : pairs) {
    const FederationSettingField* field = nullptr;
    for (const FederationSettingField& f : federation_setting_fields())
      if (f.name == name) field = &f;
    if (!field)
      throw Error(fmt::format("unknown setting '{}' (a coordinator of another flynn version?)",
                              name.substr(0, 60)));
    if (!seen.insert(name).second) throw Error(fmt::format("setting '{}' is given twice", name));
    field->set(s, parse_setting(field->kind, text, name));
    // Only the form settings_to_text writes, so two parties can never read one setting
    // two ways (an alias such as preprocess "l2", "1e0" for 1, leading zeros).
    const std::string canonical = setting_text(*field->get(s));
    if (canonical != text)
      throw Error(fmt::format("{}: '{}' is not in canonical form (expected '{}')", name,
                              text.substr(0, 60), canonical));
  }
  if (s.dp) {
    if (!seen.count("dp_epsilon") || !seen.count("dp_T"))
      throw Error("the DP settings need both dp_epsilon and dp_T");
    s.dp->validate();
  }
  return s;
}

}  // namespace flynn::federated
