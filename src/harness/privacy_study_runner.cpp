#include "flynn/harness/privacy_study_runner.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/csv_cells.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/checkpoint.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/harness/plot.hpp"
#include "flynn/harness/privacy_study.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/harness/synthetic.hpp"
#include "flynn/random.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

namespace fs = std::filesystem;
using federated::DpExponent;
using federated::DpPostprocess;
using federated::DpUnit;

// A privacy unit and a post-processing of the release, by name ("-" for the non-private
// model): one curve family per group. (Not a flynn::Variant, the model's feature variant.)
struct UnitPostprocess {
  std::string unit, postprocess;
  bool paper() const { return unit == "paper" && postprocess == "none"; }
  std::string label() const { return fmt::format("unit={} postprocess={}", unit, postprocess); }
  auto operator<=>(const UnitPostprocess&) const = default;
};

std::vector<UnitPostprocess> study_variants(const PrivacyStudyOptions& o) {
  std::vector<UnitPostprocess> v;
  for (DpUnit u : o.units)
    for (DpPostprocess p : o.postprocesses)
      v.push_back({federated::dp_unit_name(u), federated::dp_postprocess_name(p)});
  return v;
}

// One family of curves: a data set and a (m, s, ρ, γ) setting.
struct Group {
  std::string dataset;  // "synthetic", "synthetic-26" or "fashion-mnist"
  std::size_t n_train = 0, n_test = 0;
  std::uint32_t m = 0, s = 0, rho = 0;
  double gamma = 0;
  std::vector<std::uint32_t> Ts;
  std::string key() const { return fmt::format("{}|{}|{}|{}|{}|{}", dataset, n_train, m, s, rho, gamma); }
  std::string label() const {
    return fmt::format("{} n={} (m={}, s={}, rho={}, gamma={})", dataset, n_train, m, s, rho, gamma);
  }
  // Checkpoint id of repetition `rep` (a file name: no '|').
  std::string unit_id(int rep) const {
    return fmt::format("{}-n{}-t{}-m{}-s{}-rho{}-g{}-r{:02}", dataset, n_train, n_test, m, s, rho, gamma, rep);
  }
};

// One trial point, as privacy_raw.csv lists it.
struct RawRow {
  const Group* group = nullptr;
  int rep = 0;
  std::string method;  // "non-private" or "dp"
  UnitPostprocess variant;  // "-" for the non-private model
  double epsilon = 0;
  std::uint32_t T = 0;
  double bacc = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
};

const char* kRawHeader =
    "dataset,n_train,n_test,m,s,rho,gamma,repetition,method,unit,postprocess,epsilon,T,balanced_accuracy,"
    "bytes_sent_per_party,trial_seconds";

// The grid of the study: quick or full.
struct Grid {
  int reps = 0;
  std::vector<double> eps;
  std::vector<std::uint32_t> syn_T, fm_T;
};

Grid study_grid(const PrivacyStudyOptions& o) {
  Grid g;
  g.reps = o.repetitions > 0 ? o.repetitions : (o.quick ? 2 : 10);
  g.eps = o.quick ? std::vector<double>{0.5, 1, 2} : std::vector<double>{0.25, 0.5, 0.75, 1, 1.5, 2};
  g.syn_T = o.quick ? std::vector<std::uint32_t>{4, 32, 200, 600}
                    : std::vector<std::uint32_t>{4, 8, 16, 32, 50, 75, 100, 150, 200, 300, 400, 500, 600};
  g.fm_T = g.syn_T;
  if (!o.quick) g.fm_T.insert(g.fm_T.end(), {1000, 2000, 4000});
  return g;
}

