// flynn federated privacy-study: the paper's privacy experiment (Fig. 3, appendix D.8;
// spec section 7) in one command — CSVs, PNG plots and a Markdown report.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/experiments/fashion_mnist.hpp"
#include "flynn/experiments/plot.hpp"
#include "flynn/experiments/privacy_study.hpp"
#include "flynn/experiments/study_io.hpp"
#include "flynn/detail/csv_cells.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/random.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;
using namespace flynn::federated;
using namespace flynn::experiments;

struct StudyOptions {
  std::string out_dir = "flynn-privacy-study";
  std::string fashion_dir = "/usr/share/datasets/fashion-mnist";
  std::string exponent = "paper";
  bool quick = false, no_fashion = false;
  int repetitions = 0;  // 0 = 10 (2 with --quick)
  std::uint64_t seed = 5489;
  CommonOptions common;
};

// One family of curves: a data set and a (m, s, ρ, γ) setting.
struct Group {
  std::string dataset;  // "synthetic" or "fashion-mnist"
  std::size_t n_train = 0, n_test = 0;
  std::uint32_t m = 0, s = 0, rho = 0;
  double gamma = 0;
  std::vector<std::uint32_t> Ts;
  std::string key() const { return fmt::format("{}|{}|{}|{}|{}|{}", dataset, n_train, m, s, rho, gamma); }
  std::string label() const {
    return fmt::format("{} n={} (m={}, s={}, rho={}, gamma={})", dataset, n_train, m, s, rho, gamma);
  }
};

struct RawRow {
  std::string key;
  int rep = 0;
  std::string method;  // "non-private" or "dp"
  double epsilon = 0;
  std::uint32_t T = 0;
  double bacc = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
};

const char* kRawHeader =
    "dataset,n_train,n_test,m,s,rho,gamma,repetition,method,epsilon,T,balanced_accuracy,"
    "bytes_sent_per_party,trial_seconds";

// The plots: accuracy vs T per ε (one panel per group), best accuracy vs ε.
const char* kPlotScript = R"PY(
import csv, sys, math
import matplotlib.pyplot as plt
summary, best, out_t, out_eps = sys.argv[1:5]
rows = list(csv.DictReader(open(summary)))
groups = []
for r in rows:
    if r['group'] not in groups: groups.append(r['group'])
eps_list = sorted({float(r['epsilon']) for r in rows if r['method'] == 'dp'})
cols = 3 if len(groups) > 4 else max(1, len(groups))
nrows = math.ceil(len(groups) / cols)
fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
cmap = plt.get_cmap('viridis')
for gi, g in enumerate(groups):
    ax = axes[gi // cols][gi % cols]
    gr = [r for r in rows if r['group'] == g]
    for ei, e in enumerate(eps_list):
        pts = sorted((int(r['T']), float(r['mean']), float(r['sd'])) for r in gr
                     if r['method'] == 'dp' and float(r['epsilon']) == e)
        if not pts: continue
        t, m, s = zip(*pts)
        c = cmap(ei / max(1, len(eps_list) - 1))
        ax.plot(t, m, marker='o', ms=3, color=c, label=f'eps={e:g}')
        ax.fill_between(t, [a - b for a, b in zip(m, s)], [a + b for a, b in zip(m, s)], color=c, alpha=0.15)
    npv = [float(r['mean']) for r in gr if r['method'] == 'non-private']
    if npv: ax.axhline(npv[0], color='black', ls='--', lw=1.2, label='non-private')
    ax.set_xscale('log')
    ax.set_title(g, fontsize=8)
    ax.set_xlabel('T (entries released per party)')
    ax.set_ylabel('balanced accuracy')
    ax.grid(alpha=0.3)
    if gi == 0: ax.legend(fontsize=7)
for k in range(len(groups), nrows * cols): axes[k // cols][k % cols].axis('off')
fig.tight_layout()
fig.savefig(out_t, dpi=110)

brows = list(csv.DictReader(open(best)))
kinds = []
for r in brows:
    k = r['dataset'] + ' n=' + r['n_train']
    if k not in kinds: kinds.append(k)
fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds), 4), squeeze=False)
for ki, k in enumerate(kinds):
    ax = axes[0][ki]
    kr = [r for r in brows if r['dataset'] + ' n=' + r['n_train'] == k]
    settings = []
    for r in kr:
        if r['setting'] not in settings: settings.append(r['setting'])
    for si, st in enumerate(settings):
        pts = sorted((float(r['epsilon']), float(r['best_mean']), float(r['best_sd']), float(r['nonprivate_mean']))
                     for r in kr if r['setting'] == st)
        e, m, s, npv = zip(*pts)
        c = plt.get_cmap('tab10')(si)
        ax.errorbar(e, m, yerr=s, marker='o', ms=4, color=c, capsize=3, label=st)
        ax.axhline(npv[0], color=c, ls='--', lw=1)
    ax.set_title(k + ' (dashed: non-private)', fontsize=9)
    ax.set_xlabel('epsilon (total budget)')
    ax.set_ylabel('best balanced accuracy over T')
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(out_eps, dpi=110)
)PY";

