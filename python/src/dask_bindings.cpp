#include "dask_bindings.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "flynn/class_counts.hpp"
#include "flynn/config.hpp"
#include "flynn/error.hpp"
#include "flynn/dataset.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/table_columns.hpp"
#include "flynn/table_schema.hpp"
#include "model_handle.hpp"
#include "numpy_rows.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

using Counts = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>;
using Rows = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;
using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;

/// Calls fn(row) with each row of `rows` as n_cols float32 values, as the model reads
/// them (float64 rounded to float32, uint8 widened as FlyNN::learn_feature_stats widens
/// them). Called with the GIL released.
template <typename Fn>
void for_each_float_row(const NumpyRows& rows, Fn&& fn) {
  std::vector<float> widened(rows.n_cols());
  for_each_view(rows, [&](const DataView& block, std::size_t) {
    for (std::size_t r = 0; r < block.n_rows(); ++r) {
      if (const float* f = block.floats()) {
        fn(f + r * block.row_stride());
      } else {
        const std::uint8_t* b = block.bytes() + r * block.row_stride();
        for (std::size_t j = 0; j < widened.size(); ++j) widened[j] = static_cast<float>(b[j]);
        fn(static_cast<const float*>(widened.data()));
      }
    }
  });
}

py::array_t<std::uint64_t> limbs_array(const std::vector<std::uint64_t>& limbs) {
  py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(limbs.size()));
  std::copy(limbs.begin(), limbs.end(), out.mutable_data());
  return out;
}

/// The exact feature sums of one partition's rows as FeatureSums::to_limbs (1 + 12·d
/// uint64 slots, each limb < 2^32): element-wise sums of such arrays over up to 2^32
/// partitions, in any order or tree, are the limbs of the sums of all rows. The rows are
/// read as the model reads them (under its value transform), so the statistics equal those FlyNN::fit computes on the
/// concatenated rows. The rows must be complete (missing cells filled).
py::array_t<std::uint64_t> feature_sum_limbs(const py::array& X, const std::string& value_transform) {
  const NumpyRows rows(X);
  const ValueTransform transform = parse_value_transform(value_transform);
  std::vector<std::uint64_t> limbs;
  {
    py::gil_scoped_release nogil;
    FeatureSums sums(static_cast<std::uint32_t>(rows.n_cols()), transform);
    for_each_float_row(rows, [&](const float* row) { sums.add_row(row); });
    limbs = sums.to_limbs();
  }
  return limbs_array(limbs);
}

/// The exact sums of one partition's non-missing (non-NaN) cells as
/// ImputationSums::to_limbs: like feature_sum_limbs, element-wise sums over partitions are
/// the limbs of the whole table's sums, whose means fill the missing cells under
/// missing="mean" exactly as central training's ImputationSums::of all rows.
py::array_t<std::uint64_t> imputation_sum_limbs(const py::array& X) {
  const NumpyRows rows(X);
  std::vector<std::uint64_t> limbs;
  {
    py::gil_scoped_release nogil;
    ImputationSums sums(static_cast<std::uint32_t>(rows.n_cols()));
    for_each_float_row(rows, [&](const float* row) { sums.add_row(row); });
    limbs = sums.to_limbs();
  }
  return limbs_array(limbs);
}

/// io::completed_schema of the training table's schema for the whole table's summed
/// imputation limbs: the schema central training stores under missing="mean" (the means
/// as fill values, or an empty schema when it has nothing to keep), as the federation
/// completes its tables with all-reduced sums.
TableSchema completed_schema(const TableSchema& schema, const Rows& limbs,
                             std::uint32_t n_features) {
  if (limbs.ndim() != 1) throw std::invalid_argument("imputation limbs must be one-dimensional");
  const std::vector<std::uint64_t> v(limbs.data(), limbs.data() + limbs.size());
  return io::completed_schema(schema, ImputationSums::from_limbs(v, n_features));
}

/// Missing (NaN) cells counted in summed imputation limbs.
std::uint64_t missing_cells(const Rows& limbs, std::uint32_t n_features) {
  if (limbs.ndim() != 1) throw std::invalid_argument("imputation limbs must be one-dimensional");
  const std::vector<std::uint64_t> v(limbs.data(), limbs.data() + limbs.size());
  return ImputationSums::from_limbs(v, n_features).missing_cells();
}

/// float32 rows (n × d) with every NaN cell replaced by fill[j] of its column, by
/// flynn::fill_missing (a copy; flynn::Error when fill does not have d values).
py::array_t<float> fill_missing_cells(const Floats& X, const Floats& fill) {
  if (X.ndim() != 2 || fill.ndim() != 1)
    throw std::invalid_argument("fill_missing_cells takes 2-D rows and a 1-D fill vector");
  Dataset data;
  data.n_rows = static_cast<std::size_t>(X.shape(0));
  data.n_features = static_cast<std::size_t>(X.shape(1));
  data.features.assign(X.data(), X.data() + X.size());
  const std::vector<float> values(fill.data(), fill.data() + fill.size());
  {
    py::gil_scoped_release nogil;
    fill_missing(data, values);
  }
  return to_numpy(std::move(data.features), {static_cast<py::ssize_t>(data.n_rows),
                                             static_cast<py::ssize_t>(data.n_features)});
}

