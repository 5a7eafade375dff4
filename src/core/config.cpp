#include "flynn/config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flynn/detail/memory.hpp"
#include "flynn/error.hpp"
#include "flynn/random.hpp"
#include "flynn/settings_table.hpp"

namespace flynn {

namespace {

constexpr std::uint64_t kMaxUnits = (1ULL << 31) - 1;  // winners are stored as uint32

std::uint64_t floor_ratio(double ratio, double base) {
  return static_cast<std::uint64_t>(std::floor(ratio * base + 1e-9));
}

std::uint64_t memory_override = 0;  // detail::override_physical_memory_bytes

std::uint32_t next_power_of_two(std::uint32_t d) {
  // Above 2^31 there is none in 32 bits: saturate, as encoded_dim does (validate refuses
  // such a d for densify; estimates of unvalidated headers must not loop forever).
  if (d > (1u << 31)) return 0xFFFFFFFFu;
  std::uint32_t p = 1;
  while (p < d) p <<= 1;
  return p;
}

}  // namespace

namespace detail {

std::uint64_t physical_memory_bytes() {
  if (memory_override != 0) return memory_override;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 16ULL << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

void override_physical_memory_bytes(std::uint64_t bytes) { memory_override = bytes; }

}  // namespace detail

Preprocess parse_preprocess(const std::string& name) {
  if (name == "none") return Preprocess::None;
  if (name == "normalize" || name == "l2") return Preprocess::Normalize;
  if (name == "densify") return Preprocess::Densify;
  throw Error(fmt::format("preprocess: '{}' is not one of none, normalize, densify", name));
}

FilterScoring parse_filter_scoring(const std::string& name) {
  if (name == "absolute") return FilterScoring::Absolute;
  if (name == "relative") return FilterScoring::Relative;
  throw Error(fmt::format("filter scoring: '{}' is not one of absolute, relative", name));
}

const char* filter_scoring_name(FilterScoring s) {
  return s == FilterScoring::Relative ? "relative" : "absolute";
}

const char* preprocess_name(Preprocess p) {
  switch (p) {
    case Preprocess::None: return "none";
    case Preprocess::Normalize: return "normalize";
    case Preprocess::Densify: return "densify";
  }
  return "?";
}

void Variant::validate() const {
  if (thermometer != 0 && (thermometer < 2 || thermometer > 64))
    throw Error(fmt::format("thermometer = {}: must be 0 (off) or in [2, 64]", thermometer));
  if (anchors != 0 && (anchors < 2 || anchors > 64))
    throw Error(fmt::format("anchors = {}: must be 0 (off) or in [2, 64]", anchors));
  if (quantize > 1024)
    throw Error(fmt::format("quantize = {}: must be 0 (off) or in [1, 1024]", quantize));
  if ((thermometer || quantize) && !standardize)
    throw Error("variant: thermometer codes and quantisation work on standardised features "
                "(enable standardize)");
  if (anchors && !standardize)
    throw Error("variant: anchor units work on standardised features (enable standardize)");
  if (thermometer && quantize)
    throw Error("variant: thermometer codes are already integers; do not also quantize");
  if (anchors && (thermometer || quantize))
    throw Error("variant: anchor units are already integers and replace thermometer codes; "
                "use one of anchors, thermometer, quantize");
  if (anchors && signed_lifting)
    throw Error("variant: anchor units take no signed lifting (a negated closeness picks the "
                "farthest grid points)");
  if (paper_half && first_half().is_paper())
    throw Error("variant: paper_half needs a first half other than the paper's method "
                "(two paper hashes are one paper hash with more units)");
}

namespace {

struct NamedVariant {
  const char* name;
  Variant variant;
};

// The presets of --variant; variant_name() looks them up in this order.
const NamedVariant kNamedVariants[] = {
    {"paper", Variant{}},
    {"sign", Variant{false, true, 0, 0}},
    {"z", Variant{true, false, 0, 0}},
    {"zsign", Variant{true, true, 0, 0}},
    {"zsign-q", Variant{true, true, 0, 16}},
    {"thermo", Variant{true, false, 8, 0}},
    {"thermo-sign", Variant{true, true, 8, 0}},
    {"zsign-q+paper", Variant{true, true, 0, 16, true}},
    {"zsign+paper", Variant{true, true, 0, 0, true}},
    {"anchor", Variant{true, false, 0, 0, false, 8}},
    {"anchor+paper", Variant{true, false, 0, 0, true, 8}},
};

}  // namespace

// zsign-q+paper: half the units hash the standardised row (exact training statistics,
// signed lifting rows, fixed-point quantisation into the integer kernels), half the raw row
// the paper's way. Chosen on the selection half of the OpenML sets only (docs/design/defaults.md;
// research/variants/variants_study.py): zsign-q beat the paper's method (median gap to tuned kNN
// 1.65 vs 3.67 points); the paper half at the same m and ρ added 0.35 points of mean
// accuracy over zsign-q on the same sets (13 better, 14 worse, madelon +6.5) and keeps
// what standardising columns destroys (rows whose signal is their shape).
Variant Defaults::variant() { return Variant{true, true, 0, 16, true}; }

// anchor (8 anchor units per standardised feature) for d ≤ 16: chosen on selection data
// only: k random columns of each OpenML selection-half set and generated Gaussian mixtures
// of 10–30 classes in 2–16 dimensions. The study of the bound (research/defaults/history.md,
// research/defaults/anchor_rules/) set it at 10 under absolute scores (k = 12 favoured
// zsign-q+paper then); under relative scores anchors measured ahead at k = 12 and 16 (median
// gap 1.03 vs 2.35 points), and with their m, ρ and γ rules at 0.70 vs 2.35. Bounds 24 and 32 gained
// less on the OpenML selection half at 7–13× the hashing work and were not taken.
Variant Defaults::low_dim_variant() { return Variant{true, false, 0, 0, false, 8}; }

std::uint32_t Defaults::paper_half_min_columns_for(const Variant& v, std::uint32_t d) {
  return v == variant() && d > low_dim_max ? paper_half_min_columns : 0;
}

FilterScoring Defaults::filter_scoring(const Variant& variant) {
  return variant.is_paper() ? FilterScoring::Absolute : FilterScoring::Relative;
}

const char* variant_names() {
  return "paper, sign, z, zsign, zsign-q, thermo, thermo-sign, zsign-q+paper, zsign+paper, "
         "anchor, anchor+paper";
}

namespace {

// The descriptive form variant_name gives combinations without a name ("standardize+
// signed+thermometer=4"), read back so that every valid variant has a text form that
// parses to it (what the federation's wire relies on). None when `name` is not one.
std::optional<Variant> parse_variant_parts(const std::string& name) {
  Variant v;
  std::size_t at = 0;
  bool any = false;
  while (at <= name.size()) {
    const std::size_t plus = std::min(name.find('+', at), name.size());
    const std::string part = name.substr(at, plus - at);
    at = plus + 1;
    auto number = [&part](const char* key, std::uint32_t& out) {
      const std::string prefix = std::string(key) + "=";
      if (part.rfind(prefix, 0) != 0 || out != 0) return false;
      const std::string digits = part.substr(prefix.size());
      if (digits.empty() || digits.size() > 4 || digits[0] == '0' ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        return false;
      out = static_cast<std::uint32_t>(std::stoul(digits));
      return true;
    };
    if (part == "standardize" && !v.standardize) v.standardize = true;
    else if (part == "signed" && !v.signed_lifting) v.signed_lifting = true;
    else if (part == "paper-half" && !v.paper_half) v.paper_half = true;
    else if (!number("thermometer", v.thermometer) && !number("quantize", v.quantize) &&
             !number("anchors", v.anchors))
      return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return v;
}

}  // namespace

Variant parse_variant(const std::string& name) {
  for (const NamedVariant& nv : kNamedVariants)
    if (name == nv.name) return nv.variant;
  if (const std::optional<Variant> v = parse_variant_parts(name)) {
    // Only the form variant_name writes: a combination with a name goes by that name.
    if (variant_name(*v) == name) {
      v->validate();
      return *v;
    }
  }
  throw Error(fmt::format("variant: '{}' is not one of {}", name, variant_names()));
}

std::string variant_name(const Variant& v) {
  for (const NamedVariant& nv : kNamedVariants)
    if (v == nv.variant) return nv.name;
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : "+") + part; };
  if (v.standardize) add("standardize");
  if (v.signed_lifting) add("signed");
  if (v.thermometer) add(fmt::format("thermometer={}", v.thermometer));
  if (v.quantize) add(fmt::format("quantize={}", v.quantize));
  if (v.anchors) add(fmt::format("anchors={}", v.anchors));
  if (v.paper_half) add("paper-half");
  return out.empty() ? "paper" : out;
}

std::uint32_t FlyConfig::encoded_dim() const {
  const std::uint64_t w = std::uint64_t(input_dim) * variant.units_per_feature();
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(w, 0xFFFFFFFFu));
}

std::uint32_t FlyConfig::hash_input_dim() const {
  if (preprocess == Preprocess::Densify) return next_power_of_two(input_dim);
  const std::uint64_t w = encoded_dim();
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(variant.signed_lifting ? 2 * w : w, 0xFFFFFFFFu));
}

