// flynn reproduce scaling: training time and speed-up of FlyNNFL with τ evenly split
// parties (paper Fig. 2 and Tables 5–7; spec section 7), as CSV + JSON + PNG + report.md.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/experiments/fashion_mnist.hpp"
#include "flynn/experiments/cross_validation.hpp"
#include "flynn/experiments/manifest.hpp"
#include "flynn/experiments/plot.hpp"
#include "flynn/experiments/scaling_study.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/experiments/study_io.hpp"
#include "flynn/detail/csv_cells.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;
using namespace flynn::federated;
using namespace flynn::experiments;

struct ScalingOptions {
  std::string out_dir = "flynn-scaling";
  std::string data_dir = "../shared/data/openml";
  std::string fashion_dir = "/usr/share/datasets/fashion-mnist";
  std::string digits = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";
  std::string datasets = "digits,letter,fashion-mnist";
  std::string parties = "1,2,4,8,16";
  int repetitions = 0;  // 0 = 10 (2 with --quick)
  std::uint64_t seed = 5489;
  bool quick = false;
  CommonOptions common;
};

// A data set of the study with the spec's hyper-parameters (m as a multiple of d, s/d, ρ, γ).
struct ScalingData {
  std::string name;
  Dataset train, test;
  std::string split_note;
  double expansion = 0, sparsity = 0, gamma = 0;
  std::uint64_t rho = 0;
  double paper_one_party_seconds = 0;  // the Python reference, Table 7 (16-core machine)
  HyperParams hyper(std::uint64_t seed) const {
    HyperParams h;
    h.expansion_factor = expansion;
    h.connection_sparsity = sparsity;
    h.wta_nnz = rho;
    h.gamma = gamma;
    h.seed = seed;
    h.variant = Variant{};  // the paper's method, whatever the defaults
    return h;
  }
  std::string params() const {
    return fmt::format("expansion={} sparsity={} rho={} gamma={}", expansion, sparsity, rho, gamma);
  }
};

std::vector<int> parse_parties(const std::string& list) {
  std::vector<int> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
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
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Stratified 80/20 split (fold 0 of 5 is the test part), for data sets without a test file.
void holdout(Dataset all, ScalingData& d) {
  const auto folds = experiments::stratified_folds(all.labels, all.classes.size(), 5, 0);
  std::vector<std::size_t> tr, te;
  for (std::size_t r = 0; r < all.n_rows; ++r) (folds[r] == 0 ? te : tr).push_back(r);
  d.train = all.subset(tr);
  d.test = all.subset(te);
  d.split_note = "stratified 80/20 hold-out";
}

std::vector<ScalingData> load_datasets(const ScalingOptions& o, std::vector<std::string>& notes) {
  std::set<std::string> wanted;
  std::stringstream ss(o.quick ? std::string("digits") : o.datasets);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item != "digits" && item != "letter" && item != "fashion-mnist")
      throw Error(fmt::format("--datasets: '{}' is not one of digits, letter, fashion-mnist", item));
    wanted.insert(item);
  }
  std::vector<ScalingData> out;
  if (wanted.count("digits")) {
    ScalingData d;
    d.name = "digits";
    holdout(io::load_dataset(o.digits), d);
    d.expansion = 256, d.sparsity = 0.3, d.rho = 32, d.gamma = 0, d.paper_one_party_seconds = 3.6;
    out.push_back(std::move(d));
  }
  if (wanted.count("letter")) {
    try {
      const experiments::Manifest manifest = experiments::read_manifest(o.data_dir);
      const auto entries = experiments::select_entries(manifest, "6");
      if (entries.empty() || entries.front().path.empty()) throw Error("no file for OpenML did 6");
      ScalingData d;
      d.name = "letter";
      holdout(io::load_dataset(entries.front().path), d);
      d.expansion = 1447, d.sparsity = 0.5, d.rho = 221, d.gamma = 0.1, d.paper_one_party_seconds = 25.7;
      out.push_back(std::move(d));
    } catch (const Error& e) {
      notes.push_back(fmt::format("Letter (OpenML did 6) skipped: not available in --data-dir {} ({})",
                                  o.data_dir, e.what()));
    }
  }
  if (wanted.count("fashion-mnist")) {
    try {
      ScalingData d;
      d.name = "fashion-mnist";
      d.train = experiments::load_fashion_mnist(o.fashion_dir, false);
      d.test = experiments::load_fashion_mnist(o.fashion_dir, true);
      d.test.relabel(d.train.classes);
      d.split_note = "standard 60000/10000 split";
      d.expansion = 138, d.sparsity = 0.105, d.rho = 8, d.gamma = 0.8, d.paper_one_party_seconds = 1410;
      out.push_back(std::move(d));
    } catch (const Error& e) {
      notes.push_back(fmt::format("Fashion-MNIST skipped: {}", e.what()));
    }
  }
  if (o.quick) notes.push_back("--quick: Digits only, parties 1,2,4, 2 repetitions");
  return out;
}

