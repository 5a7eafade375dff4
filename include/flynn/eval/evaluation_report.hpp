#pragma once
// What `flynn eval` and `flynn tune` report about a model or a configuration, in one
// place: a trained model judged on a labelled test file (accuracy, log-loss, ECE), and the
// JSON forms of the evaluation results both commands print (calibration, search); the kNN
// baseline's are in flynn/baselines/knn_report.hpp.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/classifier.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/eval/search.hpp"
#include "flynn/eval/tune.hpp"
#include "flynn/io/predict_file.hpp"
#include "flynn/io/row_stream.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// A trained model judged on a test file.
struct TestFileEvaluation {
  /// Rows, and accuracy of predict() (its lowest-class tie rule, as `flynn predict`
  /// reports it); rows with labels the model does not know count as errors.
  io::FilePrediction prediction;
  /// Rows whose label the model knows: log-loss and ECE (which need the row's class) are
  /// over them; 0 without labels.
  std::size_t known_rows = 0;
  double log_loss = 0.0, ece = 0.0;
};

/// Predicts `rows` (opened with io::model_load_options) chunk by chunk with the model's
/// probabilities (io::predict_file) and judges them. Throws flynn::Error on bad data.
TestFileEvaluation evaluate_test_file(io::RowStream& rows, const FlyNN& model, int threads = 0,
                                      ProgressFn progress = {});

/// {"rows", and with labels "accuracy", "log_loss" and "ece" (when some row's class is
/// known), "rows_with_unknown_label" (when some is not)}.
nlohmann::json to_json(const TestFileEvaluation& e);

/// The calibration (temperature, prior weight) fitted on out-of-fold scores, with its own,
/// the cross-fitted and the default calibration's log-loss and ECE.
nlohmann::json to_json(const CalibrationReport& c);

/// The calibration as one line of text: the fitted temperature and prior weight, their
/// cross-fitted log-loss and ECE, and the default calibration's.
std::string calibration_text(const CalibrationReport& c);

/// A search's design, budget, seed and time limit with what it did: evaluations (planned,
/// on all rows), cost, capped, time_limited, seconds.
nlohmann::json to_json(const SearchResult& s, const SearchOptions& o);

/// The comma-separated variant names of `flynn tune --variants` (parse_variant each).
std::vector<Variant> parse_variant_list(const std::string& comma_separated);

}  // namespace flynn::eval
