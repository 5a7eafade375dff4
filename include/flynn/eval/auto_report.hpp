#pragma once
// What `flynn train --auto` and `flynn eval --auto` report about the automatic choice
// (auto_config.hpp), as JSON and as text.
#include <string>

#include <nlohmann/json.hpp>

#include "flynn/eval/auto_config.hpp"

namespace flynn::eval {

/// {"chosen", "gamma", "rows", "margin", "gammas", "metric", "cv": {candidate name: [its CV metric per γ]},
///  "default_metric", "chosen_metric", "seconds"}
nlohmann::json auto_choice_json(const AutoChoice& choice);
/// "auto: chose zsign-q, γ = 0 (CV accuracy 0.9123 against the default's 0.8811, on 1200 rows, 0.4 s)\n"
std::string auto_choice_text(const AutoChoice& choice);

/// {"candidates": [{"name", "config"}], "gammas", "folds": [{"chosen", "gamma", "rows",
///  "inner": [candidate][γ] CV metric means, "inner_folds": [candidate][γ][inner fold] accuracies}],
///  "outer": [candidate][γ][outer fold] accuracies, [] for a candidate not scored}
nlohmann::json auto_cv_json(const AutoCvResult& result);
/// One line per outer fold: the candidate and γ it chose.
std::string auto_cv_text(const AutoCvResult& result);

}  // namespace flynn::eval