const char* kRunsHeader =
    "dataset,parties,repetition,training_seconds,wall_seconds,setup_max,local_max,local_mean,"
    "wait_max,aggregate_min,aggregate_max,finalize_max,bytes_sent_per_party,"
    "bytes_received_per_party,control_bytes_per_party,model_crc32,compute_cpu_max,compute_cpu_sum";

const char* kPlotScript = R"PY(
import csv, sys
import matplotlib.pyplot as plt
summary, out, cores = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = list(csv.DictReader(open(summary)))
names = []
for r in rows:
    if r['dataset'] not in names: names.append(r['dataset'])
fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
for i, n in enumerate(names):
    pts = sorted((int(r['parties']), float(r['mean_seconds']), float(r['sd_seconds']),
                  float(r['speedup']), float(r['speedup_sd']), float(r['cpu_speedup']))
                 for r in rows if r['dataset'] == n)
    tau, m, s, sp, spsd, cpu = zip(*pts)
    c = plt.get_cmap('tab10')(i)
    a1.errorbar(tau, m, yerr=s, marker='o', color=c, capsize=3, label=n)
    a2.errorbar(tau, sp, yerr=spsd, marker='o', color=c, capsize=3, label=n + ' (wall)')
    a2.plot(tau, cpu, marker='s', ls='--', color=c, label=n + ' (CPU critical path)')
taus = sorted({int(r['parties']) for r in rows})
a2.plot(taus, taus, 'k:', lw=1, label='ideal')
a2.axhline(cores, color='red', ls='--', lw=1, label=f'cores = {cores}')
for a in (a1, a2):
    a.set_xscale('log', base=2)
    a.set_xticks(taus)
    a.set_xticklabels([str(t) for t in taus])
    a.set_xlabel('parties (tau)')
    a.grid(alpha=0.3)
a1.set_yscale('log')
a1.set_ylabel('training time (s), mean ± sd')
a1.set_title('FlyNNFL training time')
a2.set_ylabel('speed-up over tau = 1')
a2.set_title('Speed-up: wall (bounded by the cores) and CPU critical path')
a1.legend(fontsize=8)
a2.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
)PY";

struct RunRow {
  std::string dataset;
  ScalingRun run;
};

std::string run_line(const std::string& dataset, const ScalingRun& r) {
  return fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{:08x},{:.6f},{:.6f}",
                     dataset, r.parties, r.repetition, r.training_seconds, r.wall_seconds, r.setup_max,
                     r.local_max, r.local_mean, r.wait_max, r.aggregate_min, r.aggregate_max, r.finalize_max,
                     r.aggregate_traffic.bytes_sent, r.aggregate_traffic.bytes_received,
                     r.control_traffic.bytes_sent, r.model_crc32, r.compute_cpu_max, r.compute_cpu_sum);
}

