#pragma once
// A classification report (classification_report.hpp) of cross-validation: every row as
// the model trained on the other folds answers it. What `flynn eval --report` and
// `flynn tune --report` show.
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/calibration.hpp"
#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/eval/classification_report.hpp"

namespace flynn::eval {

/// The answers of fold models from out-of-fold scores (FlyCvEvaluator::out_of_fold_scores:
/// n × L, row r scored by the model trained on every fold but r's): for each row the class
/// FlyNN::predict returns (the lowest class among equal scores) and the probabilities
/// FlyNN::predict_proba returns, at `temperature`, with the class priors of that fold's
/// training rows and `config`'s class weight, as the fold's model would have them. A test
/// holds these to the predict and predict_proba of models trained on each fold.
struct FoldAnswers {
  std::vector<std::uint32_t> predicted;  ///< per row
  std::vector<double> proba;             ///< n × L, row-major
};

/// Throws flynn::Error on sizes that do not match `data` (labelled) and `fold_of_row`.
FoldAnswers out_of_fold_answers(const Dataset& data, const FlyConfig& config,
                                const std::vector<double>& scores,
                                const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                const Calibration& calibration);

/// The report of those answers against the rows' classes, titled `title`, described as
/// the out-of-fold answers of k-fold cross-validation with `calibration`.
ClassificationReport out_of_fold_report(const Dataset& data, const FlyConfig& config,
                                        const std::vector<double>& scores,
                                        const std::vector<std::uint32_t>& fold_of_row,
                                        std::uint32_t k, const Calibration& calibration, std::string title);

}  // namespace flynn::eval
