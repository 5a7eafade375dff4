#pragma once
// The synthetic study of the paper's appendix D.2 (Table 1: dense data; Table 3: binary
// data): for each configuration, many generated datasets, every method on each, and the
// normalised accuracy 1 − a/a_kNNC of each method summarised as mean ± standard error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/harness/statistics.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// One generator configuration.
struct SyntheticConfig {
  bool binary = false;        ///< false: make_classification in ℝ^d; true: {0,1}^d, b ones per row
  std::size_t d = 50;         ///< features
  std::size_t n = 1000;       ///< rows
  std::size_t b = 0;          ///< ones per row (binary only)
  std::size_t classes = 5;    ///< L
  std::size_t clusters = 3;   ///< clusters per class
  double class_sep = 1.2;

  /// "dense-d50-n1000" / "binary-d50-n1000-b5": key of result files.
  std::string key() const;
  /// "dense, d = 50, n = 1000" style label for tables.
  std::string label() const;
};

/// The paper's grid: d ∈ {50, 100} × n ∈ {10^3, 10^4}, 5 classes, 3 clusters per class,
/// class_sep 1.2, all features informative; dense (Table 1) then binary with b = d/10
/// ones per row (Table 3 analogue).
std::vector<SyntheticConfig> paper_synthetic_configs();

/// Dataset `rep` of configuration number `config_index` (deterministic: SeededRng stream
/// (seed, Synthetic, 1000·config_index + rep)).
Dataset make_synthetic(const SyntheticConfig& config, std::size_t config_index, std::size_t rep,
                       std::uint64_t seed);

/// Result id of a synthetic dataset: "<key>-r<rep>", rep zero-padded to 2 digits.
std::string synthetic_dataset_id(const SyntheticConfig& config, std::size_t rep);

/// One cell of Table 1/3: normalised accuracy of a method over a configuration's datasets.
struct Table1Cell {
  std::string config;        ///< SyntheticConfig::key()
  std::string label;         ///< SyntheticConfig::label()
  bool binary = false;
  std::string method;
  MeanSe normalized;         ///< mean ± se of 1 − a/a_kNNC over the datasets
  MeanSe accuracy;           ///< mean ± se of the raw accuracy
};

/// Groups studies by configuration (their ids start with the config key) and summarises
/// every method except kNNC (whose normalised accuracy is 0 by definition). Datasets where
/// kNNC or the method failed are left out of that cell.
std::vector<Table1Cell> synthetic_table1(const std::vector<SyntheticConfig>& configs,
                                         const std::vector<DatasetStudy>& studies);

/// table1.csv: variant,d,n,b,method,n_datasets,mean_normalized_accuracy,se,mean_accuracy.
void write_table1_csv(const std::string& path, const std::vector<SyntheticConfig>& configs,
                      const std::vector<Table1Cell>& cells);

/// The Markdown report: Table 1 (dense) and the Table 3 analogue (binary) as
/// configuration × method grids of "mean ± se", the paper's Table-1 ranges beside them,
/// Table-2 statistics pooled over all synthetic datasets, and the setup.
std::string synthetic_report_markdown(const std::vector<SyntheticConfig>& configs,
                                      const std::vector<Table1Cell>& cells,
                                      const std::vector<Comparison>& pooled_table2,
                                      const std::string& setup_markdown);

}  // namespace flynn::harness