std::vector<Group> study_groups(const PrivacyStudyOptions& o, const Grid& grid, bool fashion) {
  std::vector<Group> g;
  const std::vector<std::size_t> ns = o.quick ? std::vector<std::size_t>{10000}
                                              : std::vector<std::size_t>{10000, 100000};
  // The paper's four (m, s, ρ, γ) settings (appendix D.8).
  const std::uint32_t settings[4][3] = {{300, 3, 15}, {300, 3, 30}, {600, 3, 15}, {600, 3, 30}};
  for (std::size_t n : ns)
    for (const auto& st : settings) g.push_back({"synthetic", n, 1000, st[0], st[1], st[2], 0.9, grid.syn_T});
  if (o.multiclass) {
    // Letter-shaped (OpenML 6 is 20000 × 16, 26 classes), with flynn's default s and γ.
    const std::size_t per_class_train = o.quick ? 100 : 770, per_class_test = o.quick ? 40 : 200;
    g.push_back({"synthetic-26", 26 * per_class_train, 26 * per_class_test, 4096, 4, 32, 0.8, grid.syn_T});
  }
  if (fashion) {
    // m = 30d, s = 0.00625d, ρ = 0.1m, γ = 0.9 with d = 784 (MNIST 3-vs-8's setting).
    const std::uint32_t d = 784, m = 30 * d;
    const std::uint32_t s = std::max<std::uint32_t>(2, static_cast<std::uint32_t>(0.00625 * d + 1e-9));
    const std::uint32_t rho = static_cast<std::uint32_t>(0.1 * m + 1e-9);
    g.push_back({"fashion-mnist", o.quick ? 2000u : 12000u, o.quick ? 500u : 2000u, m, s, rho, 0.9, grid.fm_T});
  }
  return g;
}

// T-shirt/top (class 0) vs Shirt (class 6), the hardest-to-separate Fashion-MNIST pair,
// standing in for MNIST 3-vs-8. `limit` rows (balanced) when smaller than the pair.
Dataset fashion_pair(const Dataset& full, std::size_t limit) {
  std::vector<std::size_t> rows[2];
  for (std::size_t r = 0; r < full.n_rows; ++r) {
    const std::string& name = full.classes.name(full.labels[r]);
    if (name == "0") rows[0].push_back(r);
    if (name == "6") rows[1].push_back(r);
  }
  std::vector<std::size_t> keep;
  for (auto& v : rows) {
    if (v.size() > limit / 2) v.resize(limit / 2);
    keep.insert(keep.end(), v.begin(), v.end());
  }
  std::sort(keep.begin(), keep.end());
  Dataset pair = full.subset(keep);
  pair.relabel(LabelSet({"0", "6"}));
  return pair;
}

// One trial: the group's data for repetition `rep`, every point of the (ε, T) grid.
nlohmann::json run_trial(const PrivacyStudyOptions& o, const Grid& grid, const Group& g, std::size_t group_index,
                         int rep, const Dataset& fm_train, const Dataset& fm_test) {
  const auto t0 = std::chrono::steady_clock::now();
  Dataset train, test;
  if (g.dataset == "synthetic" || g.dataset == "synthetic-26") {
    MixtureSpec spec;
    spec.rows = g.n_train + g.n_test;
    if (g.dataset == "synthetic-26") {
      spec.d = 16;
      spec.classes = 26;
      spec.modes_per_class = 1;
      spec.class_sep = 4.0;
    }
    // The same data for the four settings of one (n, repetition).
    const std::uint64_t data_seed =
        SeededRng::keyed(o.seed, RngStream::Synthetic, g.n_train * 1000 + rep).next_u64();
    const Dataset all = gaussian_mixture(spec, data_seed);
    std::vector<std::size_t> tr(g.n_train), te(g.n_test);
    std::iota(tr.begin(), tr.end(), std::size_t{0});
    std::iota(te.begin(), te.end(), g.n_train);
    train = all.subset(tr);
    test = all.subset(te);
  } else {
    train = fm_train;
    test = fm_test;
  }
  PrivacyTrialSpec spec;
  spec.config.input_dim = static_cast<std::uint32_t>(train.n_features);
  spec.config.m = g.m;
  spec.config.s = g.s;
  spec.config.rho = g.rho;
  spec.config.gamma = g.gamma;
  spec.config.preprocess = Preprocess::Normalize;
  spec.config.seed = SeededRng::keyed(o.seed, RngStream::SeedDraw, group_index * 1000 + rep).next_u64();
  spec.config.validate(train.classes.size());
  spec.parties = 2;
  spec.epsilons = grid.eps;
  spec.Ts = g.Ts;
  spec.exponent = o.exponent;
  spec.units = o.units;
  spec.postprocesses = o.postprocesses;
  spec.split_seed = SeededRng::keyed(o.seed, RngStream::Split, group_index * 1000 + rep).next_u64();
  nlohmann::json points = nlohmann::json::array();
  for (const PrivacyPoint& p : privacy_trial(train, test, spec))
    points.push_back({{"epsilon", p.epsilon},
                      {"T", p.T},
                      {"unit", federated::dp_unit_name(p.unit)},
                      {"postprocess", federated::dp_postprocess_name(p.postprocess)},
                      {"balanced_accuracy", p.balanced_accuracy},
                      {"bytes_sent_per_party", p.bytes_sent_per_party}});
  return {{"points", points},
          {"seconds", detail::seconds_since(t0)}};
}