std::uint64_t FlyConfig::paper_half_seed() const {
  return SeededRng::keyed(seed, RngStream::PaperHalfSeed, 0).next_u64();
}

std::array<FlyConfig, 2> FlyConfig::halves(bool raw_second_half) const {
  if (!variant.paper_half)
    throw Error(fmt::format("variant {} has no halves", variant_name(variant)));
  std::array<FlyConfig, 2> out{*this, *this};
  // A half is a hash only: the pair cells are counted from the joined winners of both, and
  // the choice of the second half's input is the whole model's.
  out[0].pairs = out[1].pairs = 0;
  out[0].paper_half_min_columns = out[1].paper_half_min_columns = 0;
  out[0].m = m / 2;
  out[0].rho = rho / 2;
  out[0].variant = variant.first_half();
  out[1].m = m - m / 2;
  out[1].rho = rho - rho / 2;
  out[1].variant = raw_second_half ? Variant{} : variant.first_half();
  if (raw_second_half) out[1].value_transform = ValueTransform::None;
  out[1].seed = paper_half_seed();
  return out;
}

std::uint32_t FlyConfig::pair_cells() const {
  return pairs ? static_cast<std::uint32_t>(std::min<std::uint64_t>(std::uint64_t{m} * Defaults::pair_cells_per_unit,
                                                                    0xFFFFFFFFu - m))
               : 0;
}

