#pragma once
// Checks shared by the loader fuzz targets: whatever a parser accepts must be a
// well-formed Dataset; whatever it rejects must be rejected with flynn::Error (any other
// exception escapes and libFuzzer reports it as a crash).
#include <cmath>
#include <cstddef>
#include <vector>

#include "flynn/dataset.hpp"

namespace flynn::fuzz {

inline void check(bool ok) {
  if (!ok) __builtin_trap();
}

inline void check_dataset(const Dataset& d) {
  check(d.n_rows > 0);
  check(d.n_features > 0);
  check(d.features.size() == d.n_rows * d.n_features);
  for (float v : d.features) {
    check(std::isfinite(v));
    check(!(v == 0.0f && std::signbit(v)));  // -0 is normalised to +0
  }
  check(d.row_origin.size() == d.n_rows);
  for (std::size_t i = 1; i < d.row_origin.size(); ++i)
    check(d.row_origin[i] > d.row_origin[i - 1]);
  if (d.has_labels) {
    check(d.labels.size() == d.n_rows);
    check(!d.classes.empty());
    std::vector<bool> used(d.classes.size(), false);
    for (auto l : d.labels) {
      check(l < d.classes.size());
      used[l] = true;
    }
    // Loaders' classes are exactly the names present in the data, in LabelSet::sorted order.
    for (bool u : used) check(u);
    check(LabelSet::sorted(d.classes.names()) == d.classes);
    for (const auto& n : d.classes.names()) check(!n.empty());
  } else {
    check(d.labels.empty());
    check(d.classes.empty());
  }
}

}  // namespace flynn::fuzz
