#include "flynn/settings_table.hpp"

#include <fmt/format.h>

#include "flynn/detail/setting_rows.hpp"
#include "flynn/error.hpp"

namespace flynn {

namespace {

using detail::choice_row;
using detail::setting_row;

std::string class_weight_text(const ClassWeight& w) { return w.text(); }

OptionTable<HyperParams> make_hyper_param_fields() {
  using H = HyperParams;
  OptionTable<HyperParams> rows = {
      setting_row<&H::m, "m">({"--m", "FlyHash dimension m (output units; default 512*d within [4096, 131072] above 16 features, 256*d for anchor units and absolute scoring)"}),
      setting_row<&H::expansion_factor, "expansion_factor">(
          {"--expansion-factor", "m as a multiple of d: m = floor(factor*d)"}),
      setting_row<&H::s, "s">({"--s", "Ones per row of the lifting matrix (s <= d; default max(2, floor(0.3*d)), at most 64; max(8, 2d) for anchor units)"}),
      setting_row<&H::connection_sparsity, "connection_sparsity">(
          {"--connection-sparsity", "s as a fraction of d: s = max(2, floor(sparsity*d))"}),
      setting_row<&H::rho, "rho">({"--rho", "Winners per hash rho (rho < m; default max(128, floor(m/(2d))) above 16 features, 128 for anchor units)"}),
      setting_row<&H::wta_ratio, "wta_ratio">({"--wta-ratio", "rho as a fraction of m: max(2, floor(ratio*m))"}),
      setting_row<&H::wta_nnz, "wta_nnz">({"--wta-nnz", "rho given as the reference's wta_nnz"}),
      setting_row<&H::gamma, "gamma">({"--gamma", "Filter decay gamma in [0,1); 0 = binary filters (default 0.8, 0.5 for anchor units)"}),
      setting_row<&H::seed, "seed">({"--seed", fmt::format("Seed of the lifting matrix (default {})", Defaults::seed)}),
      choice_row<&H::preprocess, "preprocess", &parse_preprocess, &preprocess_name>(
          {"--preprocess", "Row preprocessing: normalize (default), densify, none"}),
      choice_row<&H::variant, "variant", &parse_variant, &variant_name>(
          {"--variant",
           std::string("Method variant: ") + variant_names() +
               " (default zsign-q+paper above 16 features, anchor up to 16; paper = the paper's exact method)"}),
      choice_row<&H::class_weight, "class_weight", &ClassWeight::parse, &class_weight_text>(
          {"--class-weight",
           "Class weights when scoring: none (default), balanced (w = n/(L*n_class), for imbalanced "
           "classes) or NAME=W,..."}),
      choice_row<&H::filter_scoring, "filter_scoring", &parse_filter_scoring, &filter_scoring_name>(
          {"--filter-scoring",
           "How filter values become class scores: relative (default; each class's values "
           "divided by its mean over all units, so a large class's counts do not make it "
           "near to every row) or absolute (the paper's; the default of --variant paper)"}),
      setting_row<&H::pairs, "pairs">(
          {"--pairs",
           fmt::format("Second-order filters: also count pairs of winners, each paired with the next PAIRS "
                       "(0 = off, the default; at most {}; the model grows {}x)",
                       Defaults::max_pairs, 1 + Defaults::pair_cells_per_unit)}),
      setting_row<&H::paper_half_min_columns, "paper_half_min_columns">(
          {"--paper-half-min-columns",
           fmt::format("A paper-half variant's second half hashes the raw row only when the training statistics "
                       "spread the rows' energy over at least this many columns, else the row as the first half does "
                       "(default {} for zsign-q+paper above {} features, else 0 = always the raw row)",
                       Defaults::paper_half_min_columns, Defaults::low_dim_max)}),
      choice_row<&H::value_transform, "value_transform", &parse_value_transform, &value_transform_name>(
          {"--value-transform",
           "Transform each feature value before a standardising variant reads it: none (default), "
           "sqrt or log1p (sign(v)*log(1+|v|)), which compress the large end of skewed columns "
           "such as pixels or counts; a paper half still hashes the raw row"}),
  };
  for (HyperParamField& f : rows) f.group = "Hyper-parameters";  // their --help group
  return rows;
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

const OptionTable<HyperParams>& hyper_param_fields() {
  static const OptionTable<HyperParams> fields = make_hyper_param_fields();
  return fields;
}

const HyperParamField* find_hyper_param(std::string_view name) { return find_setting(hyper_param_fields(), name); }

HyperParams with_given(HyperParams base, const HyperParams& given) {
  return with_given(hyper_param_fields(), std::move(base), given);
}

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = make_config_fields();
  return fields;
}

}  // namespace flynn