std::string raw_line(const RawRow& r) {
  const Group& g = *r.group;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{},{:.4f}\n", g.dataset, g.n_train, g.n_test, g.m,
                     g.s, g.rho, g.gamma, r.rep, r.method, r.variant.unit, r.variant.postprocess, r.epsilon, r.T,
                     r.bacc, r.bytes, r.seconds);
}

// ---- the study driver: plan, run_unit, summarize, artifacts ----------------------------------

// What the study runs: the grid, the groups and their data, one checkpointed unit (a trial)
// per group and repetition.
struct PrivacyPlan {
  struct Trial {
    std::size_t group;
    int rep;
  };
  Grid grid;
  std::vector<UnitPostprocess> variants;
  std::string fashion_note;  // why Fashion-MNIST was skipped
  Dataset fm_train, fm_test;
  std::vector<Group> groups;
  fs::path out;
  nlohmann::json checkpoint_key;
  std::vector<Trial> trials;
  std::vector<BatchUnit> units;  // one per trial
};

// Everything a trial's points depend on besides its group and repetition (in its id).
nlohmann::json checkpoint_key(const PrivacyStudyOptions& o, const PrivacyPlan& plan) {
  nlohmann::json key = {{"study", "privacy"}, {"version", 2}, {"seed", o.seed},
                        {"exponent", federated::dp_exponent_name(o.exponent)}, {"epsilons", plan.grid.eps},
                        {"synthetic_T", plan.grid.syn_T}, {"fashion_T", plan.grid.fm_T}};
  // The paper's variant alone keeps the key it always had, so its old trials still resume.
  if (!(plan.variants.size() == 1 && plan.variants[0].paper())) {
    nlohmann::json v = nlohmann::json::array();
    for (const UnitPostprocess& x : plan.variants) v.push_back({x.unit, x.postprocess});
    key["variants"] = v;
  }
  return key;
}

PrivacyPlan plan_study(const PrivacyStudyOptions& o, const std::function<void(const std::string&)>& log) {
  if (o.repetitions < 0) throw Error("privacy study: repetitions must be positive");
  if (o.units.empty()) throw Error("privacy study: no privacy unit to study");
  if (o.postprocesses.empty()) throw Error("privacy study: no post-processing to study");
  PrivacyPlan plan;
  plan.grid = study_grid(o);
  plan.variants = study_variants(o);
  // Fashion-MNIST, when available (it is optional: the synthetic study stands alone).
  bool fashion = o.fashion;
  if (fashion) {
    try {
      plan.fm_train = load_fashion_mnist(o.fashion_dir, false);
      plan.fm_test = load_fashion_mnist(o.fashion_dir, true);
    } catch (const Error& e) {
      fashion = false;
      plan.fashion_note = std::string("Fashion-MNIST skipped: ") + e.what();
      log("flynn: note: " + plan.fashion_note);
    }
  }
  plan.groups = study_groups(o, plan.grid, fashion);
  if (fashion) {
    plan.fm_train = fashion_pair(plan.fm_train, plan.groups.back().n_train);
    plan.fm_test = fashion_pair(plan.fm_test, plan.groups.back().n_test);
  }
  plan.out = fs::path(o.out);
  plan.checkpoint_key = checkpoint_key(o, plan);
  for (std::size_t gi = 0; gi < plan.groups.size(); ++gi)
    for (int rep = 0; rep < plan.grid.reps; ++rep) {
      plan.trials.push_back({gi, rep});
      plan.units.push_back({plan.groups[gi].unit_id(rep), 1.0});
    }
  return plan;
}