std::vector<FlyConfig::CellBlock> FlyConfig::cell_blocks(double gamma) const {
  std::vector<CellBlock> blocks{{0, m, gamma}};
  if (pairs) blocks.push_back({m, cells(), Defaults::pair_gamma});
  return blocks;
}

std::uint64_t model_memory_bytes(const FlyConfig& c, std::size_t n_classes) {
  const std::uint64_t m = c.m, cells = std::uint64_t{c.m} + c.pair_cells(), L = n_classes;
  // counts (uint32) + prediction table (double) + per-thread training counts (2 threads
  // accounted), over every count cell + lifting matrix (uint32 columns).
  return cells * L * 4 + cells * L * 8 + 2 * cells * L * 4 + m * static_cast<std::uint64_t>(c.s) * 4;
}

void FlyConfig::validate(std::size_t n_classes) const {
  if (input_dim == 0) throw Error("d (input dimension): must be at least 1");
  if (static_cast<int>(preprocess) > 2) throw Error("preprocess: unknown value");
  if (static_cast<int>(filter_scoring) > 1) throw Error("filter scoring: unknown value");
  if (preprocess == Preprocess::Densify && input_dim > (1u << 30))
    throw Error(fmt::format("d = {} is too large for densify (at most 2^30)", input_dim));
  variant.validate();
  class_weight.validate();
  if (!variant.is_paper() && preprocess == Preprocess::Densify)
    throw Error(fmt::format("preprocess densify works only with variant paper (not {})",
                            variant_name(variant)));
  if (std::uint64_t(input_dim) * variant.units_per_feature() *
          (variant.signed_lifting ? 2 : 1) > (1u << 30))
    throw Error(fmt::format("d = {} is too large for variant {} (encoded rows above 2^30)",
                            input_dim, variant_name(variant)));
  // Lifting rows choose distinct columns of the encoded row (not of its mirror).
  const std::uint32_t width = preprocess == Preprocess::Densify ? hash_input_dim() : encoded_dim();
  if (m < 2 || m > kMaxUnits)
    throw Error(fmt::format("m = {}: must be in [2, {}]", m, kMaxUnits));
  if (s < 1 || s > width)
    throw Error(fmt::format("s = {}: must be in [1, {}] (the number of input columns{})", s,
                            width, preprocess == Preprocess::Densify ? " after densify" : ""));
  if (rho < 1 || rho >= m)
    throw Error(fmt::format("rho = {}: must be in [1, m-1] = [1, {}]", rho, m - 1));
  if (!(gamma >= 0.0 && gamma < 1.0))
    throw Error(fmt::format("gamma = {}: must be in [0, 1)", gamma));
  if (pairs > Defaults::max_pairs || (pairs > 0 && pairs >= rho))
    throw Error(fmt::format("pairs = {}: must be in [0, min({}, rho-1)] = [0, {}]", pairs, Defaults::max_pairs,
                            std::min<std::uint32_t>(Defaults::max_pairs, rho - 1)));
  if (pairs > 0 && std::uint64_t{m} * (1 + Defaults::pair_cells_per_unit) > (1ULL << 31) - 1)
    throw Error(fmt::format("m = {}: with pairs, m·{} count cells must stay below 2^31", m,
                            1 + Defaults::pair_cells_per_unit));
  if (pairs > 0 && std::uint64_t{pairs} * rho * 2 > pair_cells())
    throw Error(fmt::format("pairs = {}: pairs·rho = {} pair codes per row need at most half of the {} pair "
                            "cells (rho is too large for m)", pairs, std::uint64_t{pairs} * rho, pair_cells()));
  if (paper_half_min_columns > Defaults::max_paper_half_min_columns)
    throw Error(fmt::format("paper_half_min_columns = {}: must be in [0, {}]", paper_half_min_columns,
                            Defaults::max_paper_half_min_columns));
  if (paper_half_min_columns > 0 && !(variant.paper_half && variant.standardize))
    throw Error(fmt::format("paper_half_min_columns = {}: needs a paper-half variant whose first half "
                            "standardises (such as zsign-q+paper), not {}",
                            paper_half_min_columns, variant_name(variant)));
  if (static_cast<int>(value_transform) > 2) throw Error("value_transform: unknown value");
  if (value_transform != ValueTransform::None && !variant.standardize)
    throw Error(fmt::format("value_transform = {}: transforms the values a standardising variant reads "
                            "(such as zsign-q or zsign-q+paper), not variant {}, which reads the raw row",
                            value_transform_name(value_transform), variant_name(variant)));
  if (variant.paper_half) {
    // Each half needs at least one winner and a unit that loses; its s columns come from
    // the raw row (the second half) as well as from the encoded one.
    if (rho < 2 || rho / 2 >= m / 2 || rho - rho / 2 >= m - m / 2)
      throw Error(fmt::format("rho = {}: variant {} needs 2 ≤ rho and rho/2 < m/2 (each half "
                              "of the m = {} units takes its own winners)",
                              rho, variant_name(variant), m));
    if (s > input_dim)
      throw Error(fmt::format("s = {}: must be in [1, {}] (the paper half reads the d raw "
                              "columns)", s, input_dim));
  }
  if (n_classes > 0) check_memory(n_classes);
}

