#include "flynn/class_weight.hpp"

#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "flynn/class_counts.hpp"
#include "flynn/error.hpp"

namespace flynn {

namespace {

// A weight's text: the shortest that reads back exactly.
std::string weight_text(double w) { return fmt::format("{}", w); }

double parse_weight(const std::string& text, const std::string& item) {
  double w = 0.0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, w);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(w) || !(w > 0.0))
    throw Error(fmt::format("class weight '{}': the weight '{}' is not a finite positive number",
                            item, text));
  return w;
}

}  // namespace

ClassWeight ClassWeight::parse(const std::string& text) {
  ClassWeight cw;
  if (text == "none") return cw;
  if (text == "balanced") {
    cw.mode = Mode::Balanced;
    return cw;
  }
  cw.mode = Mode::Given;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format(
          "class weight '{}': expected none, balanced or NAME=WEIGHT items separated by "
          "commas (e.g. yes=5,no=1)",
          item));
    cw.given.emplace_back(item.substr(0, eq), parse_weight(item.substr(eq + 1), item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  cw.validate();  // a class named twice
  return cw;
}

std::string ClassWeight::text() const {
  switch (mode) {
    case Mode::None:
      return "none";
    case Mode::Balanced:
      return "balanced";
    case Mode::Given:
      break;
  }
  std::string out;
  for (const auto& [name, w] : given) {
    if (!out.empty()) out += ',';
    out += name + "=" + weight_text(w);
  }
  return out;
}

void ClassWeight::validate() const {
  if (mode != Mode::Given) {
    if (!given.empty())
      throw Error(fmt::format("class weight {}: names weights of classes", text()));
    return;
  }
  if (given.empty()) throw Error("class weight: no class is given a weight");
  std::set<std::string> seen;
  for (const auto& [name, w] : given) {
    if (name.empty()) throw Error("class weight: a weight is given to an empty class name");
    if (!seen.insert(name).second)
      throw Error(fmt::format("class weight: class '{}' is given twice", name));
    if (!std::isfinite(w) || !(w > 0.0))
      throw Error(fmt::format(
          "class weight: the weight of '{}' ({}) is not a finite positive number", name, w));
  }
}

void ClassWeight::check_classes(const std::vector<std::string>& class_names) const {
  validate();
  for (const auto& item : given) {
    bool found = false;
    for (const std::string& c : class_names) found = found || c == item.first;
    if (found) continue;
    std::string list;
    for (const std::string& c : class_names) list += (list.empty() ? "" : ", ") + c;
    throw Error(fmt::format("class weight: '{}' is not a class of the model (classes: {})",
                            item.first, list));
  }
}

std::vector<double> ClassWeight::weights(const std::vector<std::string>& class_names,
                                         const ClassCounts& counts, std::uint32_t rho) const {
  if (mode == Mode::None) return {};
  // Sizes from the counts' mass (exact integers; for exact counts, the rows per class).
  std::vector<double> size(counts.n_classes(), 0.0);
  for (std::size_t l = 0; l < counts.n_classes(); ++l) {
    std::uint64_t mass = 0;
    const std::uint32_t* c = counts.of_class(l);
    for (std::uint32_t i = 0; i < counts.m(); ++i) mass += c[i];
    size[l] = static_cast<double>(mass) / static_cast<double>(rho == 0 ? 1 : rho);
  }
  return weights_for_sizes(class_names, size);
}

std::vector<double> ClassWeight::weights_for_sizes(const std::vector<std::string>& class_names,
                                                   const std::vector<double>& sizes) const {
  const std::size_t L = sizes.size();
  if (mode == Mode::None) return {};
  std::vector<double> w(L, 1.0);
  if (mode == Mode::Given) {
    for (std::size_t l = 0; l < L && l < class_names.size(); ++l)
      for (const auto& [name, weight] : given)
        if (name == class_names[l]) w[l] = weight;
    return w;
  }
  double total = 0.0;
  std::size_t present = 0;
  for (double n : sizes) {
    total += n;
    present += n > 0.0;
  }
  for (std::size_t l = 0; l < L; ++l)
    if (sizes[l] > 0.0) w[l] = total / (static_cast<double>(present) * sizes[l]);
  return w;
}

}  // namespace flynn