std::vector<Group> study_groups(const StudyOptions& o, const std::vector<std::uint32_t>& syn_T,
                                const std::vector<std::uint32_t>& fm_T, bool fashion) {
  std::vector<Group> g;
  const std::vector<std::size_t> ns = o.quick ? std::vector<std::size_t>{10000}
                                              : std::vector<std::size_t>{10000, 100000};
  // The paper's four (m, s, ρ, γ) settings (appendix D.8).
  const std::uint32_t settings[4][3] = {{300, 3, 15}, {300, 3, 30}, {600, 3, 15}, {600, 3, 30}};
  for (std::size_t n : ns)
    for (const auto& st : settings) g.push_back({"synthetic", n, 1000, st[0], st[1], st[2], 0.9, syn_T});
  if (fashion) {
    // m = 30d, s = 0.00625d, ρ = 0.1m, γ = 0.9 with d = 784 (MNIST 3-vs-8's setting).
    const std::uint32_t d = 784, m = 30 * d;
    const std::uint32_t s = std::max<std::uint32_t>(2, static_cast<std::uint32_t>(0.00625 * d + 1e-9));
    const std::uint32_t rho = static_cast<std::uint32_t>(0.1 * m + 1e-9);
    g.push_back({"fashion-mnist", o.quick ? 2000u : 12000u, o.quick ? 500u : 2000u, m, s, rho, 0.9, fm_T});
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

std::string signature(const StudyOptions& o, const std::vector<double>& eps,
                      const std::vector<Group>& groups) {
  std::string s = fmt::format("privacy-study v1 seed={} exponent={} quick={} eps=", o.seed, o.exponent, o.quick);
  for (double e : eps) s += fmt::format("{},", e);
  for (const Group& g : groups) {
    s += " [" + g.key() + " T=";
    for (auto t : g.Ts) s += fmt::format("{},", t);
    s += "]";
  }
  return s;
}

void run_study(const StudyOptions& o) {
  const DpExponent exponent = parse_dp_exponent(o.exponent);
  const int reps = o.repetitions > 0 ? o.repetitions : (o.quick ? 2 : 10);
  if (o.repetitions < 0) throw Error("--repetitions must be positive");
  const std::vector<double> eps = o.quick ? std::vector<double>{0.5, 1, 2}
                                          : std::vector<double>{0.25, 0.5, 0.75, 1, 1.5, 2};
  const std::vector<std::uint32_t> syn_T =
      o.quick ? std::vector<std::uint32_t>{4, 32, 200, 600}
              : std::vector<std::uint32_t>{4, 8, 16, 32, 50, 75, 100, 150, 200, 300, 400, 500, 600};
  std::vector<std::uint32_t> fm_T = syn_T;
  if (!o.quick) fm_T.insert(fm_T.end(), {1000, 2000, 4000});

  // Fashion-MNIST, when available (it is optional: the synthetic study stands alone).
  bool fashion = !o.no_fashion;
  std::string fashion_note;
  Dataset fm_train, fm_test;
  if (fashion) {
    try {
      fm_train = experiments::load_fashion_mnist(o.fashion_dir, false);
      fm_test = experiments::load_fashion_mnist(o.fashion_dir, true);
    } catch (const Error& e) {
      fashion = false;
      fashion_note = std::string("Fashion-MNIST skipped: ") + e.what();
      std::cerr << "flynn: note: " << fashion_note << "\n";
    }
  }
  const std::vector<Group> groups = study_groups(o, syn_T, fm_T, fashion);
  if (fashion) {
    fm_train = fashion_pair(fm_train, groups.back().n_train);
    fm_test = fashion_pair(fm_test, groups.back().n_test);
  }

  fs::create_directories(o.out_dir);
  const fs::path out(o.out_dir);
  const fs::path raw_path = out / "privacy_raw.csv", sig_path = out / "privacy_grid.txt";
  const std::string sig = signature(o, eps, groups);

  // Resume: trials (group, repetition) already in privacy_raw.csv with the same grid are
  // kept; anything else starts the file over.
  std::vector<RawRow> raw;
  std::set<std::pair<std::string, int>> done;
  bool resume = false;
  {
    std::ifstream sf(sig_path);
    std::string old((std::istreambuf_iterator<char>(sf)), std::istreambuf_iterator<char>());
    resume = old == sig && fs::exists(raw_path);
  }
  if (resume) {
    std::ifstream in(raw_path);
    std::string line;
    std::getline(in, line);
    std::map<std::pair<std::string, int>, std::vector<RawRow>> by_trial;
    while (std::getline(in, line)) {
      const auto f = io::csv_split(line);
      if (f.size() != 14) continue;  // a torn last line from an interrupted run
      RawRow r;
      r.key = fmt::format("{}|{}|{}|{}|{}|{}", f[0], f[1], f[3], f[4], f[5], f[6]);
      r.rep = std::stoi(f[7]);
      r.method = f[8];
      r.epsilon = std::stod(f[9]);
      r.T = static_cast<std::uint32_t>(std::stoul(f[10]));
      r.bacc = std::stod(f[11]);
      r.bytes = std::stoull(f[12]);
      r.seconds = std::stod(f[13]);
      by_trial[{r.key, r.rep}].push_back(r);
    }
    // A trial counts as done only when all its points made it to disk.
    for (const Group& g : groups) {
      std::size_t points = 1;
      for (auto t : g.Ts) points += (std::uint64_t(t) <= std::uint64_t(g.m) * 2) ? eps.size() : 0;
      for (int rep = 0; rep < reps; ++rep) {
        auto it = by_trial.find({g.key(), rep});
        if (it != by_trial.end() && it->second.size() == points) {
          done.insert(it->first);
          raw.insert(raw.end(), it->second.begin(), it->second.end());
        }
      }
    }
  }
  {
    std::ofstream f(raw_path, std::ios::trunc);
    f << kRawHeader << "\n";
    for (const RawRow& r : raw) {
      const auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.key() == r.key; });
      f << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.6f},{},{:.4f}\n", g->dataset, g->n_train, g->n_test,
                       g->m, g->s, g->rho, g->gamma, r.rep, r.method, r.epsilon, r.T, r.bacc, r.bytes, r.seconds);
    }
  }
  io::write_file_atomic(sig_path.string(), sig);

  struct Trial {
    std::size_t group;
    int rep;
  };
  std::vector<Trial> todo;
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (int rep = 0; rep < reps; ++rep)
      if (!done.count({groups[gi].key(), rep})) todo.push_back({gi, rep});

  const auto start = std::chrono::steady_clock::now();
  const double load_before = load_average();
  const double cpu_before = cpu_seconds();
  std::mutex mutex;
  std::ofstream append(raw_path, std::ios::app);
  std::atomic<std::size_t> finished{0};
  ProgressBar bar(fmt::format("privacy study ({} trials left)", todo.size()), !o.common.quiet);
  const ProgressFn& progress = bar.callback();
  parallel_for(todo.size(), o.common.threads, [&](std::size_t i, int) {
    const Trial& t = todo[i];
    const Group& g = groups[t.group];
    const auto t0 = std::chrono::steady_clock::now();
    Dataset train, test;
    if (g.dataset == "synthetic") {
      MixtureSpec spec;
      spec.rows = g.n_train + g.n_test;
      // The same data for the four settings of one (n, repetition).
      const std::uint64_t data_seed =
          SeededRng::keyed(o.seed, RngStream::Synthetic, g.n_train * 1000 + t.rep).next_u64();
      Dataset all = gaussian_mixture(spec, data_seed);
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
    spec.config.seed = SeededRng::keyed(o.seed, RngStream::SeedDraw, t.group * 1000 + t.rep).next_u64();
    spec.config.validate(2);
    spec.parties = 2;
    spec.epsilons = eps;
    spec.Ts = g.Ts;
    spec.exponent = exponent;
    spec.split_seed = SeededRng::keyed(o.seed, RngStream::Split, t.group * 1000 + t.rep).next_u64();
    const std::vector<PrivacyPoint> points = privacy_trial(train, test, spec);
    const double secs = seconds_since(t0);
    std::lock_guard<std::mutex> lock(mutex);
    for (const PrivacyPoint& p : points) {
      RawRow r{g.key(), t.rep, p.T == 0 ? "non-private" : "dp", p.epsilon, p.T, p.balanced_accuracy,
               p.bytes_sent_per_party, secs};
      raw.push_back(r);
      append << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{:.6f},{},{:.4f}\n", g.dataset, g.n_train,
                            g.n_test, g.m, g.s, g.rho, g.gamma, r.rep, r.method, r.epsilon, r.T, r.bacc,
                            r.bytes, r.seconds);
    }
    append.flush();  // resumable: a finished trial is on disk
    if (progress) progress(++finished, todo.size());
  });
  bar.finish();
  const double run_seconds = seconds_since(start);
  const double run_cpu = cpu_seconds() - cpu_before;

  // ---- summaries ----
  std::map<std::tuple<std::string, std::string, double, std::uint32_t>, std::vector<double>> values;
  std::map<std::string, double> trial_seconds;
  std::map<std::pair<std::string, int>, double> seen_trial;
  for (const RawRow& r : raw) {
    values[{r.key, r.method, r.epsilon, r.T}].push_back(r.bacc);
    seen_trial[{r.key, r.rep}] = r.seconds;
  }
  for (const auto& [k, s] : seen_trial) trial_seconds[k.first] += s;

  std::ofstream summary(out / "privacy_summary.csv");
  summary << "group,dataset,n_train,m,s,rho,gamma,method,epsilon,T,mean,sd,repetitions\n";
  std::ofstream best(out / "privacy_best.csv");
  best << "dataset,n_train,setting,m,s,rho,gamma,epsilon,best_T,best_mean,best_sd,nonprivate_mean,nonprivate_sd\n";
  nlohmann::json jgroups = nlohmann::json::array();
  std::string md_rows;
  for (const Group& g : groups) {
    const MeanSd np = mean_sd(values[{g.key(), "non-private", 0.0, 0u}]);
    summary << fmt::format("{},{},{},{},{},{},{},non-private,0,0,{:.6f},{:.6f},{}\n", io::csv_field(g.label()),
                           g.dataset, g.n_train, g.m, g.s, g.rho, g.gamma, np.mean, np.sd, np.n);
    nlohmann::json jg = {{"group", g.label()}, {"dataset", g.dataset}, {"n_train", g.n_train},
                         {"m", g.m}, {"s", g.s}, {"rho", g.rho}, {"gamma", g.gamma},
                         {"nonprivate", {{"mean", np.mean}, {"sd", np.sd}}},
                         {"trial_seconds_total", trial_seconds[g.key()]}, {"best", nlohmann::json::array()}};
    const std::string setting = fmt::format("m={} s={} rho={}", g.m, g.s, g.rho);
    std::string md = fmt::format("| {} | {} | {} | {:.4f} ± {:.4f} |", g.dataset, g.n_train, setting, np.mean, np.sd);
    for (double e : eps) {
      MeanSd top;
      std::uint32_t top_T = 0;
      for (std::uint32_t T : g.Ts) {
        auto it = values.find({g.key(), "dp", e, T});
        if (it == values.end()) continue;
        const MeanSd ms = mean_sd(it->second);
        summary << fmt::format("{},{},{},{},{},{},{},dp,{},{},{:.6f},{:.6f},{}\n", io::csv_field(g.label()), g.dataset,
                               g.n_train, g.m, g.s, g.rho, g.gamma, e, T, ms.mean, ms.sd, ms.n);
        if (top_T == 0 || ms.mean > top.mean) top = ms, top_T = T;
      }
      best << fmt::format("{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f}\n", g.dataset, g.n_train,
                          io::csv_field(setting), g.m, g.s, g.rho, g.gamma, e, top_T, top.mean, top.sd, np.mean, np.sd);
      jg["best"].push_back({{"epsilon", e}, {"T", top_T}, {"mean", top.mean}, {"sd", top.sd}});
      md += fmt::format(" {:.4f} ± {:.3f} (T={}) |", top.mean, top.sd, top_T);
    }
    jgroups.push_back(jg);
    md_rows += md + "\n";
  }
  summary.close();
  best.close();

  // per_dataset.csv in the reproduce-commands' convention (dataset, method, accuracy, params,
  // seconds): the non-private model and the best private one per ε, balanced accuracy.
  {
    std::ofstream pd(out / "per_dataset.csv");
    pd << "dataset,method,accuracy,params,seconds\n";
    for (const nlohmann::json& jg : jgroups) {
      const std::string ds = fmt::format("{}-n{}-m{}-s{}-rho{}", jg["dataset"].get<std::string>(),
                                         jg["n_train"].get<std::size_t>(), jg["m"].get<std::uint32_t>(),
                                         jg["s"].get<std::uint32_t>(), jg["rho"].get<std::uint32_t>());
      const double secs = jg["trial_seconds_total"].get<double>();
      pd << fmt::format("{},FlyNNFL non-private,{:.6f},{},{:.3f}\n", ds, jg["nonprivate"]["mean"].get<double>(),
                        io::csv_field(fmt::format("tau=2 gamma={}", jg["gamma"].get<double>())), secs);
      for (const auto& b : jg["best"])
        pd << fmt::format("{},DP-FlyNNFL eps={},{:.6f},{},{:.3f}\n", ds, b["epsilon"].get<double>(),
                          b["mean"].get<double>(), io::csv_field(fmt::format("tau=2 best T={}", b["T"].get<std::uint32_t>())),
                          secs);
    }
  }

  std::string plot_note;
  const std::string png_t = (out / "privacy_accuracy_vs_T.png").string();
  const std::string png_e = (out / "privacy_best_vs_epsilon.png").string();
  try {
    experiments::run_matplotlib(kPlotScript, {(out / "privacy_summary.csv").string(), (out / "privacy_best.csv").string(),
                                       png_t, png_e});
  } catch (const Error& e) {
    plot_note = std::string("plots not drawn: ") + e.what();
    std::cerr << "flynn: warning: " << plot_note << "\n";
  }

  // ---- report ----
  std::string header = "| data | n | setting | non-private |";
  std::string rule = "|---|---|---|---|";
  for (double e : eps) {
    header += fmt::format(" best DP, ε={} |", e);
    rule += "---|";
  }
  const std::string report = fmt::format(
      R"(# Privacy study: DP-FlyNNFL vs non-private FlyNNFL

Command: `flynn federated privacy-study --out {out}{quick}` ({reps} repetitions, seed {seed},
{exponent} exponent). Machine: {machine}, 1-minute load average {load:.2f} at the start. Run
time of this invocation: {secs:.1f} s wall, {cpu:.1f} s CPU over all threads (trials already on
disk from an earlier run are reused).

Setting (spec section 7, paper appendix D.8): τ = 2 parties (IID split), each releases T
entries with budget ε' = ε/2 (exponential mechanism with exponent ε'c/(4T), discrete Laplace
noise of scale 2T/ε', unpicked entries 0). Balanced accuracy on held-out rows, mean ± sd over
repetitions; each repetition draws new data (synthetic), a new lifting matrix, a new split and
new noise. "best DP" is the best mean over the T grid for that ε.

* synthetic: ℝ^30, 2 classes × 5 Gaussian modes (Guyon-style hypercube mixture, 1% label
  noise), n training rows, 1000 test rows, γ = 0.9; T ∈ {{{syn_t}}}.
* fashion-mnist: T-shirt/top (0) vs Shirt (6), standing in for MNIST 3-vs-8, with the paper's
  m = 30d, s = 0.00625d, ρ = 0.1m, γ = 0.9 (d = 784); T ∈ {{{fm_t}}}. {fnote}

{header}
{rule}
{rows}
Files: `privacy_raw.csv` (every trial point), `privacy_summary.csv` (mean ± sd per ε, T),
`privacy_best.csv`, `per_dataset.csv`, `results.json`, and the plots
`privacy_accuracy_vs_T.png` (accuracy vs T per ε, dashed: non-private) and
`privacy_best_vs_epsilon.png` (best accuracy vs ε). {pnote}
)",
      fmt::arg("out", o.out_dir), fmt::arg("quick", o.quick ? " --quick" : ""), fmt::arg("reps", reps),
      fmt::arg("seed", o.seed), fmt::arg("exponent", o.exponent), fmt::arg("machine", machine_description()),
      fmt::arg("secs", run_seconds), fmt::arg("syn_t", fmt::join(syn_T, ", ")),
      fmt::arg("fm_t", fmt::join(fm_T, ", ")), fmt::arg("fnote", fashion_note), fmt::arg("header", header),
      fmt::arg("rule", rule), fmt::arg("rows", md_rows), fmt::arg("pnote", plot_note),
      fmt::arg("load", load_before), fmt::arg("cpu", run_cpu));
  io::write_file_atomic((out / "report.md").string(), report);
  const nlohmann::json j = {{"command", "federated privacy-study"},
                            {"out", o.out_dir},
                            {"quick", o.quick},
                            {"repetitions", reps},
                            {"exponent", o.exponent},
                            {"epsilons", eps},
                            {"seconds", run_seconds},
                            {"cpu_seconds", run_cpu},
                            {"load_average_at_start", load_before},
                            {"machine", machine_description()},
                            {"groups", jgroups},
                            {"plots", plot_note.empty() ? nlohmann::json{png_t, png_e} : nlohmann::json::array()}};
  io::write_file_atomic((out / "results.json").string(), j.dump(2) + "\n");
  if (o.common.json) {
    print_json(j);
    return;
  }
  std::cout << fmt::format("privacy study: {} groups × {} repetitions in {:.1f} s ({:.1f} s CPU) → {}/\n",
                           groups.size(), reps, run_seconds, run_cpu, o.out_dir)
            << header << "\n" << rule << "\n" << md_rows;
}