nlohmann::json run_unit(const PrivacyStudyOptions& o, const PrivacyPlan& plan, std::size_t i) {
  const PrivacyPlan::Trial& t = plan.trials[i];
  return run_trial(o, plan.grid, plan.groups[t.group], t.group, t.rep, plan.fm_train, plan.fm_test);
}

// What the study found: every trial point and the tables made of them.
struct PrivacySummary {
  std::vector<RawRow> raw;  // in group and repetition order
  std::string summary_csv, best_csv, md_rows;
  nlohmann::json groups = nlohmann::json::array();
};

std::vector<RawRow> raw_rows(const PrivacyPlan& plan, const BatchOutcome& outcome) {
  std::vector<RawRow> raw;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    const nlohmann::json& unit = outcome.results[i];
    for (const nlohmann::json& p : unit["points"]) {
      RawRow r;
      r.group = &plan.groups[plan.trials[i].group];
      r.rep = plan.trials[i].rep;
      r.T = p["T"].get<std::uint32_t>();
      r.method = r.T == 0 ? "non-private" : "dp";
      r.variant = r.T == 0 ? UnitPostprocess{"-", "-"}
                           : UnitPostprocess{p.value("unit", std::string("paper")),
                                             p.value("postprocess", std::string("none"))};
      r.epsilon = p["epsilon"].get<double>();
      r.bacc = p["balanced_accuracy"].get<double>();
      r.bytes = p["bytes_sent_per_party"].get<std::uint64_t>();
      r.seconds = unit["seconds"].get<double>();
      raw.push_back(r);
    }
  }
  return raw;
}

using PointValues =
    std::map<std::tuple<std::string, std::string, UnitPostprocess, double, std::uint32_t>, std::vector<double>>;

// One group's lines of the summary, best and markdown tables, and its JSON.
void summarize_group(const PrivacyPlan& plan, const Group& g, const PointValues& values,
                     double trial_seconds, PrivacySummary& s) {
  const auto values_of = [&](const UnitPostprocess& v, double e, std::uint32_t T) {
    const auto it = values.find({g.key(), v.unit == "-" ? "non-private" : "dp", v, e, T});
    return it == values.end() ? nullptr : &it->second;
  };
  const std::vector<double>* np_values = values_of({"-", "-"}, 0.0, 0u);
  const MeanSd np = mean_sd(np_values ? *np_values : std::vector<double>{});
  s.summary_csv += fmt::format("{},{},{},{},{},{},{},non-private,-,-,0,0,{:.6f},{:.6f},{}\n", detail::csv_field(g.label()),
                               g.dataset, g.n_train, g.m, g.s, g.rho, g.gamma, np.mean, np.sd, np.n);
  nlohmann::json jg = {{"group", g.label()}, {"dataset", g.dataset}, {"n_train", g.n_train},
                       {"m", g.m}, {"s", g.s}, {"rho", g.rho}, {"gamma", g.gamma},
                       {"nonprivate", {{"mean", np.mean}, {"sd", np.sd}}},
                       {"trial_seconds_total", trial_seconds}, {"best", nlohmann::json::array()}};
  const std::string setting = fmt::format("m={} s={} rho={}", g.m, g.s, g.rho);
  for (const UnitPostprocess& v : plan.variants) {
    std::string md = fmt::format("| {} | {} | {} |{} {:.4f} ± {:.4f} |", g.dataset, g.n_train, setting,
                                 plan.variants.size() > 1 ? fmt::format(" {} | {} |", v.unit, v.postprocess) : "",
                                 np.mean, np.sd);
    for (double e : plan.grid.eps) {
      MeanSd top;
      std::uint32_t top_T = 0;
      for (std::uint32_t T : g.Ts) {
        const std::vector<double>* point = values_of(v, e, T);
        if (!point) continue;
        const MeanSd ms = mean_sd(*point);
        s.summary_csv += fmt::format("{},{},{},{},{},{},{},dp,{},{},{},{},{:.6f},{:.6f},{}\n", detail::csv_field(g.label()),
                                     g.dataset, g.n_train, g.m, g.s, g.rho, g.gamma, v.unit, v.postprocess, e, T,
                                     ms.mean, ms.sd, ms.n);
        if (top_T == 0 || ms.mean > top.mean) top = ms, top_T = T;
      }
      s.best_csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f}\n", g.dataset, g.n_train,
                                detail::csv_field(setting), g.m, g.s, g.rho, g.gamma, v.unit, v.postprocess, e, top_T,
                                top.mean, top.sd, np.mean, np.sd);
      jg["best"].push_back({{"unit", v.unit}, {"postprocess", v.postprocess}, {"epsilon", e}, {"T", top_T},
                            {"mean", top.mean}, {"sd", top.sd}});
      md += fmt::format(" {:.4f} ± {:.3f} (T={}) |", top.mean, top.sd, top_T);
    }
    s.md_rows += md + "\n";
  }
  s.groups.push_back(jg);
}

