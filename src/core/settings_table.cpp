#include "flynn/settings_table.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

namespace {

// Rows for the optional<uint64_t> and optional<double> members, made from the member
// pointer: typed access without a hand-written getter and setter per field.
template <auto Member>
HyperParamField unsigned_field(const char* name, const char* flag, std::string help) {
  return {name, flag, std::move(help), SettingKind::Unsigned,
          [](const HyperParams& h) -> std::optional<SettingValue> {
            if (!(h.*Member)) return std::nullopt;
            return SettingValue(*(h.*Member));
          },
          [](HyperParams& h, const SettingValue& v) {
            h.*Member = setting_as<std::uint64_t>(v, "hyper-parameter");
          }};
}

template <auto Member>
HyperParamField real_field(const char* name, const char* flag, std::string help) {
  return {name, flag, std::move(help), SettingKind::Real,
          [](const HyperParams& h) -> std::optional<SettingValue> {
            if (!(h.*Member)) return std::nullopt;
            return SettingValue(*(h.*Member));
          },
          [](HyperParams& h, const SettingValue& v) { h.*Member = setting_as<double>(v, "hyper-parameter"); }};
}

// Rows for the optional named choices (Choice kind): `Name` gives a value's canonical name,
// `Parse` reads a name (aliases too) and throws flynn::Error naming the setting otherwise.
template <auto Member, auto Parse, auto Name>
HyperParamField choice_field(const char* name, const char* flag, std::string help) {
  return {name, flag, std::move(help), SettingKind::Choice,
          [](const HyperParams& h) -> std::optional<SettingValue> {
            if (!(h.*Member)) return std::nullopt;
            return SettingValue(std::string(Name(*(h.*Member))));
          },
          [](HyperParams& h, const SettingValue& v) { h.*Member = Parse(setting_as<std::string>(v, "hyper-parameter")); }};
}

std::string class_weight_text(const ClassWeight& w) { return w.text(); }

std::vector<HyperParamField> make_hyper_param_fields() {
  std::vector<HyperParamField> f;
  f.push_back(unsigned_field<&HyperParams::m>("m", "--m", "FlyHash dimension m (output units; default 512*d within [4096, 131072] above 16 features, 256*d for anchor units and absolute scoring)"));
  f.push_back(real_field<&HyperParams::expansion_factor>(
      "expansion_factor", "--expansion-factor", "m as a multiple of d: m = floor(factor*d)"));
  f.push_back(unsigned_field<&HyperParams::s>("s", "--s", "Ones per row of the lifting matrix (s <= d; default max(2, floor(0.3*d)), at most 64; max(8, 2d) for anchor units)"));
  f.push_back(real_field<&HyperParams::connection_sparsity>(
      "connection_sparsity", "--connection-sparsity",
      "s as a fraction of d: s = max(2, floor(sparsity*d))"));
  f.push_back(unsigned_field<&HyperParams::rho>("rho", "--rho", "Winners per hash rho (rho < m; default max(128, floor(m/(2d))) above 16 features, 128 for anchor units)"));
  f.push_back(real_field<&HyperParams::wta_ratio>("wta_ratio", "--wta-ratio",
                                                  "rho as a fraction of m: max(2, floor(ratio*m))"));
  f.push_back(unsigned_field<&HyperParams::wta_nnz>("wta_nnz", "--wta-nnz",
                                                    "rho given as the reference's wta_nnz"));
  f.push_back(real_field<&HyperParams::gamma>("gamma", "--gamma",
                                              "Filter decay gamma in [0,1); 0 = binary filters (default 0.8, 0.5 for anchor units)"));
  f.push_back(unsigned_field<&HyperParams::seed>(
      "seed", "--seed", fmt::format("Seed of the lifting matrix (default {})", Defaults::seed)));
  f.push_back(choice_field<&HyperParams::preprocess, &parse_preprocess, &preprocess_name>(
      "preprocess", "--preprocess", "Row preprocessing: normalize (default), densify, none"));
  f.push_back(choice_field<&HyperParams::variant, &parse_variant, &variant_name>(
      "variant", "--variant",
      std::string("Method variant: ") + variant_names() +
          " (default zsign-q+paper above 16 features, anchor up to 16; paper = the paper's exact method)"));
  f.push_back(choice_field<&HyperParams::class_weight, &ClassWeight::parse, &class_weight_text>(
      "class_weight", "--class-weight",
      "Class weights when scoring: none (default), balanced (w = n/(L*n_class), for imbalanced "
      "classes) or NAME=W,..."));
  f.push_back(choice_field<&HyperParams::filter_scoring, &parse_filter_scoring, &filter_scoring_name>(
      "filter_scoring", "--filter-scoring",
      "How filter values become class scores: relative (default; each class's values "
      "divided by its mean over all units, so a large class's counts do not make it "
      "near to every row) or absolute (the paper's; the default of --variant paper)"));
  f.push_back(unsigned_field<&HyperParams::pairs>(
      "pairs", "--pairs",
      fmt::format("Second-order filters: also count pairs of winners, each paired with the next PAIRS "
                  "(0 = off, the default; at most {}; the model grows {}x)",
                  Defaults::max_pairs, 1 + Defaults::pair_cells_per_unit)));
  f.push_back(unsigned_field<&HyperParams::paper_half_min_columns>(
      "paper_half_min_columns", "--paper-half-min-columns",
      fmt::format("A paper-half variant's second half hashes the raw row only when the training statistics "
                  "spread the rows' energy over at least this many columns, else the row as the first half does "
                  "(default {} for zsign-q+paper above {} features, else 0 = always the raw row)",
                  Defaults::paper_half_min_columns, Defaults::low_dim_max)));
  f.push_back(choice_field<&HyperParams::value_transform, &parse_value_transform, &value_transform_name>(
      "value_transform", "--value-transform",
      "Transform each feature value before a standardising variant reads it: none (default), "
      "sqrt or log1p (sign(v)*log(1+|v|)), which compress the large end of skewed columns "
      "such as pixels or counts; a paper half still hashes the raw row"));
  return f;
}

std::vector<ConfigField> make_config_fields() {
  using V = SettingValue;
  const auto U = SettingKind::Unsigned;
  return {
      {"d (input dimension)", "d", "n_features", U,
       [](const FlyConfig& c) { return V(std::uint64_t{c.input_dim}); }, true, false, nullptr},
      {"m", "m", "m", U, [](const FlyConfig& c) { return V(std::uint64_t{c.m}); }, true, true, nullptr},
      {"s", "s", "s", U, [](const FlyConfig& c) { return V(std::uint64_t{c.s}); }, true, true, nullptr},
      {"rho", "rho", "rho", U, [](const FlyConfig& c) { return V(std::uint64_t{c.rho}); }, true, true,
       nullptr},
      {"gamma", "gamma", "gamma", SettingKind::Real, [](const FlyConfig& c) { return V(c.gamma); },
       true, true, nullptr},
      {"seed", "seed", "seed", U, [](const FlyConfig& c) { return V(c.seed); }, false, true, nullptr},
      {"preprocess", "preprocess", "preprocess", SettingKind::Choice,
       [](const FlyConfig& c) { return V(std::string(preprocess_name(c.preprocess))); }, true, true,
       nullptr},
      {"variant", "variant", "variant", SettingKind::Choice,
       [](const FlyConfig& c) { return V(variant_name(c.variant)); }, true, true, "paper"},
      {"class_weight", "class_weight", "class_weight", SettingKind::Choice,
       [](const FlyConfig& c) { return V(c.class_weight.text()); }, true, true, "none"},
      {"filter scoring", "filter_scoring", "filter_scoring", SettingKind::Choice,
       [](const FlyConfig& c) { return V(std::string(filter_scoring_name(c.filter_scoring))); }, true,
       true, "absolute"},
      {"pairs", "pairs", "pairs", U, [](const FlyConfig& c) { return V(std::uint64_t{c.pairs}); }, true, true, "0"},
      {"paper_half_min_columns", "paper_half_min_columns", "paper_half_min_columns", U,
       [](const FlyConfig& c) { return V(std::uint64_t{c.paper_half_min_columns}); }, true, true, "0"},
      {"value_transform", "value_transform", "value_transform", SettingKind::Choice,
       [](const FlyConfig& c) { return V(std::string(value_transform_name(c.value_transform))); }, true,
       true, "none"},
  };
}

}  // namespace

