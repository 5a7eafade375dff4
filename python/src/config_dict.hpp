#pragma once
// A FlyConfig as the Python values the package shows: one home for the names, so that
// FlyNNClassifier.config_, HyperParams.resolve and flynn.tune's best_params_ agree.
#include <pybind11/pybind11.h>

#include "flynn/config.hpp"

namespace flynn::python {

/// The estimator's hyper-parameters: m, s, rho, gamma, seed, preprocess, variant (the
/// keyword arguments of FlyNNClassifier; the rows of config_fields, settings_table.hpp,
/// marked estimator_param).
pybind11::dict config_params(const FlyConfig& c);
/// Every row of config_fields: config_params plus n_features (the resolved configuration
/// of a model), in the table's order.
pybind11::dict config_dict(const FlyConfig& c);

}  // namespace flynn::python