PrivacySummary summarize(const PrivacyPlan& plan, const BatchOutcome& outcome) {
  PrivacySummary s;
  s.raw = raw_rows(plan, outcome);
  PointValues values;
  std::map<std::string, double> trial_seconds;
  for (const RawRow& r : s.raw) values[{r.group->key(), r.method, r.variant, r.epsilon, r.T}].push_back(r.bacc);
  for (std::size_t i = 0; i < plan.trials.size(); ++i)
    trial_seconds[plan.groups[plan.trials[i].group].key()] += outcome.results[i]["seconds"].get<double>();
  s.summary_csv = "group,dataset,n_train,m,s,rho,gamma,method,unit,postprocess,epsilon,T,mean,sd,repetitions\n";
  s.best_csv =
      "dataset,n_train,setting,m,s,rho,gamma,unit,postprocess,epsilon,best_T,best_mean,best_sd,nonprivate_mean,"
      "nonprivate_sd\n";
  for (const Group& g : plan.groups) summarize_group(plan, g, values, trial_seconds[g.key()], s);
  return s;
}

// per_dataset.csv in the reproduce-commands' convention (dataset, method, accuracy, params,
// seconds): the non-private model and the best private one per ε, balanced accuracy.
std::string per_dataset_csv(const PrivacySummary& s) {
  std::string pd = "dataset,method,accuracy,params,seconds\n";
  for (const nlohmann::json& jg : s.groups) {
    const std::string ds = fmt::format("{}-n{}-m{}-s{}-rho{}", jg["dataset"].get<std::string>(),
                                       jg["n_train"].get<std::size_t>(), jg["m"].get<std::uint32_t>(),
                                       jg["s"].get<std::uint32_t>(), jg["rho"].get<std::uint32_t>());
    const double secs = jg["trial_seconds_total"].get<double>();
    pd += fmt::format("{},FlyNNFL non-private,{:.6f},{},{:.3f}\n", ds, jg["nonprivate"]["mean"].get<double>(),
                      detail::csv_field(fmt::format("tau=2 gamma={}", jg["gamma"].get<double>())), secs);
    for (const auto& b : jg["best"]) {
      const UnitPostprocess v{b["unit"].get<std::string>(), b["postprocess"].get<std::string>()};
      pd += fmt::format("{},DP-FlyNNFL eps={}{},{:.6f},{},{:.3f}\n", ds, b["epsilon"].get<double>(),
                        v.paper() ? "" : fmt::format(" ({})", v.label()), b["mean"].get<double>(),
                        detail::csv_field(fmt::format("tau=2 best T={}", b["T"].get<std::uint32_t>())), secs);
    }
  }
  return pd;
}

// The plots drawn (empty when they could not be) and the note saying why not.
struct Plots {
  nlohmann::json files = nlohmann::json::array();
  std::string note;
};

