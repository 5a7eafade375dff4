#include "flynn/eval/auto_report.hpp"

#include <fmt/format.h>

#include "flynn/eval/study_io.hpp"

namespace flynn::eval {

namespace {

std::string chosen_name(const AutoChoice& c) { return c.candidates[c.chosen].name; }

// What was chosen and why, one line: the body of auto_choice_text and of each fold's line.
std::string choice_line(const AutoChoice& c) {
  if (c.cv.empty()) return fmt::format("kept the default ({} rows: too few to cross-validate)\n", c.rows);
  return fmt::format("chose {}, γ = {} (CV {} {:.4f} against the default's {:.4f}, on {} rows, {:.2f} s)\n",
                     chosen_name(c), c.gammas[c.chosen_gamma], cv_metric_name(c.metric), c.chosen_metric,
                     c.default_metric, c.rows, c.seconds);
}

}  // namespace

nlohmann::json auto_choice_json(const AutoChoice& c) {
  nlohmann::json metric = nlohmann::json::object();
  for (std::size_t i = 0; i < c.cv.size(); ++i) {
    nlohmann::json per_gamma = nlohmann::json::array();
    for (const CvResult& r : c.cv[i]) per_gamma.push_back(r.metric(c.metric));
    metric[c.candidates[i].name] = per_gamma;
  }
  return {{"chosen", chosen_name(c)},     {"gamma", c.gammas[c.chosen_gamma]},
          {"rows", c.rows},               {"gammas", c.gammas},
          {"margin", c.margin},
          {"metric", cv_metric_name(c.metric)}, {"cv", metric},
          {"default_metric", c.default_metric}, {"chosen_metric", c.chosen_metric},
          {"seconds", c.seconds}};
}

std::string auto_choice_text(const AutoChoice& c) { return "auto: " + choice_line(c); }

nlohmann::json auto_cv_json(const AutoCvResult& r) {
  nlohmann::json j;
  j["gammas"] = r.gammas;
  for (const AutoCandidate& c : r.candidates) j["candidates"].push_back({{"name", c.name}, {"config", config_json(c.config)}});
  for (const AutoChoice& choice : r.choices) {
    nlohmann::json inner = nlohmann::json::array(), inner_folds = nlohmann::json::array();
    for (const auto& per_gamma : choice.cv) {
      nlohmann::json means = nlohmann::json::array(), folds = nlohmann::json::array();
      for (const CvResult& cv : per_gamma) {
        means.push_back(cv.metric(choice.metric));
        folds.push_back(cv.fold_accuracy);
      }
      inner.push_back(means);
      inner_folds.push_back(folds);
    }
    j["folds"].push_back({{"chosen", chosen_name(choice)},
                          {"gamma", choice.gammas[choice.chosen_gamma]},
                          {"rows", choice.rows},
                          {"margin", choice.margin},
                          {"inner", inner},
                          {"inner_folds", inner_folds}});
  }
  for (const auto& per_gamma : r.outer) {
    nlohmann::json folds = nlohmann::json::array();  // empty: a candidate no fold chose
    for (const CvResult& cv : per_gamma) folds.push_back(cv.fold_accuracy);
    j["outer"].push_back(folds);
  }
  return j;
}

std::string auto_cv_text(const AutoCvResult& r) {
  std::string out = fmt::format("auto: {} candidates, γ in {}\n", r.candidates.size(), fmt::join(r.gammas, ", "));
  for (std::size_t f = 0; f < r.choices.size(); ++f) out += fmt::format("  fold {}: {}", f + 1, choice_line(r.choices[f]));
  return out;
}

}  // namespace flynn::eval