const std::vector<HyperParamField>& hyper_param_fields() {
  static const std::vector<HyperParamField> fields = make_hyper_param_fields();
  return fields;
}

const HyperParamField* find_hyper_param(std::string_view name) {
  for (const HyperParamField& f : hyper_param_fields())
    if (name == f.name) return &f;
  return nullptr;
}

HyperParams with_given(HyperParams base, const HyperParams& given) {
  for (const HyperParamField& f : hyper_param_fields())
    if (const auto v = f.get(given)) f.set(base, *v);
  return base;
}

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = make_config_fields();
  return fields;
}

std::string setting_text(const SettingValue& value) {
  if (const auto* u = std::get_if<std::uint64_t>(&value)) return std::to_string(*u);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{:.17g}", *d);
  return std::get<std::string>(value);
}

std::string setting_display(const SettingValue& value) {
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  return setting_text(value);
}

SettingValue parse_setting(SettingKind kind, std::string_view text, std::string_view name) {
  switch (kind) {
    case SettingKind::Unsigned: {
      std::uint64_t u = 0;
      const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), u);
      if (!digits || ec != std::errc() || end != text.data() + text.size())
        throw Error(fmt::format("{}: '{}' is not an unsigned integer in [0, {}]", name, text,
                                std::numeric_limits<std::uint64_t>::max()));
      return u;
    }
    case SettingKind::Real: {
      double d = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(d))
        throw Error(fmt::format("{}: '{}' is not a finite number", name, text));
      return d;
    }
    case SettingKind::Choice:
      if (text.empty()) throw Error(fmt::format("{}: an empty name", name));
      return std::string(text);
  }
  throw Error(fmt::format("{}: unknown kind of setting", name));
}

void wrong_setting_kind(std::string_view setting, SettingKind want) {
  throw Error(fmt::format("{}: expected a value of kind {}", setting, setting_kind_name(want)));
}

const char* setting_kind_name(SettingKind kind) {
  switch (kind) {
    case SettingKind::Unsigned: return "unsigned integer";
    case SettingKind::Real: return "number";
    case SettingKind::Choice: return "name";
  }
  return "?";
}

}  // namespace flynn