void FlyConfig::check_memory(std::size_t n_classes) const {
  const std::uint64_t need = model_memory_bytes(*this, n_classes);
  const std::uint64_t have = detail::physical_memory_bytes();
  if (need <= have / 2) return;
  const std::string what = n_classes > 0 ? fmt::format("m = {} with {} classes", m, n_classes)
                                         : fmt::format("m = {}, s = {} (the lifting matrix)", m, s);
  throw Error(fmt::format(
      "{} needs about {:.1f} GiB, more than half of this machine's {:.1f} GiB: choose a "
      "smaller m (or expansion factor)",
      what, need / double(1ULL << 30), have / double(1ULL << 30)));
}

std::string FlyConfig::describe() const {
  std::string out;
  for (const ConfigField& f : config_fields()) {
    const std::string value = setting_display(f.get(*this));
    if (f.omitted_at && value == f.omitted_at) continue;
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", f.key, value);
  }
  return out;
}

std::string FlyConfig::first_difference(const FlyConfig& o) const {
  for (const ConfigField& f : config_fields())
    if (f.get(*this) != f.get(o)) return f.name;
  return "";
}

Variant HyperParams::resolve_variant(std::uint32_t d) const {
  if (variant) return *variant;
  // Densify is the paper's preprocessing and excludes the variants: asking for it without
  // a variant means the paper's method, not an error.
  const Preprocess p = preprocess.value_or(Defaults::preprocess);
  if (p == Preprocess::Densify) return Variant{};
  return d <= Defaults::low_dim_max ? Defaults::low_dim_variant() : Defaults::variant();
}

