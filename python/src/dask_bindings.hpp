#pragma once
// flynn._flynn.dask: the exact pieces flynn.dask's reductions are made of: per-partition
// feature sums and imputation sums as integer limbs (FeatureSums / ImputationSums
// ::to_limbs), the statistics and the completed table schema (fill values) of their sums,
// filling missing cells, setting statistics on a model, and the overflow-checked sum of
// count tables (ClassCounts::operator+=), so that a Dask fit equals a central one exactly.
#include <pybind11/pybind11.h>

namespace flynn::python {

/// Adds feature_sum_limbs, imputation_sum_limbs, completed_schema, missing_cells,
/// fill_missing_cells, feature_stats_from_limbs, set_feature_stats, feature_stats,
/// standardizes and sum_counts to `m`.
void bind_dask(pybind11::module_& m);

}  // namespace flynn::python
