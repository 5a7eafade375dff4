#pragma once
// Outputs of the reproduce commands: the paper's Table 2 for comparison, our Table 2 from
// a set of dataset studies, the CSV files every reproduce command writes, the Figure-1
// scatter plots and the Markdown report of the OpenML study.
//
// File formats (stable; other tools read them):
//   per_dataset.csv  dataset,method,accuracy,params,seconds — one row per dataset × method
//                    that succeeded (failed methods are listed in the report instead);
//   table2.csv       baseline,n_datasets,frac_better,wins,ties,losses,median_improvement,
//                    ttest_p,wilcoxon_p — median_improvement as a fraction (0.0035 = 0.35%).
// CSV fields are quoted (RFC 4180) when they contain a comma, quote or newline.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "flynn/harness/statistics.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// One row of the paper's Table 2, as printed there.
struct PaperTable2Row {
  std::string baseline;        ///< our method name: kNNC, 1NNC, SBFC, LR, MLP
  double frac_better;
  int wins, ties, losses;
  double median_improvement;   ///< fraction
  std::string ttest_p;         ///< as printed ("5.3e-2", "<1e-8")
  std::string wilcoxon_p;
};
const std::vector<PaperTable2Row>& paper_table2();

/// Table 2 of a study: for each of table2_baselines(), the comparison over the datasets on
/// which FlyNN, kNNC and that baseline all succeeded (baselines with fewer than 2 such
/// datasets are left out).
std::vector<Comparison> study_table2(const std::vector<DatasetStudy>& studies,
                                     double tie_tolerance = kDefaultTieTolerance);

/// Shortest round-trip text of a double ("0.9375", "1e-09").
std::string format_number(double value);

void write_per_dataset_csv(const std::string& path, const std::vector<DatasetStudy>& studies);
void write_table2_csv(const std::string& path, const std::vector<Comparison>& table);

/// Figure 1 of the paper: FlyNN's accuracy (y) against a baseline's (x), one point per
/// dataset, with the diagonal; one PNG per baseline, out_dir/figure1_<baseline>.png. Returns
/// the files written. Throws flynn::Error when matplotlib is missing or fails.
std::vector<std::string> plot_figure1(const std::string& out_dir, const std::vector<DatasetStudy>& studies,
                                      const std::vector<std::string>& baselines = {"kNNC", "1NNC", "SBFC"});

/// What the report says about how the study ran.
struct ReportContext {
  std::string command;                 ///< the command line
  std::string data_dir;
  double wall_seconds = 0.0;           ///< of this invocation
  double compute_seconds = 0.0;        ///< sum of per-dataset times (including resumed ones)
  double cpu_seconds = 0.0;            ///< user + system CPU time of this invocation
  int jobs = 1, threads_per_job = 1, cores = 1;
  std::string blas;                    ///< blas_description()
  std::vector<std::pair<std::string, std::string>> failures;  ///< dataset, reason
  std::vector<std::string> figures;    ///< PNG file names (relative to the report)
  std::string figure_error;            ///< why figures are missing, if they are
  double tie_tolerance = kDefaultTieTolerance;
  StudyOptions options;
  bool quick = false;
};

/// The Markdown report of `reproduce openml`: setup, our Table 2 next to the paper's, the
/// figures, the per-dataset table (accuracy of each method, FlyNN's best hyper-parameters,
/// times), guard notes and failures.
std::string openml_report_markdown(const std::vector<DatasetStudy>& studies,
                                   const std::vector<Comparison>& table2, const ReportContext& ctx);

/// "1.2e-05" style p-values (and "<1e-16" below double resolution).
std::string format_pvalue(double p);

}  // namespace flynn::harness