namespace {

// resolve()'s steps for the three sizes, each from its own forms (m or expansion_factor; s
// or connection_sparsity; rho, wta_nnz or wta_ratio) or the defaults for the config so far
// (`wide_relative`: the wide-units rule for d > low_dim_max under relative scoring).
std::uint32_t resolved_m(const HyperParams& h, const FlyConfig& c, bool wide_relative) {
  const std::uint32_t d = c.input_dim;
  std::uint64_t mm;
  if (h.m) {
    mm = *h.m;
  } else if (h.expansion_factor) {
    if (!(*h.expansion_factor > 0.0) || !std::isfinite(*h.expansion_factor))
      throw Error(fmt::format("expansion_factor = {}: must be a positive number", *h.expansion_factor));
    mm = floor_ratio(*h.expansion_factor, d);
  } else {
    const std::uint64_t min_m = c.variant.anchors ? Defaults::anchor_min_m : Defaults::min_m;
    const double factor = wide_relative ? Defaults::wide_expansion_factor : Defaults::expansion_factor;
    mm = std::clamp<std::uint64_t>(floor_ratio(factor, d), min_m, Defaults::max_m);
  }
  if (mm > kMaxUnits) throw Error(fmt::format("m = {}: must be in [2, {}]", mm, kMaxUnits));
  return static_cast<std::uint32_t>(mm);
}

std::uint32_t resolved_s(const HyperParams& h, const FlyConfig& c) {
  const std::uint32_t d = c.input_dim;
  const std::uint32_t width = c.preprocess == Preprocess::Densify ? c.hash_input_dim() : c.encoded_dim();
  std::uint64_t ss;
  if (h.s) {
    ss = *h.s;
  } else {
    const double cs = h.connection_sparsity.value_or(Defaults::connection_sparsity);
    if (!(cs > 0.0 && cs <= 1.0)) throw Error(fmt::format("connection_sparsity = {}: must be in (0, 1]", cs));
    ss = std::max<std::uint64_t>(2, floor_ratio(cs, d));
    // Anchor units (the low-dimensional default): a unit reads max(8, 2d) of the K·d anchor
    // units up to low_dim_max features, max(8, d) above (half of them at most), so it
    // measures a distance in several coordinates.
    if (c.variant.anchors && !h.connection_sparsity) {
      const std::uint64_t per_feature = d <= Defaults::low_dim_max ? Defaults::anchor_s_per_feature : 1;
      ss = std::min<std::uint64_t>(std::max<std::uint64_t>(Defaults::low_dim_min_s, per_feature * d),
                                   std::max<std::uint64_t>(1, width / 2));
    }
    if (!h.connection_sparsity)  // defaults never fail, and stay cheap on wide data
      ss = std::min<std::uint64_t>({ss, width, Defaults::max_s});
    if (c.variant.paper_half) ss = std::min<std::uint64_t>(ss, d);  // the paper half reads d columns
  }
  if (ss > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("s = {}: must be in [1, {}]", ss, width));
  return static_cast<std::uint32_t>(ss);
}

std::uint32_t resolved_rho(const HyperParams& h, const FlyConfig& c, bool wide_relative) {
  std::uint64_t rr;
  if (h.rho) {
    rr = *h.rho;
  } else if (h.wta_nnz) {
    rr = *h.wta_nnz;
  } else if (h.wta_ratio) {
    if (!(*h.wta_ratio > 0.0 && *h.wta_ratio < 1.0))
      throw Error(fmt::format("wta_ratio = {}: must be in (0, 1)", *h.wta_ratio));
    rr = std::max<std::uint64_t>(2, floor_ratio(*h.wta_ratio, c.m));
  } else {
    // Anchor units are grid points, not repeats of few column sets: a fixed ρ, without
    // the m/(4d) term and whatever the scoring.
    const double per_unit =
        wide_relative ? Defaults::wide_rho_per_unit_and_feature : Defaults::rho_per_unit_and_feature;
    const std::uint64_t by_ratio = c.variant.anchors ? 0 : floor_ratio(per_unit / c.input_dim, c.m);
    const std::uint64_t floor = c.variant.anchors                             ? Defaults::anchor_rho
                                : c.filter_scoring == FilterScoring::Relative ? Defaults::relative_rho
                                                                              : Defaults::rho;
    rr = std::min<std::uint64_t>(std::max<std::uint64_t>(floor, by_ratio), c.m > 1 ? c.m - 1 : 1);
  }
  if (rr > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("rho = {}: must be in [1, m-1] = [1, {}]", rr, c.m - 1));
  return static_cast<std::uint32_t>(rr);
}

}  // namespace