Plots draw_plots(const PrivacyPlan& plan, const std::function<void(const std::string&)>& log) {
  const fs::path& out = plan.out;
  Plots plots;
  const std::string png_t = (out / "privacy_accuracy_vs_T.png").string();
  const std::string png_e = (out / "privacy_best_vs_epsilon.png").string();
  try {
    run_plot_script("privacy.py", {(out / "privacy_summary.csv").string(), (out / "privacy_best.csv").string(),
                                   png_t, png_e});
  } catch (const Error& e) {
    plots.note = std::string("plots not drawn: ") + e.what();
    log("flynn: warning: " + plots.note);
  }
  // The variants beside the paper's: one panel per group, best accuracy over T against ε.
  const bool compare = plan.variants.size() > 1;
  const std::string png_v = (out / "privacy_variants.png").string();
  if (compare && plots.note.empty()) {
    try {
      run_plot_script("privacy_variants.py", {(out / "privacy_best.csv").string(), png_v});
    } catch (const Error& e) {
      plots.note = std::string("variants plot not drawn: ") + e.what();
      log("flynn: warning: " + plots.note);
    }
  }
  if (plots.note.empty())
    plots.files = compare ? nlohmann::json{png_t, png_e, png_v} : nlohmann::json{png_t, png_e};
  return plots;
}

// The markdown table's header and rule lines.
std::pair<std::string, std::string> table_head(const PrivacyPlan& plan) {
  const bool compare = plan.variants.size() > 1;
  std::string header = compare ? "| data | n | setting | unit | post-processing | non-private |"
                               : "| data | n | setting | non-private |";
  std::string rule = compare ? "|---|---|---|---|---|---|" : "|---|---|---|---|";
  for (double e : plan.grid.eps) {
    header += fmt::format(" best DP, ε={} |", e);
    rule += "---|";
  }
  return {header, rule};
}

std::string report_markdown(const PrivacyStudyOptions& o, const PrivacyPlan& plan, const PrivacySummary& s,
                            const StudyClock& clock, const std::string& plot_note) {
  const bool compare = plan.variants.size() > 1;
  const auto [header, rule] = table_head(plan);
  const std::string command =
      o.command.empty() ? fmt::format("flynn reproduce privacy --out {}{}", o.out, o.quick ? " --quick" : "")
                        : o.command;
  return fmt::format(
      R"(# Privacy study: DP-FlyNNFL vs non-private FlyNNFL

Command: `{command}` ({reps} repetitions, seed {seed},
{exponent} exponent). Machine: {machine}, 1-minute load average {load:.2f} at the start. Run
time of this invocation: {secs:.1f} s wall, {cpu:.1f} s CPU over all threads (trials already on
disk from an earlier run are reused).

Setting (spec section 7, paper appendix D.8): τ = 2 parties (IID split), each releases T
entries with budget ε' = ε/2 (exponential mechanism with exponent ε'c/(4T), discrete Laplace
noise of scale 2T/ε', unpicked entries 0). Balanced accuracy on held-out rows, mean ± sd over
repetitions; each repetition draws new data (synthetic), a new lifting matrix, a new split and
new noise. "best DP" is the best mean over the T grid for that ε. {variants}

* synthetic: ℝ^30, 2 classes × 5 Gaussian modes (Guyon-style hypercube mixture, 1% label
  noise), n training rows, 1000 test rows, γ = 0.9; T ∈ {{{syn_t}}}.
* fashion-mnist: T-shirt/top (0) vs Shirt (6), standing in for MNIST 3-vs-8, with the paper's
  m = 30d, s = 0.00625d, ρ = 0.1m, γ = 0.9 (d = 784); T ∈ {{{fm_t}}}. {fnote}
{multiclass}
{header}
{rule}
{rows}
Files: `privacy_raw.csv` (every trial point), `privacy_summary.csv` (mean ± sd per ε, T),
`privacy_best.csv`, `per_dataset.csv`, `results.json`, the plots
`privacy_accuracy_vs_T.png` (accuracy vs T per ε, dashed: non-private) and
`privacy_best_vs_epsilon.png` (best accuracy vs ε), and `trials/` (one file per finished
trial, what a rerun resumes from).{vplot} {pnote}
)",
      fmt::arg("command", command), fmt::arg("reps", plan.grid.reps), fmt::arg("seed", o.seed),
      fmt::arg("exponent", federated::dp_exponent_name(o.exponent)), fmt::arg("machine", machine_description()),
      fmt::arg("secs", clock.seconds), fmt::arg("syn_t", fmt::join(plan.grid.syn_T, ", ")),
      fmt::arg("fm_t", fmt::join(plan.grid.fm_T, ", ")), fmt::arg("fnote", plan.fashion_note),
      fmt::arg("header", header), fmt::arg("rule", rule), fmt::arg("rows", s.md_rows), fmt::arg("pnote", plot_note),
      fmt::arg("load", clock.load_before), fmt::arg("cpu", clock.cpu_seconds),
      fmt::arg("multiclass", o.multiclass ? "* synthetic-26 (`--multiclass`, not in the paper): a Letter-shaped "
                                            "mixture, 26 classes × 1 Gaussian mode in ℝ^16, 770 training and 200 "
                                            "test rows per class (100 and 40 with --quick), m = 4096, s = 4, ρ = 32, "
                                            "γ = 0.8 (chance: 1/26 = 0.0385).\n"
                                          : ""),
      fmt::arg("variants",
               compare ? "Variants (docs/guide/federated.md): privacy unit `paper` (ε' = ε/τ, the paper's Theorem 6) "
                         "or `record` (each record at one party: ε' = ε, parallel composition), and a "
                         "post-processing of the aggregated release (`none` is the paper's model); every "
                         "post-processing of one unit scores the same noisy release."
                       : ""),
      fmt::arg("vplot", compare ? " `privacy_variants.png`: best accuracy over T against ε for every variant, "
                                  "beside the paper's (black)."
                                : ""));
}