py::array_t<float> floats_array(const std::vector<float>& v) {
  py::array_t<float> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

/// (centres, scales) of the rows whose summed limbs are given: FeatureSums::from_limbs then
/// stats(), exactly what every partition's model is given. Throws flynn::Error when the
/// limbs do not describe n_features features or count no row.
py::tuple feature_stats_from_limbs(const Rows& limbs, std::uint32_t n_features, const std::string& value_transform) {
  if (limbs.ndim() != 1) throw std::invalid_argument("feature sum limbs must be one-dimensional");
  const std::vector<std::uint64_t> v(limbs.data(), limbs.data() + limbs.size());
  const FeatureStats st = FeatureSums::from_limbs(v, n_features, parse_value_transform(value_transform)).stats();
  return py::make_tuple(floats_array(st.mean), floats_array(st.scale));
}

/// Gives a model the statistics all partitions share (before it learns anything).
void set_feature_stats(ModelHandle& model, const Floats& centres, const Floats& scales) {
  const std::size_t d = model.model().config().input_dim;
  if (centres.ndim() != 1 || scales.ndim() != 1 || static_cast<std::size_t>(centres.size()) != d ||
      static_cast<std::size_t>(scales.size()) != d)
    throw std::invalid_argument("feature statistics need " + std::to_string(d) +
                                " centres and " + std::to_string(d) + " scales");
  FeatureStats st;
  st.mean.assign(centres.data(), centres.data() + d);
  st.scale.assign(scales.data(), scales.data() + d);
  model.model().set_feature_stats(std::move(st));
}

/// The model's (centres, scales), or None when its variant does not standardise or it has
/// learned none yet.
std::optional<py::tuple> feature_stats(const ModelHandle& model) {
  const FeatureStats& st = model.model().feature_stats();
  if (st.empty()) return std::nullopt;
  return py::make_tuple(floats_array(st.mean), floats_array(st.scale));
}

/// The sum of count tables (L × m uint32 counts, L uint64 rows per class each) by
/// ClassCounts::operator+=: exact, in the model's own count type, and a flynn::Error
/// naming the class and unit when a count would pass 2^32 − 1.
py::tuple sum_counts(const std::vector<std::pair<Counts, Rows>>& parts) {
  if (parts.empty()) throw std::invalid_argument("sum_counts needs at least one count table");
  const auto table = [](const Counts& c, const Rows& r) {
    if (c.ndim() != 2 || r.ndim() != 1 || r.shape(0) != c.shape(0))
      throw std::invalid_argument("a count table is (L × m counts, L rows per class)");
    ClassCounts t(static_cast<std::size_t>(c.shape(0)), static_cast<std::uint32_t>(c.shape(1)));
    std::copy(c.data(), c.data() + c.size(), t.values().begin());
    std::copy(r.data(), r.data() + r.size(), t.rows_per_class().begin());
    return t;
  };
  ClassCounts total = table(parts[0].first, parts[0].second);
  for (std::size_t i = 1; i < parts.size(); ++i) total += table(parts[i].first, parts[i].second);
  py::array_t<std::uint32_t> counts({static_cast<py::ssize_t>(total.n_classes()),
                                     static_cast<py::ssize_t>(total.m())});
  std::copy(total.values().begin(), total.values().end(), counts.mutable_data());
  py::array_t<std::uint64_t> rows(static_cast<py::ssize_t>(total.n_classes()));
  std::copy(total.rows_per_class().begin(), total.rows_per_class().end(), rows.mutable_data());
  return py::make_tuple(counts, rows);
}

}  // namespace

void bind_dask(py::module_& m) {
  m.def("feature_sum_limbs", &feature_sum_limbs, py::arg("X"), py::arg("value_transform"));
  m.def("imputation_sum_limbs", &imputation_sum_limbs, py::arg("X"));
  m.def("completed_schema", &completed_schema, py::arg("schema"), py::arg("limbs"),
        py::arg("n_features"));
  m.def("missing_cells", &missing_cells, py::arg("limbs"), py::arg("n_features"));
  m.def("fill_missing_cells", &fill_missing_cells, py::arg("X"), py::arg("fill"));
  m.def("feature_stats_from_limbs", &feature_stats_from_limbs, py::arg("limbs"),
        py::arg("n_features"), py::arg("value_transform"));
  m.def("set_feature_stats", &set_feature_stats, py::arg("model"), py::arg("centres"),
        py::arg("scales"));
  m.def("feature_stats", &feature_stats, py::arg("model"));
  m.def("standardizes", [](const std::string& variant) { return parse_variant(variant).standardize; },
        py::arg("variant"), "Whether the variant standardises features with training statistics.");
  m.def("sum_counts", &sum_counts, py::arg("parts"));
}

}  // namespace flynn::python