FlyConfig HyperParams::resolve(std::uint32_t d, std::size_t n_classes) const {
  if (d == 0) throw Error("d (input dimension): the data has no feature columns");
  if (m && expansion_factor) throw Error("give either m or expansion_factor, not both");
  if (s && connection_sparsity)
    throw Error("give either s or connection_sparsity, not both");
  const int rho_forms = (rho ? 1 : 0) + (wta_ratio ? 1 : 0) + (wta_nnz ? 1 : 0);
  if (rho_forms > 1) throw Error("give only one of rho, wta_ratio, wta_nnz");

  FlyConfig c;
  c.input_dim = d;
  c.preprocess = preprocess.value_or(Defaults::preprocess);
  c.seed = seed.value_or(Defaults::seed);
  c.variant = resolve_variant(d);
  c.variant.validate();
  c.gamma = gamma.value_or(c.variant.anchors ? Defaults::anchor_gamma : Defaults::gamma);
  c.class_weight = class_weight.value_or(ClassWeight{});
  c.class_weight.validate();  // names are checked against a model's classes by FlyNN
  c.filter_scoring = filter_scoring.value_or(Defaults::filter_scoring(c.variant));
  // The wide-units rule for d > low_dim_max under relative scoring (Defaults;
  // research/defaults/wide_units/).
  const bool wide_relative = !c.variant.anchors && d > Defaults::low_dim_max &&
                             c.filter_scoring == FilterScoring::Relative;
  c.m = resolved_m(*this, c, wide_relative);
  c.s = resolved_s(*this, c);
  c.rho = resolved_rho(*this, c, wide_relative);
  if (pairs && *pairs > Defaults::max_pairs)
    throw Error(fmt::format("pairs = {}: must be in [0, {}]", *pairs, Defaults::max_pairs));
  c.pairs = static_cast<std::uint32_t>(pairs.value_or(0));
  if (paper_half_min_columns && *paper_half_min_columns > Defaults::max_paper_half_min_columns)
    throw Error(fmt::format("paper_half_min_columns = {}: must be in [0, {}]", *paper_half_min_columns,
                            Defaults::max_paper_half_min_columns));
  c.paper_half_min_columns = static_cast<std::uint32_t>(
      paper_half_min_columns.value_or(Defaults::paper_half_min_columns_for(c.variant, d)));
  c.value_transform = resolve_value_transform();

  c.validate(n_classes);
  return c;
}

}  // namespace flynn