void run_scaling(const ScalingOptions& o) {
  const std::vector<int> taus = parse_parties(o.quick ? std::string("1,2,4") : o.parties);
  if (o.repetitions < 0) throw Error("--repetitions must be positive");
  const int reps = o.repetitions > 0 ? o.repetitions : (o.quick ? 2 : 10);
  std::vector<std::string> notes;
  std::vector<ScalingData> data = load_datasets(o, notes);
  for (const std::string& n : notes) std::cerr << "flynn: note: " << n << "\n";
  if (data.empty()) throw Error("no data set of the scaling study is available");
  const int cores = usable_cores();

  fs::create_directories(o.out_dir);
  const fs::path out(o.out_dir);
  const fs::path runs_path = out / "runs.csv", sig_path = out / "scaling_grid.txt";
  std::string sig = fmt::format("scaling v2 seed={}", o.seed);
  for (const ScalingData& d : data)
    sig += fmt::format(" [{} n={} d={} {}]", d.name, d.train.n_rows, d.train.n_features, d.params());

  // Resume: runs with the same data and hyper-parameters are kept.
  std::map<std::tuple<std::string, int, int>, std::string> kept;
  {
    std::ifstream sf(sig_path);
    const std::string old((std::istreambuf_iterator<char>(sf)), std::istreambuf_iterator<char>());
    if (old == sig) {
      std::ifstream in(runs_path);
      std::string line;
      std::getline(in, line);
      while (std::getline(in, line)) {
        const auto f = io::csv_split(line);
        if (f.size() != 18) continue;
        try {
          kept[{f[0], std::stoi(f[1]), std::stoi(f[2])}] = line;
        } catch (const std::exception&) {
        }
      }
    }
  }
  std::vector<RunRow> runs;
  {
    std::ofstream f(runs_path, std::ios::trunc);
    f << kRunsHeader << "\n";
    for (const auto& [k, line] : kept) {
      const auto v = io::csv_split(line);
      ScalingRun r;
      r.parties = std::stoi(v[1]);
      r.repetition = std::stoi(v[2]);
      r.training_seconds = std::stod(v[3]);
      r.wall_seconds = std::stod(v[4]);
      r.setup_max = std::stod(v[5]);
      r.local_max = std::stod(v[6]);
      r.local_mean = std::stod(v[7]);
      r.wait_max = std::stod(v[8]);
      r.aggregate_min = std::stod(v[9]);
      r.aggregate_max = std::stod(v[10]);
      r.finalize_max = std::stod(v[11]);
      r.aggregate_traffic.bytes_sent = std::stoull(v[12]);
      r.aggregate_traffic.bytes_received = std::stoull(v[13]);
      r.control_traffic.bytes_sent = std::stoull(v[14]);
      r.model_crc32 = static_cast<std::uint32_t>(std::stoul(v[15], nullptr, 16));
      r.compute_cpu_max = std::stod(v[16]);
      r.compute_cpu_sum = std::stod(v[17]);
      runs.push_back({v[0], r});
      f << line << "\n";
    }
  }
  io::write_file_atomic(sig_path.string(), sig);
  std::ofstream append(runs_path, std::ios::app);

  // The central model of each data set: its accuracy, and the checksum every federated run
  // must reproduce (Theorem 4: the model does not depend on τ).
  struct Central {
    double accuracy = 0, seconds = 0;
    std::uint32_t crc = 0;
  };
  std::map<std::string, Central> central;
  const auto start = std::chrono::steady_clock::now();
  const double load_before = load_average();
  const double cpu_before = cpu_seconds();
  std::size_t total = data.size() * taus.size() * reps, finished = kept.size();
  for (const ScalingData& d : data) {
    const FlyConfig config = d.hyper(o.seed).resolve(static_cast<std::uint32_t>(d.train.n_features),
                                                     d.train.classes.size());
    FlyNN model(config, d.train.classes, o.common.threads);
    const auto t0 = std::chrono::steady_clock::now();
    model.fit(d.train);
    Central c;
    c.seconds = seconds_since(t0);
    c.crc = io::model_checksum(io::serialize_model(model));
    Dataset test = d.test;
    test.relabel(d.train.classes);
    c.accuracy = flynn::accuracy(test.labels, model.predict(test));
    central[d.name] = c;
    // Repetitions outermost, so an interrupted run still has every τ of its first reps.
    for (int rep = 0; rep < reps; ++rep) {
      for (int tau : taus) {
        if (kept.count({d.name, tau, rep})) continue;
        const ScalingRun r = scaling_run(d.train, d.hyper(o.seed), d.train.classes, tau, rep, o.seed);
        runs.push_back({d.name, r});
        append << run_line(d.name, r) << "\n";
        append.flush();
        ++finished;
        if (!o.common.quiet) {
          const double el = seconds_since(start);
          const std::size_t fresh = finished - kept.size();
          std::cerr << fmt::format("[{}/{}] {} tau={} rep={}: {:.3f} s (local {:.3f}, all-reduce {:.4f}); "
                                   "elapsed {:.0f} s, ETA {:.0f} s\n",
                                   finished, total, d.name, tau, rep, r.training_seconds, r.local_max,
                                   r.aggregate_min, el,
                                   fresh ? el / fresh * (total - finished) : 0.0);
        }
      }
    }
  }
  const double run_seconds = seconds_since(start);
  const double load_after = load_average();
  const double run_cpu = cpu_seconds() - cpu_before;

  // ---- summaries ----
  std::ofstream sc(out / "scaling.csv");
  sc << "dataset,n_train,d,classes,m,s,rho,gamma,parties,repetitions,mean_seconds,sd_seconds,speedup,"
        "speedup_sd,local_mean_seconds,allreduce_mean_seconds,wait_mean_seconds,setup_mean_seconds,"
        "bytes_sent_per_party,identical_to_central,cpu_critical_seconds,cpu_speedup\n";
  std::ofstream pd(out / "per_dataset.csv");
  pd << "dataset,method,accuracy,params,seconds\n";
  nlohmann::json jdata = nlohmann::json::array();
  std::string md, cpu_md;
  for (const ScalingData& d : data) {
    const FlyConfig config = d.hyper(o.seed).resolve(static_cast<std::uint32_t>(d.train.n_features),
                                                     d.train.classes.size());
    std::map<int, std::map<int, ScalingRun>> by;  // tau → rep → run
    for (const RunRow& r : runs)
      if (r.dataset == d.name) by[r.run.parties][r.run.repetition] = r.run;
    nlohmann::json jd = {{"dataset", d.name}, {"n_train", d.train.n_rows}, {"n_test", d.test.n_rows},
                         {"d", d.train.n_features}, {"classes", d.train.classes.size()},
                         {"config", config_json(config)}, {"split", d.split_note},
                         {"accuracy", central[d.name].accuracy},
                         {"paper_one_party_seconds", d.paper_one_party_seconds}, {"parties", nlohmann::json::array()}};
    std::string cells;
    const auto& base = by[taus.front()];
    std::vector<double> base_t, base_cpu;
    for (const auto& [rep, r] : base) {
      base_t.push_back(r.training_seconds);
      base_cpu.push_back(r.compute_cpu_max);
    }
    const double base_mean = mean_sd(base_t).mean, base_cpu_mean = mean_sd(base_cpu).mean;
    std::string cpu_cells;
    for (int tau : taus) {
      std::vector<double> t, sp, local, ar, wait, setup, cpu;
      bool identical = true;
      std::uint64_t bytes = 0;
      for (const auto& [rep, r] : by[tau]) {
        t.push_back(r.training_seconds);
        if (base.count(rep)) sp.push_back(base.at(rep).training_seconds / r.training_seconds);
        local.push_back(r.local_max);
        ar.push_back(r.aggregate_min);
        wait.push_back(r.wait_max);
        setup.push_back(r.setup_max);
        cpu.push_back(r.compute_cpu_max);
        identical &= r.model_crc32 == central[d.name].crc;
        bytes = r.aggregate_traffic.bytes_sent;
      }
      const MeanSd mt = mean_sd(t), msp = mean_sd(sp);
      const double speedup = mt.mean > 0 ? base_mean / mt.mean : 0;
      const MeanSd mc = mean_sd(cpu);
      const double cpu_speedup = mc.mean > 0 ? base_cpu_mean / mc.mean : 0;
      sc << fmt::format("{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.4f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{:.6f},{:.4f}\n",
                        d.name, d.train.n_rows, d.train.n_features, d.train.classes.size(), config.m, config.s,
                        config.rho, config.gamma, tau, mt.n, mt.mean, mt.sd, speedup, msp.sd,
                        mean_sd(local).mean, mean_sd(ar).mean, mean_sd(wait).mean, mean_sd(setup).mean, bytes,
                        identical ? "yes" : "NO", mc.mean, cpu_speedup);
      pd << fmt::format("{},FlyNNFL tau={},{:.6f},{},{:.6f}\n", d.name, tau, central[d.name].accuracy,
                        io::csv_field(d.params()), mt.mean);
      jd["parties"].push_back({{"parties", tau}, {"repetitions", mt.n}, {"mean_seconds", mt.mean},
                               {"sd_seconds", mt.sd}, {"speedup", speedup}, {"speedup_sd", msp.sd},
                               {"local_mean_seconds", mean_sd(local).mean},
                               {"allreduce_mean_seconds", mean_sd(ar).mean},
                               {"wait_mean_seconds", mean_sd(wait).mean},
                               {"bytes_sent_per_party", bytes}, {"identical_to_central", identical},
                               {"cpu_critical_seconds", mc.mean}, {"cpu_speedup", cpu_speedup}});
      cells += fmt::format(" {:.3f} ± {:.3f} ({:.2f}×) |", mt.mean, mt.sd, speedup);
      cpu_cells += fmt::format(" {:.3f} ± {:.3f} ({:.2f}×) |", mc.mean, mc.sd, cpu_speedup);
    }
    md += fmt::format("| {} | {} × {} | {} | {} |{}\n", d.name, d.train.n_rows, d.train.n_features,
                      d.train.classes.size(), config.describe().substr(0, config.describe().find(", seed")), cells);
    cpu_md += fmt::format("| {} |{}\n", d.name, cpu_cells);
    jdata.push_back(jd);
  }
  sc.close();
  pd.close();

  std::string split_md;
  for (const nlohmann::json& jd : jdata) {
    for (const auto& p : jd["parties"]) {
      const int tau = p["parties"].get<int>();
      if (tau > 4) continue;
      split_md += fmt::format("| {} | {} | {:.4f} | {:.5f} | {:.4f} | {} |\n", jd["dataset"].get<std::string>(), tau,
                              p["local_mean_seconds"].get<double>(), p["allreduce_mean_seconds"].get<double>(),
                              p["wait_mean_seconds"].get<double>(),
                              human_bytes(p["bytes_sent_per_party"].get<std::uint64_t>()));
    }
  }

  std::string plot_note;
  const std::string png = (out / "scaling.png").string();
  try {
    experiments::run_matplotlib(kPlotScript, {(out / "scaling.csv").string(), png, std::to_string(cores)});
  } catch (const Error& e) {
    plot_note = std::string("The plot could not be drawn: ") + e.what();
    std::cerr << "flynn: warning: " << plot_note << "\n";
  }

  std::string header = "| data | n × d | L | config |", rule = "|---|---|---|---|";
  std::string cpu_header = "| data |", cpu_rule = "|---|";
  for (int tau : taus) {
    header += fmt::format(" τ={} s (speed-up) |", tau);
    rule += "---|";
    cpu_header += fmt::format(" τ={} CPU s (speed-up) |", tau);
    cpu_rule += "---|";
  }
  std::string paper;
  for (const ScalingData& d : data)
    paper += fmt::format("{}{}: {} s", paper.empty() ? "" : ", ", d.name, d.paper_one_party_seconds);
  std::string note_md;
  for (const std::string& n : notes) note_md += "* " + n + "\n";
  const std::string report = fmt::format(
      R"(# Scaling of FlyNNFL with the number of parties

Command: `flynn reproduce scaling --out {out}{quick}`, {reps} repetitions, seed {seed}.
**Machine: {machine}**; 1-minute load average {load0:.2f} at the start and {load1:.2f} at
the end of this invocation (a load above the core count means other processes competed for
the cores and the times are inflated). Parties run concurrently as threads of one process, each with ONE
worker thread (a party stands for one machine's core), so the speed-up over τ = 1 is bounded
by the {cores} core(s) available here: with C cores at most min(τ, C). The paper's Fig. 2 ran on
16 cores (speed-up at 16 parties 3.1× on Digits to 8.9× on Letter).

Training time: the slowest party's time from the start until it holds the aggregated counts
(agreement, lifting matrix from the seed, counting its n/τ rows, status, all-reduce), mean ±
sd over repetitions (each repetition a new random even split). Speed-up: mean time at τ = 1
over mean time at τ. Hyper-parameters (spec section 7; m as a multiple of d, s/d, ρ, γ):
Digits 256, 0.3, 32, 0 · Letter 1447, 0.5, 221, 0.1 · Fashion-MNIST 138, 0.105, 8, 0.8.
The paper's one-party times were of the Python reference on a 16-core machine ({paper}).

{header}
{rule}
{rows}
Critical-path CPU time: the CPU seconds of the busiest party's computation (lifting matrix
and counting, measured on its own thread), mean ± sd, and its speed-up over τ = 1. It does
not grow when the parties or other processes share cores, so it is the speed-up τ machines
with a core each would reach (communication aside, see below), beyond the {cores} core(s) here:

{cpu_header}
{cpu_rule}
{cpu_rows}
Every run's model is byte-identical to central training on the same rows (Theorem 4; column
`identical_to_central` of `scaling.csv`); its test accuracy is in `per_dataset.csv`.

## Time split: local training vs all-reduce

Local = counting the party's rows (mean over repetitions of the slowest party); all-reduce =
the counts all-reduce itself (the fastest party's time, which does not include waiting for
slower parties); wait = the status all-gather before it, i.e. waiting for the slowest party.

| data | τ | local s | all-reduce s | wait s | sent per party |
|---|---|---|---|---|---|
{split}
{notes}
Files: `runs.csv` (every run), `scaling.csv` (mean ± sd, speed-up), `per_dataset.csv`,
`results.json`, `scaling.png` (Figure 2: time and speed-up vs τ). Run time of this
invocation: {secs:.1f} s wall, {cpu:.1f} s CPU, i.e. {eff:.2f} cores busy on average (runs
already on disk are reused; with {cores} idle cores this would approach {cores} for τ ≥ {cores}). {pnote}
)",
      fmt::arg("out", o.out_dir), fmt::arg("quick", o.quick ? " --quick" : ""), fmt::arg("reps", reps),
      fmt::arg("seed", o.seed), fmt::arg("machine", machine_description()), fmt::arg("cores", cores),
      fmt::arg("paper", paper), fmt::arg("header", header), fmt::arg("rule", rule), fmt::arg("rows", md),
      fmt::arg("split", split_md), fmt::arg("notes", note_md), fmt::arg("secs", run_seconds),
      fmt::arg("pnote", plot_note), fmt::arg("load0", load_before), fmt::arg("load1", load_after), fmt::arg("cpu", run_cpu),
      fmt::arg("eff", run_seconds > 0 ? run_cpu / run_seconds : 0.0), fmt::arg("cpu_header", cpu_header), fmt::arg("cpu_rule", cpu_rule), fmt::arg("cpu_rows", cpu_md));
  io::write_file_atomic((out / "report.md").string(), report);
  const nlohmann::json j = {{"command", "reproduce scaling"}, {"load_average", {load_before, load_after}}, {"out", o.out_dir},
                            {"quick", o.quick},              {"repetitions", reps},
                            {"parties", taus},               {"cores", cores},
                            {"machine", machine_description()}, {"seconds", run_seconds}, {"cpu_seconds", run_cpu},
                            {"notes", notes},                {"datasets", jdata}};
  io::write_file_atomic((out / "results.json").string(), j.dump(2) + "\n");
  if (o.common.json) {
    print_json(j);
    return;
  }
  std::cout << fmt::format("scaling study on {} in {:.1f} s → {}/\n", machine_description(), run_seconds, o.out_dir)
            << header << "\n" << rule << "\n" << md << "critical-path CPU time:\n"
            << cpu_header << "\n" << cpu_rule << "\n" << cpu_md;
}