void add_privacy_study(CLI::App& app) {
  auto o = std::make_shared<StudyOptions>();
  CLI::App* group = command_group(
      app, "federated",
      "Federated FlyNN (FlyNNFL): parties train on their own rows, one all-reduce of the "
      "counts, optional differential privacy");
  CLI::App* cmd = group->add_subcommand(
      "privacy-study",
      "Reproduce the paper's privacy study: balanced accuracy of DP-FlyNNFL vs non-private over "
      "(epsilon, T); writes CSVs, PNG plots and report.md");
  cmd->add_option("--out", o->out_dir, "Output folder (default flynn-privacy-study); reruns resume");
  cmd->add_flag("--quick", o->quick, "A small grid (n = 10^4, 3 epsilons, 4 T values, 2 repetitions) for CI");
  cmd->add_option("--repetitions", o->repetitions, "Repetitions per setting (default 10, 2 with --quick)");
  cmd->add_option("--fashion-dir", o->fashion_dir, "Fashion-MNIST IDX folder (skipped when missing)");
  cmd->add_flag("--no-fashion", o->no_fashion, "Only the synthetic part");
  cmd->add_option("--dp-exponent", o->exponent, "paper (default) or reference, see docs/federated.md");
  cmd->add_option("--seed", o->seed, "Seed of data, lifting matrices and splits (default 5489)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_study(*o); });
}

const RegisterCommand registered(61, add_privacy_study);

}  // namespace

}  // namespace flynn::cli
