#pragma once
// Class weights: how much each class's training rows count when a model scores.
//
// A weight w_l scales class l's counts before the filter is formed, w = γ^{w_l·c_l[i]}, as
// if each of its rows had been counted w_l times; with γ = 0 a unit counts as seen by the
// class once w_l·c_l[i] ≥ 1 (one weighted row), so the binary filters of a heavy class
// need as many rows to mark a unit as one row of a class of average size. The
// probabilities' class priors are weighted the same way (class_priors in scoring.hpp).
//
// The counts themselves stay exact integer row sums: weights are applied when a model
// scores, from the counts it holds, so training, merging, forgetting and federating are
// untouched and "balanced" weights of a merged or federated model are those of the model
// trained on all rows at once.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace flynn {

class ClassCounts;

struct ClassWeight {
  enum class Mode : std::uint8_t {
    None = 0,      ///< every class weighs 1 (the paper's method)
    Balanced = 1,  ///< w_l = n / (L'·n_l), as scikit-learn's class_weight="balanced"
    Given = 2,     ///< w_l from `given` by class name; classes not named weigh 1
  };
  Mode mode = Mode::None;
  /// (class name, weight) for Mode::Given, in the order given; weights finite and > 0.
  std::vector<std::pair<std::string, double>> given;

  /// Reads "none", "balanced" or "NAME=W,NAME=W,…" (a class name may hold '=' but not ','
  /// in this form; the weight follows its last '='). Throws flynn::Error naming the item,
  /// or as validate() does (a class named twice).
  static ClassWeight parse(const std::string& text);
  /// The text parse() reads back to this value ("none", "balanced", "yes=5,no=1" with
  /// weights in their shortest exact form).
  std::string text() const;
  bool is_none() const { return mode == Mode::None; }

  /// Throws flynn::Error unless Mode::Given has at least one class, each named once with
  /// a finite positive weight (and the other modes none).
  void validate() const;
  /// validate(), and every name of `given` is one of `class_names`.
  void check_classes(const std::vector<std::string>& class_names) const;

  /// The weight of each class of a model with these class names and counts; empty for
  /// Mode::None (every weight 1).
  ///
  /// "balanced" takes class sizes from the counts: n_l = Σ_i c_l[i] / ρ, which equals the
  /// training rows of class l for exact counts (each row adds exactly ρ winners), and for
  /// a differentially private release is a post-processing of the released counts (the
  /// release holds no row totals, and this costs no privacy budget). Classes without
  /// counts weigh 1 (their filters are empty either way); L' counts the classes with.
  std::vector<double> weights(const std::vector<std::string>& class_names,
                              const ClassCounts& counts, std::uint32_t rho) const;
  /// The same from class sizes n_l given directly (e.g. a cross-validation fold's training
  /// rows per class, which equal the counts' mass / ρ).
  std::vector<double> weights_for_sizes(const std::vector<std::string>& class_names,
                                        const std::vector<double>& sizes) const;

  bool operator==(const ClassWeight&) const = default;
};

}  // namespace flynn
