#include "flynn/harness/reproduce.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/harness/report.hpp"
#include "flynn/eval/search.hpp"
#include "flynn/federated/dp_postprocess.hpp"

namespace flynn::experiments {

namespace {

// Each element once, in the order given (a repeat would double the work for nothing).
template <class T>
std::vector<T> distinct(const std::vector<T>& v) {
  std::vector<T> out;
  for (const T& x : v)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

}  // namespace

StudyOptions study_options(const StudyProtocol& p, bool quick) {
  StudyOptions so;
  so.folds = p.folds;
  so.fold_seed = p.seed;
  so.search.budget = p.budget;
  so.search.design = parse_search_design(p.design);
  so.search.space.m_scale = parse_m_scale(p.m_scale);
  so.search.seed = p.seed;
  so.sbfc.seed = p.seed;
  so.sgd.seed = p.seed;
  if (quick) {
    // Small but complete: every method, every output, a few minutes at most on 2 cores.
    if (!p.budget_given) so.search.budget = 12;
    if (!p.folds_given) so.folds = 5;
    so.sbfc.max_work = 2e10;
    so.search.guard.max_work = 2e10;
  }
  return so;
}

StudyLog stderr_study_log(bool quiet) {
  if (quiet) return {};
  return [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
}

std::vector<federated::DpUnit> parse_dp_units(const std::vector<std::string>& names) {
  std::vector<federated::DpUnit> out;
  for (const std::string& u : names) out.push_back(federated::parse_dp_unit(u));
  return distinct(out);
}

std::vector<federated::DpPostprocess> parse_dp_postprocesses(const std::vector<std::string>& names) {
  std::vector<federated::DpPostprocess> out;
  for (const std::string& p : names) {
    if (p != "all") {
      out.push_back(federated::parse_dp_postprocess(p));
      continue;
    }
    for (federated::DpPostprocess x : federated::all_dp_postprocesses()) out.push_back(x);
  }
  return distinct(out);
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

std::vector<int> parse_party_counts(const std::string& list) {
  std::vector<int> out;
  for (const std::string& item : split_list(list)) {
    int v = 0;
    try {
      std::size_t used = 0;
      v = std::stoi(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw Error(fmt::format("--parties: '{}' is not a number", item));
    }
    if (v < 1 || v > 1024) throw Error(fmt::format("--parties: {} must be in [1, 1024]", v));
    out.push_back(v);
  }
  if (out.empty()) throw Error("--parties: give at least one party count");
  return out;
}

void select_synthetic_variants(SyntheticStudyOptions& so, const std::string& variants) {
  so.dense = variants.find("dense") != std::string::npos;
  so.binary = variants.find("binary") != std::string::npos;
  if (!so.dense && !so.binary) throw Error(fmt::format("--variants '{}': give dense, binary or both", variants));
}

std::string openml_summary_text(const OpenmlStudyResult& r, const std::string& out) {
  std::string s = fmt::format("{} datasets ({} failed or skipped) in {}; results in {}/\n", r.datasets, r.failures,
                              format_duration(r.wall_seconds), out);
  s += "FlyNN vs   n   frac.better  W/T/L     median impr.  t-test p  Wilcoxon p\n";
  for (const auto& c : r.table2)
    s += fmt::format("{:<8} {:>3}   {:>6.2f}     {:>2}/{}/{:<4}  {:>8.2f}%   {:>8}  {:>8}\n", c.baseline,
                     c.n_datasets, c.frac_better, c.wins, c.ties, c.losses, 100 * c.median_improvement,
                     format_pvalue(c.ttest_p), format_pvalue(c.wilcoxon_p));
  return s;
}

std::string synthetic_summary_text(const SyntheticStudyResult& r, const std::string& out) {
  std::string s = fmt::format("{} synthetic datasets ({} failed) in {}; results in {}/\n", r.datasets, r.failures,
                              format_duration(r.wall_seconds), out);
  for (const auto& c : r.cells)
    s += fmt::format("{:<34} {:<6} {:+.3f} ± {:.3f}  (n = {})\n", c.label, c.method, c.normalized.mean,
                     c.normalized.se, c.normalized.n);
  return s;
}

std::string privacy_summary_text(const PrivacyStudyResult& r, const std::string& out) {
  return fmt::format("privacy study: {} groups × {} repetitions in {:.1f} s ({:.1f} s CPU) → {}/\n", r.groups,
                     r.repetitions, r.seconds, r.cpu_seconds, out) +
         r.table_markdown;
}

std::string scaling_summary_text(const ScalingStudyResult& r, const std::string& out) {
  return fmt::format("scaling study on {} in {:.1f} s → {}/\n", r.summary["machine"].get<std::string>(), r.seconds,
                     out) +
         r.table_markdown;
}

}  // namespace flynn::experiments
