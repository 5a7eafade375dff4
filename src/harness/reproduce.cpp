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
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

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

}  // namespace flynn::harness

// ---- The study commands: option tables and runs (what the CLI binds and calls)

namespace flynn::harness {

namespace {

// --budget, --folds, --jobs, --search, --m-scale, --seed of the dataset studies (a request
// R with a `protocol` member).
template <class R>
OptionTable<R> protocol_fields(const std::string& seed_help) {
  return {
      {"--budget", "FlyNN search evaluations per dataset (default 60)",
       [](R& r) -> auto& { return r.protocol.budget; }, "", false, 1, 100000, false,
       [](R& r) -> auto& { return r.protocol.budget_given; }},
      {"--folds", "Stratified CV folds (default 10)", [](R& r) -> auto& { return r.protocol.folds; }, "", false, 2,
       1000, false, [](R& r) -> auto& { return r.protocol.folds_given; }},
      {"--jobs", "Datasets studied at once, sharing the --threads (default 1)",
       [](R& r) -> auto& { return r.protocol.jobs; }, "", false, 1, 1024},
      {"--search", "FlyNN search design: halving (default: Halton + successive halving), halton, random",
       [](R& r) -> auto& { return r.protocol.design; }},
      {"--m-scale", "FlyNN search: m/d uniform (linear, default) or log-uniform (log)",
       [](R& r) -> auto& { return r.protocol.m_scale; }},
      {"--seed", seed_help, [](R& r) -> auto& { return r.protocol.seed; }},
  };
}

// --out (and the older --out-dir, hidden) of a request R with a `study.out` member.
template <class R>
OptionTable<R> out_fields(const std::string& help) {
  return {{"--out", help, [](R& r) -> auto& { return r.study.out; }},
          {"--out-dir", "", [](R& r) -> auto& { return r.study.out; }, "", false, {}, {}, true}};
}

// --repetitions (and bench's spelling --repeats, hidden) of a request with `study.repetitions`.
template <class R>
OptionTable<R> repetition_fields(const std::string& help) {
  return {{"--repetitions", help, [](R& r) -> auto& { return r.study.repetitions; }},
          {"--repeats", "", [](R& r) -> auto& { return r.study.repetitions; }, "", false, {}, {}, true}};
}

template <class T>
OptionTable<T> concat(std::initializer_list<OptionTable<T>> parts) {
  OptionTable<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

template <class Result>
StudyOutcome outcome(const Result& r, std::string text) {
  return {r.summary, std::move(text)};
}

}  // namespace

const OptionTable<OpenmlStudyRequest>& openml_study_fields() {
  using R = OpenmlStudyRequest;
  static const OptionTable<R> table = concat<R>({
      {{"--data-dir", "Folder with MANIFEST.tsv and <did>_<name>.csv.gz files",
        [](R& r) -> auto& { return r.study.data_dir; }, "", true},
       {"--datasets", "Comma-separated subset (did, name or did_name); default: all",
        [](R& r) -> auto& { return r.study.datasets; }}},
      protocol_fields<R>("Seed of folds, search design and baselines (default 0)"),
      out_fields<R>("Output folder (default reproduce-openml); reruns resume from it"),
      {{"--quick", "Small subset (3-4 cheapest datasets), budget 12, 5 folds: a smoke test in a few minutes",
        [](R& r) -> auto& { return r.study.quick; }},
       {"--max-work", "Guard: hashing additions n*m*s per FlyNN evaluation (default 1e11)", &R::max_work},
       {"--tie-tolerance", "Accuracy differences up to this count as ties (default 1e-6)",
        [](R& r) -> auto& { return r.study.tie_tolerance; }},
       {"--no-plots", "Skip the Figure-1 PNGs", &R::no_plots}},
  });
  return table;
}

StudyOutcome OpenmlStudyRequest::run(const StudyRun& how) const {
  OpenmlStudyOptions so = study;
  so.study = study_options(protocol, so.quick);
  if (max_work > 0) so.study.search.guard.max_work = max_work;
  so.plots = !no_plots;
  so.jobs = protocol.jobs;
  so.threads = how.threads;
  so.log = stderr_study_log(how.quiet);
  const OpenmlStudyResult r = run_openml_study(so);
  return outcome(r, openml_summary_text(r, so.out));
}

const OptionTable<SyntheticStudyRequest>& synthetic_study_fields() {
  using R = SyntheticStudyRequest;
  static const OptionTable<R> table = concat<R>({
      out_fields<R>("Output folder (default reproduce-synthetic); reruns resume from it"),
      {{"--quick", "3 datasets of the d=50, n=1000 configurations, budget 12, 5 folds",
        [](R& r) -> auto& { return r.study.quick; }},
       {"--datasets-per-config", "Generated datasets per configuration (default 30)",
        [](R& r) -> auto& { return r.study.per_config; }, "", false, {}, {}, false, [](R& r) -> bool& { return r.per_config_given; }}},
      protocol_fields<R>("Seed of the data, folds, search and baselines (default 0)"),
      {{"--variants", "dense, binary or dense,binary (default both)", &R::variants}},
  });
  return table;
}

StudyOutcome SyntheticStudyRequest::run(const StudyRun& how) const {
  SyntheticStudyOptions so = study;
  select_synthetic_variants(so, variants);
  if (so.quick && !per_config_given) so.per_config = 3;
  so.study = study_options(protocol, so.quick);
  so.seed = protocol.seed;
  so.jobs = protocol.jobs;
  so.threads = how.threads;
  so.log = stderr_study_log(how.quiet);
  const SyntheticStudyResult r = run_synthetic_study(so);
  return outcome(r, synthetic_summary_text(r, so.out));
}

const OptionTable<ScalingStudyRequest>& scaling_study_fields() {
  using R = ScalingStudyRequest;
  static const OptionTable<R> table = concat<R>({
      out_fields<R>("Output folder (default flynn-scaling); reruns resume"),
      {{"--quick", "Digits only, parties 1,2,4, 2 repetitions (for CI)", [](R& r) -> auto& { return r.study.quick; }}},
      repetition_fields<R>("Repetitions per party count (default 10)"),
      {{"--parties", "Party counts (default 1,2,4,8,16)", &R::parties},
       {"--datasets", "Subset of digits,letter,fashion-mnist (default all)", &R::datasets},
       {"--data-dir", "OpenML folder with MANIFEST.tsv, for Letter (did 6; skipped when absent)",
        [](R& r) -> auto& { return r.study.openml_dir; }},
       {"--fashion-dir", "Fashion-MNIST IDX folder", [](R& r) -> auto& { return r.study.fashion_dir; }},
       {"--digits", "Digits CSV (default: scikit-learn's copy)", [](R& r) -> auto& { return r.study.digits; }},
       {"--seed", fmt::format("Seed of the lifting matrix and the splits (default {})", Defaults::seed),
        [](R& r) -> auto& { return r.study.seed; }}},
  });
  return table;
}

StudyOutcome ScalingStudyRequest::run(const StudyRun& how) const {
  ScalingStudyOptions so = study;
  so.parties = parse_party_counts(parties);
  so.datasets = split_list(datasets);
  so.threads = how.threads;
  so.command = command_line(fmt::format("flynn reproduce scaling --out {}", so.out));
  so.log = stderr_study_log(how.quiet);
  const ScalingStudyResult r = run_scaling_study(so);
  return outcome(r, scaling_summary_text(r, so.out));
}

const OptionTable<PrivacyStudyRequest>& privacy_study_fields() {
  using R = PrivacyStudyRequest;
  static const OptionTable<R> table = concat<R>({
      out_fields<R>("Output folder (default flynn-privacy-study); reruns resume"),
      {{"--quick", "A small grid (n = 10^4, 3 epsilons, 4 T values, 2 repetitions) for CI",
        [](R& r) -> auto& { return r.study.quick; }}},
      repetition_fields<R>("Repetitions per setting (default 10, 2 with --quick)"),
      {{"--fashion-dir", "Fashion-MNIST IDX folder (skipped when missing)",
        [](R& r) -> auto& { return r.study.fashion_dir; }},
       {"--no-fashion", "Only the synthetic part", &R::no_fashion},
       {"--multiclass",
        "Add a 26-class Letter-shaped synthetic group (the below-chance setting of docs/guide/federated.md; not in the "
        "paper's study)",
        [](R& r) -> auto& { return r.study.multiclass; }},
       {"--dp-exponent", "paper (default) or reference, see docs/guide/federated.md", &R::exponent},
       {"--dp-unit",
        "Privacy units to compare, comma-separated: paper (default: epsilon/parties each), record (epsilon each, "
        "parallel composition)",
        &R::units},
       {"--dp-postprocess",
        "Post-processings of the release to compare, comma-separated: none (default, the paper's model), "
        "threshold, noise-units, class-balance, noise-units+class-balance, or all",
        &R::postprocesses},
       {"--seed", fmt::format("Seed of data, lifting matrices and splits (default {})", Defaults::seed),
        [](R& r) -> auto& { return r.study.seed; }}},
  });
  return table;
}

StudyOutcome PrivacyStudyRequest::run(const StudyRun& how) const {
  PrivacyStudyOptions so = study;
  so.exponent = federated::parse_dp_exponent(exponent);
  so.units = parse_dp_units(units);
  so.postprocesses = parse_dp_postprocesses(postprocesses);
  so.fashion = !no_fashion;
  so.threads = how.threads;
  so.command = command_line(fmt::format("flynn reproduce privacy --out {}", so.out));
  so.log = stderr_study_log(how.quiet);
  so.progress = how.progress;
  const PrivacyStudyResult r = run_privacy_study(so);
  return outcome(r, privacy_summary_text(r, so.out));
}

}  // namespace flynn::harness
