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

  /// Predicted class ids (n,), scores (n × L, lower = more familiar) and probabilities
  /// softmax(−score/ρ) (n × L). Ties go to the lowest class id.
  pybind11::array_t<std::uint32_t> predict(const pybind11::array& X) const;
  pybind11::array_t<std::uint32_t> predict_sparse(const CsrRows& X) const;
  pybind11::array_t<double> scores(const pybind11::array& X) const;
  pybind11::array_t<double> scores_sparse(const CsrRows& X) const;
  pybind11::array_t<double> predict_proba(const pybind11::array& X) const;
  pybind11::array_t<double> predict_proba_sparse(const CsrRows& X) const;
  /// FlyNN::hash: each row's ρ winning units, ascending (n × ρ, uint32).
  pybind11::array_t<std::uint32_t> hash(const pybind11::array& X) const;
  pybind11::array_t<std::uint32_t> hash_sparse(const CsrRows& X) const;

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
  using PerClassFn = std::vector<double> (FlyNN::*)(const DataView&, const PredictOptions&) const;
  /// scores or predict_proba (n × L) over the rows.
  template <typename Rows>
  pybind11::array_t<double> per_class(const Rows& rows, PerClassFn fn) const;

  FlyNN model_;
};

}  // namespace flynn::python
