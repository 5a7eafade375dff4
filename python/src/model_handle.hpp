#pragma once
// The C++ side of flynn.FlyNNClassifier: one flynn::FlyNN and the numpy-facing
// operations on it. The Python class keeps the scikit-learn conventions (validation,
// classes_, feature names); this class only moves rows and counts between numpy and the
// core, releasing the GIL around every pass over the data.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>

#include "flynn/classifier.hpp"
#include "flynn/config.hpp"
#include "flynn/data_view.hpp"

namespace flynn::python {

class CsrRows;  // sparse_rows.hpp

/// Class ids of the rows (one per row, each < number of classes), as numpy hands them over.
using LabelIds = pybind11::array_t<std::uint32_t, pybind11::array::c_style | pybind11::array::forcecast>;

/// A flynn::FlyNN driven from numpy: every method takes or returns numpy arrays and releases
/// the GIL while the core works. Like a scikit-learn estimator, one object is not meant to
/// be used from several Python threads at once.
class ModelHandle {
 public:
  /// An untrained model: `hyper` resolved for `n_features` inputs and `labels.size()`
  /// classes (throws flynn::Error naming the parameter and its range).
  ModelHandle(const HyperParams& hyper, std::uint32_t n_features, std::vector<std::string> labels,
              int threads);
  /// Takes an existing model (from a file, bytes or a federation).
  explicit ModelHandle(FlyNN model) : model_(std::move(model)) {}

  /// Parses a model file's bytes (the CLI's format); `source` names them in errors.
  /// `max_model_memory` bounds what the model will need, estimated from its header before
  /// anything is built (io::ModelMemoryLimit; 0 = the default limit for the file's size).
  static ModelHandle from_bytes(const std::string& bytes, const std::string& source, int threads,
                                std::uint64_t max_model_memory = 0);
  /// Reads a model file written by the CLI or save(), bounded as from_bytes.
  static ModelHandle load(const std::string& path, int threads, std::uint64_t max_model_memory = 0);

  /// The model file's bytes: deterministic, identical to what `flynn train` writes for
  /// the same data, labels and hyper-parameters.
  pybind11::bytes to_bytes() const;
  /// Writes the model file atomically.
  void save(const std::string& path) const;

  /// Forgets everything, then learns the rows (fit), learns them on top (partial_fit), or
  /// removes rows learned before (forget). The model is unchanged when one of them throws.
  /// Rows are a numpy array or a sparse CSR matrix (same values, same results).
  void fit(const pybind11::array& X, const LabelIds& y);
  void fit_sparse(const CsrRows& X, const LabelIds& y);
  void partial_fit(const pybind11::array& X, const LabelIds& y);
  void partial_fit_sparse(const CsrRows& X, const LabelIds& y);
  void forget(const pybind11::array& X, const LabelIds& y);
  void forget_sparse(const CsrRows& X, const LabelIds& y);
  /// Adds another model's counts (same configuration and labels).
  void merge(const ModelHandle& other) { model_.merge(other.model_); }

  /// Predicted class ids (n,), scores (n × L, lower = more familiar) and calibrated
  /// probabilities (n × L). The predicted class is the one of highest probability, the
  /// lowest class id among equal ones.
  pybind11::array_t<std::uint32_t> predict(const pybind11::array& X) const;
  pybind11::array_t<std::uint32_t> predict_sparse(const CsrRows& X) const;
  pybind11::array_t<double> scores(const pybind11::array& X) const;
  pybind11::array_t<double> scores_sparse(const CsrRows& X) const;
  pybind11::array_t<double> predict_proba(const pybind11::array& X) const;
  pybind11::array_t<double> predict_proba_sparse(const CsrRows& X) const;
  /// FlyNN::logits (n × L): the probabilities' logits, a decision function.
  pybind11::array_t<double> logits(const pybind11::array& X) const;
  pybind11::array_t<double> logits_sparse(const CsrRows& X) const;
  /// FlyNN::hash: each row's ρ winning units, ascending (n × ρ, uint32).
  pybind11::array_t<std::uint32_t> hash(const pybind11::array& X) const;
  pybind11::array_t<std::uint32_t> hash_sparse(const CsrRows& X) const;

  /// The calibration fit's sums (CalibrationLoss::totals(): per candidate of
  /// calibration_grid() the loss, then the right decisions, then the score order's right
  /// decisions; uint64) and the rows they cover: the rows (which the model holds) that a fit over
  /// `total_rows` rows would score, scored leave-one-out against the model's counts. A
  /// party's or partition's share of the fit; summed and given to calibrate_from_losses,
  /// they give the calibration fit() gives all the rows.
  pybind11::tuple calibration_loss(const pybind11::array& X, const LabelIds& y, std::uint64_t total_rows) const;
  pybind11::tuple calibration_loss_sparse(const CsrRows& X, const LabelIds& y, std::uint64_t total_rows) const;
  /// FlyNN::leave_one_out_scores (n × L) of rows the model holds.
  pybind11::array_t<double> leave_one_out_scores(const pybind11::array& X, const LabelIds& y) const;
  /// Sets the calibration of least summed loss (choose_calibration).
  void calibrate_from_losses(
      const pybind11::array_t<std::uint64_t, pybind11::array::c_style | pybind11::array::forcecast>& sums,
      std::uint64_t rows);
  /// A copy of the model's counts (L × m, uint32) and rows per class (L, uint64).
  pybind11::tuple counts() const;
  /// Replaces the counts (shapes L × m and L); `provenance` marks a DP release.
  void set_counts(const pybind11::array_t<std::uint32_t, pybind11::array::c_style | pybind11::array::forcecast>& counts,
                  const pybind11::array_t<std::uint64_t, pybind11::array::c_style | pybind11::array::forcecast>& rows,
                  const Provenance& provenance);

  /// The wrapped model (configuration, labels, provenance, threads).
  const FlyNN& model() const { return model_; }
  FlyNN& model() { return model_; }

 private:
  // The operations over any row source (NumpyRows or CsrRows, model_handle.cpp).
  template <typename Rows> void fit_rows(const Rows& rows, const LabelIds& y);
  template <typename Rows> void partial_fit_rows(const Rows& rows, const LabelIds& y);
  template <typename Rows> void forget_rows(const Rows& rows, const LabelIds& y);
  template <typename Rows> pybind11::array_t<std::uint32_t> predict_rows(const Rows& rows) const;
  template <typename Rows> pybind11::array_t<std::uint32_t> hash_rows(const Rows& rows) const;
  template <typename Rows>
  pybind11::tuple calibration_loss_rows(const Rows& rows, const LabelIds& y, std::uint64_t total_rows) const;
  using PerClassFn = std::vector<double> (FlyNN::*)(const DataView&, const PredictOptions&) const;
  /// scores or predict_proba (n × L) over the rows.
  template <typename Rows>
  pybind11::array_t<double> per_class(const Rows& rows, PerClassFn fn) const;

  FlyNN model_;
};

}  // namespace flynn::python
