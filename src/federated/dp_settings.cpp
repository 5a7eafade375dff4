#include "flynn/federated/dp_settings.hpp"

#include <fmt/format.h>

#include "flynn/detail/setting_rows.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

using detail::choice_row;
using detail::setting_row;

// --dp-T takes a count or the word "auto" (T from public quantities, fixed once m and the
// classes are known: DpParams::resolved), so the row's kind is Choice; it also takes a
// count as an Unsigned value (Python's int, the library's callers).
OptionField<DpParams> dp_T_row() {
  OptionField<DpParams> f = detail::setting_field<DpParams>(
      "dp_T", SettingKind::Choice,
      {"--dp-T",
       "Entries each party releases (with --dp-epsilon): a count, or 'auto' for the rule that chooses T from "
       "epsilon, the parties and m x classes (docs/guide/privacy.md, \"Choosing T\")",
       "dp-T", nullptr, /*enables=*/true});
  f.values = "count or 'auto'";
  f.get = [](const DpParams& p) -> std::optional<SettingValue> {
    return p.T_auto ? SettingValue(std::string("auto")) : SettingValue(std::uint64_t{p.T});
  };
  f.set = [](DpParams& p, const SettingValue& v) {
    std::uint64_t t = 0;
    if (const std::string* text = std::get_if<std::string>(&v)) {
      if (*text == "auto") {
        p.T = 0;
        p.T_auto = true;
        return;
      }
      if (text->empty() || text->find_first_not_of("0123456789") != std::string::npos)
        throw Error(fmt::format("dp-T = '{}': expected a count of entries or 'auto'", *text));
      t = setting_as<std::uint64_t>(parse_setting(SettingKind::Unsigned, *text, "dp_T"), "dp_T");
    } else {
      t = setting_as<std::uint64_t>(v, "dp_T");
    }
    if (t > 0xFFFFFFFFu) throw Error(fmt::format("dp_T: {} is above 2^32 - 1", t));
    p.T = static_cast<std::uint32_t>(t);
    p.T_auto = false;
  };
  return f;
}

OptionTable<DpParams> make_fields() {
  using P = DpParams;
  OptionTable<DpParams> rows = {
      setting_row<&P::epsilon, "dp_epsilon">(
          {"--dp-epsilon",
           "Total privacy budget epsilon of the federation; enables the DP release (each party spends "
           "epsilon/parties under --dp-unit paper, epsilon under --dp-unit record)",
           "dp-epsilon", nullptr, /*enables=*/true}),
      dp_T_row(),
      choice_row<&P::exponent, "dp_exponent", &parse_dp_exponent, &dp_exponent_name>(
          {"--dp-exponent",
           "Exponential-mechanism exponent: 'paper' eps'*c/(4T) (default) or 'reference' eps'*c/(2T), see "
           "docs/guide/federated.md",
           "dp-exponent"}),
      choice_row<&P::unit, "dp_unit", &parse_dp_unit, &dp_unit_name>(
          {"--dp-unit",
           "How epsilon is split: 'paper' (each party spends epsilon/parties, default) or 'record' (each "
           "record lives at one party: parallel composition, each party spends epsilon); see docs/guide/federated.md",
           "dp-unit"}),
      choice_row<&P::postprocess, "dp_postprocess", &parse_dp_postprocess, &dp_postprocess_name>(
          {"--dp-postprocess",
           "Post-processing of the aggregated release (free under DP): 'noise-units' (default: the measured "
           "best), 'none' (the paper's model), 'threshold', 'class-balance', 'noise-units+class-balance'; see "
           "docs/guide/federated.md",
           "dp-postprocess", "none"}),
  };
  for (DpParamField& f : rows) f.group = "Differential privacy";  // their --help group
  return rows;
}

// "A, B and C" of the rows' flags (or names) with (or without) `enables`.
std::string flags_where(bool enables, DpSpelling spelling = DpSpelling::Flag) {
  std::vector<std::string> flags;
  for (const DpParamField& f : dp_param_fields())
    if (f.enables == enables) flags.push_back(spelling == DpSpelling::Flag ? f.flag : f.name);
  std::string out;
  for (std::size_t i = 0; i < flags.size(); ++i)
    out += (i == 0 ? "" : i + 1 == flags.size() ? " and " : ", ") + flags[i];
  return out;
}

// Every given field set on `p`, then validated.
DpParams set_given(DpParams p, const DpGiven& given) {
  const auto& fields = dp_param_fields();
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (given.at(i)) fields[i].set(p, *given[i]);
  p.validate();
  return p;
}

}  // namespace

const OptionTable<DpParams>& dp_param_fields() {
  static const OptionTable<DpParams> fields = make_fields();
  return fields;
}

const DpParamField* find_dp_param(std::string_view name) { return find_setting(dp_param_fields(), name); }

std::optional<DpParams> dp_params_from_given(const DpGiven& given, DpSpelling spelling) {
  const auto& fields = dp_param_fields();
  std::size_t enabling = 0, enablers = 0, others = 0;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    enablers += fields[i].enables;
    if (given.at(i)) (fields[i].enables ? enabling : others) += 1;
  }
  if (enabling == 0) {
    if (others > 0)
      throw Error(fmt::format("{} need {}", flags_where(false, spelling), flags_where(true, spelling)));
    return std::nullopt;
  }
  if (enabling < enablers)
    throw Error(fmt::format("{} go together: give both for a DP release", flags_where(true, spelling)));
  DpParams p;
  p.postprocess = DpPostprocess::NoiseUnits;
  return set_given(p, given);
}

std::optional<DpParams> dp_params_over(std::optional<DpParams> base, const DpGiven& given) {
  const auto& fields = dp_param_fields();
  bool any = false, all_enablers = true;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    any = any || given.at(i).has_value();
    if (fields[i].enables && !given[i]) all_enablers = false;
  }
  if (!any) return base;
  if (!base && !all_enablers)
    throw Error(fmt::format("the coordinator runs without DP: a party that wants DP must give both {} (and the "
                            "coordinator must agree)",
                            flags_where(true)));
  return set_given(base.value_or(DpParams{}), given);
}

std::vector<std::pair<std::string, std::string>> dp_fingerprint(const DpParams& dp) {
  return fingerprint_of(dp_param_fields(), dp);
}

}  // namespace flynn::federated
