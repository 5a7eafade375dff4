#pragma once
// Settings between Python and the library, made from the table of settings
// (flynn/settings_table.hpp): a FlyConfig as the Python values the package shows (so that
// FlyNNClassifier.config_, HyperParams.resolve and flynn.tune's best_params_ agree), and
// HyperParams from Python keywords named as the table's rows.
#include <pybind11/pybind11.h>

#include "flynn/config.hpp"
#include "flynn/settings_table.hpp"

namespace flynn::python {

/// The estimator's hyper-parameters: m, s, rho, gamma, seed, preprocess, variant (the
/// keyword arguments of FlyNNClassifier; the rows of config_fields, settings_table.hpp,
/// marked estimator_param).
pybind11::dict config_params(const FlyConfig& c);
/// Every row of config_fields: config_params plus n_features (the resolved configuration
/// of a model), in the table's order.
pybind11::dict config_dict(const FlyConfig& c);

/// HyperParams from keywords named as the rows of hyper_param_fields (m, expansion_factor,
/// s, connection_sparsity, rho, wta_ratio, wta_nnz, gamma, seed, preprocess, variant);
/// None = not given (flynn's default). Raises TypeError for a name the table does not have
/// or a value of the wrong type (integers for counts, numbers for reals, str for names);
/// flynn::Error (ValueError) for an unknown choice name.
HyperParams hyper_params(const pybind11::dict& given);
/// The rows' names, in the table's order (flynn.fit_file's hyper-parameter keywords).
pybind11::tuple hyper_param_names();

/// A Python value as a setting of `kind` (an int for Unsigned, a number for Real, a str
/// for Choice; never a bool); TypeError naming the keyword `name` otherwise.
SettingValue python_setting(const char* name, SettingKind kind, const pybind11::handle& value);
/// A setting's value as the Python value it is (int, float, str).
pybind11::object setting_object(const SettingValue& value);

}  // namespace flynn::python