// Writes every file of the study (the tables, plots, report and results.json).
PrivacyStudyResult write_artifacts(const PrivacyStudyOptions& o, const PrivacyPlan& plan, const PrivacySummary& s,
                                   const StudyClock& clock, const std::function<void(const std::string&)>& log) {
  const fs::path& out = plan.out;
  io::write_file_atomic((out / "privacy_raw.csv").string(), [&](std::ostream& f) {
    f << kRawHeader << "\n";
    for (const RawRow& r : s.raw) f << raw_line(r);
  });
  io::write_file_atomic((out / "privacy_summary.csv").string(), s.summary_csv);
  io::write_file_atomic((out / "privacy_best.csv").string(), s.best_csv);
  io::write_file_atomic((out / "per_dataset.csv").string(), per_dataset_csv(s));
  const Plots plots = draw_plots(plan, log);
  io::write_file_atomic((out / "report.md").string(), report_markdown(o, plan, s, clock, plots.note));

  nlohmann::json variants = nlohmann::json::array();
  for (const UnitPostprocess& x : plan.variants) variants.push_back({{"unit", x.unit}, {"postprocess", x.postprocess}});
  PrivacyStudyResult result;
  result.summary = {{"command", "reproduce privacy"},
                    {"out", o.out},
                    {"quick", o.quick},
                    {"repetitions", plan.grid.reps},
                    {"exponent", federated::dp_exponent_name(o.exponent)},
                    {"epsilons", plan.grid.eps},
                    {"variants", variants},
                    {"seconds", clock.seconds},
                    {"cpu_seconds", clock.cpu_seconds},
                    {"load_average_at_start", clock.load_before},
                    {"machine", machine_description()},
                    {"groups", s.groups},
                    {"plots", plots.files}};
  io::write_file_atomic((out / "results.json").string(), result.summary.dump(2) + "\n");
  const auto [header, rule] = table_head(plan);
  result.table_markdown = header + "\n" + rule + "\n" + s.md_rows;
  result.groups = plan.groups.size();
  result.repetitions = plan.grid.reps;
  result.seconds = clock.seconds;
  result.cpu_seconds = clock.cpu_seconds;
  return result;
}

}  // namespace

PrivacyStudyResult run_privacy_study(const PrivacyStudyOptions& o) {
  const auto log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  const PrivacyPlan plan = plan_study(o, log);
  fs::create_directories(plan.out);
  const Checkpoint checkpoint((plan.out / "trials").string(), plan.checkpoint_key);
  StudyClock clock;
  BatchOptions bo;
  bo.jobs = detail::resolve_threads(o.threads);
  bo.on_finished = [&](std::size_t, const nlohmann::json&, const BatchProgress& p) {
    if (o.progress) o.progress(p.done, p.todo);
  };
  const BatchOutcome outcome =
      run_checkpointed(checkpoint, plan.units, [&](std::size_t i) { return run_unit(o, plan, i); }, bo);
  clock.stop();
  return write_artifacts(o, plan, summarize(plan, outcome), clock, log);
}

}  // namespace flynn::harness