void add_reproduce_scaling(CLI::App& app) {
  auto o = std::make_shared<ScalingOptions>();
  CLI::App* group = command_group(app, "reproduce", "Reproduce the paper's experiments");
  CLI::App* cmd = group->add_subcommand(
      "scaling", "Training time and speed-up of FlyNNFL for 1, 2, 4, 8, 16 evenly split parties "
                 "(paper Fig. 2) on Digits, Letter and Fashion-MNIST");
  cmd->add_option("--out", o->out_dir, "Output folder (default flynn-scaling); reruns resume");
  cmd->add_flag("--quick", o->quick, "Digits only, parties 1,2,4, 2 repetitions (for CI)");
  cmd->add_option("--repetitions", o->repetitions, "Repetitions per party count (default 10)");
  cmd->add_option("--parties", o->parties, "Party counts (default 1,2,4,8,16)");
  cmd->add_option("--datasets", o->datasets, "Subset of digits,letter,fashion-mnist (default all)");
  cmd->add_option("--data-dir", o->data_dir,
                  "OpenML folder with MANIFEST.tsv, for Letter (did 6; skipped when absent)");
  cmd->add_option("--fashion-dir", o->fashion_dir, "Fashion-MNIST IDX folder");
  cmd->add_option("--digits", o->digits, "Digits CSV (default: scikit-learn's copy)");
  cmd->add_option("--seed", o->seed, "Seed of the lifting matrix and the splits (default 5489)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_scaling(*o); });
}

const RegisterCommand registered(72, add_reproduce_scaling);

}  // namespace

}  // namespace flynn::cli
