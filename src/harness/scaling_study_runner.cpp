#include "flynn/harness/scaling_study_runner.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/csv_cells.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/checkpoint.hpp"
#include "flynn/eval/federated_simulation.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/harness/manifest.hpp"
#include "flynn/harness/plot.hpp"
#include "flynn/harness/scaling_study.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

namespace fs = std::filesystem;

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

// Stratified 80/20 split (fold 0 of 5 is the test part), for data sets without a test file.
void holdout(const Dataset& all, ScalingData& d) {
  std::tie(d.train, d.test) = stratified_holdout(all, 0);
  d.split_note = "stratified 80/20 hold-out";
}

std::vector<ScalingData> load_datasets(const ScalingStudyOptions& o, std::vector<std::string>& notes) {
  const std::vector<std::string> names = o.quick ? std::vector<std::string>{"digits"} : o.datasets;
  std::set<std::string> wanted;
  for (const std::string& item : names) {
    if (item != "digits" && item != "letter" && item != "fashion-mnist")
      throw Error(fmt::format("scaling study: data set '{}' is not one of digits, letter, fashion-mnist", item));
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
      const Manifest manifest = read_manifest(o.openml_dir);
      const auto entries = select_entries(manifest, "6");
      if (entries.empty() || entries.front().path.empty()) throw Error("no file for OpenML did 6");
      ScalingData d;
      d.name = "letter";
      holdout(io::load_dataset(entries.front().path), d);
      d.expansion = 1447, d.sparsity = 0.5, d.rho = 221, d.gamma = 0.1, d.paper_one_party_seconds = 25.7;
      out.push_back(std::move(d));
    } catch (const Error& e) {
      notes.push_back(fmt::format("Letter (OpenML did 6) skipped: not available in the OpenML folder {} ({})",
                                  o.openml_dir, e.what()));
    }
  }
  if (wanted.count("fashion-mnist")) {
    try {
      ScalingData d;
      d.name = "fashion-mnist";
      d.train = load_fashion_mnist(o.fashion_dir, false);
      d.test = load_fashion_mnist(o.fashion_dir, true);
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

std::string run_line(const std::string& dataset, const ScalingRun& r) {
  return fmt::format("{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{},{:08x},{:.6f},{:.6f}",
                     dataset, r.parties, r.repetition, r.training_seconds, r.wall_seconds, r.setup_max,
                     r.local_max, r.local_mean, r.wait_max, r.aggregate_min, r.aggregate_max, r.finalize_max,
                     r.aggregate_traffic.bytes_sent, r.aggregate_traffic.bytes_received,
                     r.control_traffic.bytes_sent, r.model_crc32, r.compute_cpu_max, r.compute_cpu_sum);
}

// A run as a checkpoint unit and back (every field runs.csv lists).
nlohmann::json run_to_json(const ScalingRun& r) {
  return {{"parties", r.parties},
          {"repetition", r.repetition},
          {"training_seconds", r.training_seconds},
          {"wall_seconds", r.wall_seconds},
          {"setup_max", r.setup_max},
          {"local_max", r.local_max},
          {"local_mean", r.local_mean},
          {"wait_max", r.wait_max},
          {"aggregate_min", r.aggregate_min},
          {"aggregate_max", r.aggregate_max},
          {"finalize_max", r.finalize_max},
          {"bytes_sent_per_party", r.aggregate_traffic.bytes_sent},
          {"bytes_received_per_party", r.aggregate_traffic.bytes_received},
          {"control_bytes_per_party", r.control_traffic.bytes_sent},
          {"model_crc32", r.model_crc32},
          {"compute_cpu_max", r.compute_cpu_max},
          {"compute_cpu_sum", r.compute_cpu_sum}};
}

ScalingRun run_from_json(const nlohmann::json& j) {
  ScalingRun r;
  r.parties = j.at("parties").get<int>();
  r.repetition = j.at("repetition").get<int>();
  r.training_seconds = j.at("training_seconds").get<double>();
  r.wall_seconds = j.at("wall_seconds").get<double>();
  r.setup_max = j.at("setup_max").get<double>();
  r.local_max = j.at("local_max").get<double>();
  r.local_mean = j.at("local_mean").get<double>();
  r.wait_max = j.at("wait_max").get<double>();
  r.aggregate_min = j.at("aggregate_min").get<double>();
  r.aggregate_max = j.at("aggregate_max").get<double>();
  r.finalize_max = j.at("finalize_max").get<double>();
  r.aggregate_traffic.bytes_sent = j.at("bytes_sent_per_party").get<std::uint64_t>();
  r.aggregate_traffic.bytes_received = j.at("bytes_received_per_party").get<std::uint64_t>();
  r.control_traffic.bytes_sent = j.at("control_bytes_per_party").get<std::uint64_t>();
  r.model_crc32 = j.at("model_crc32").get<std::uint32_t>();
  r.compute_cpu_max = j.at("compute_cpu_max").get<double>();
  r.compute_cpu_sum = j.at("compute_cpu_sum").get<double>();
  return r;
}

// The central model of a data set: its accuracy, and the checksum every federated run must
// reproduce (Theorem 4: the model does not depend on τ).
struct Central {
  double accuracy = 0, seconds = 0;
  std::uint32_t crc = 0;
};

Central central_model(const ScalingData& d, const FlyConfig& config, int threads) {
  FlyNN model(config, d.train.classes, threads);
  const auto t0 = std::chrono::steady_clock::now();
  model.fit(d.train);
  Central c;
  c.seconds = detail::seconds_since(t0);
  // A federation's model records the parties' missing-value policy, as training from a file does.
  model.set_missing_policy(federated::FederationSettings{}.missing);
  c.crc = io::model_checksum(io::serialize_model(model));
  Dataset test = d.test;
  test.relabel(d.train.classes);
  c.accuracy = flynn::accuracy(test.labels, model.predict(test));
  return c;
}

// ---- the study driver: plan, run_unit, summarize, artifacts ----------------------------------

using Log = std::function<void(const std::string&)>;

// What the study runs: per data set, one checkpointed unit per (τ, repetition).
struct ScalingPlan {
  std::vector<int> taus;  // sorted, distinct
  int reps = 0;
  std::vector<std::string> notes;  // data sets skipped, --quick
  std::vector<ScalingData> data;
  int cores = 0;
  fs::path out;
};

ScalingPlan plan_study(const ScalingStudyOptions& o, const Log& log) {
  ScalingPlan plan;
  plan.taus = o.quick ? std::vector<int>{1, 2, 4} : o.parties;
  std::vector<int>& taus = plan.taus;
  std::sort(taus.begin(), taus.end());
  taus.erase(std::unique(taus.begin(), taus.end()), taus.end());
  if (taus.empty() || taus.front() < 1) throw Error("scaling study: party counts must be at least 1");
  if (o.repetitions < 0) throw Error("scaling study: repetitions must be positive");
  plan.reps = o.repetitions > 0 ? o.repetitions : (o.quick ? 2 : 10);
  plan.data = load_datasets(o, plan.notes);
  for (const std::string& n : plan.notes) log("flynn: note: " + n);
  if (plan.data.empty()) throw Error("no data set of the scaling study is available");
  plan.cores = usable_cores();
  plan.out = fs::path(o.out);
  return plan;
}

FlyConfig study_config(const ScalingStudyOptions& o, const ScalingData& d) {
  return d.hyper(o.seed).resolve(static_cast<std::uint32_t>(d.train.n_features), d.train.classes.size());
}

nlohmann::json run_unit(const ScalingStudyOptions& o, const ScalingData& d, int tau, int rep) {
  return run_to_json(scaling_run(d.train, d.hyper(o.seed), d.train.classes, tau, rep, o.seed));
}

// What the runs gave, per data set: the central model and the federated runs in run order.
struct ScalingRuns {
  std::map<std::string, Central> central;
  std::map<std::string, std::vector<ScalingRun>> runs;
};

// One data set's central model and runs (resumed from its checkpoint where they exist).
// `finished` counts the runs over all data sets, resumed ones included, for the log.
void run_dataset(const ScalingStudyOptions& o, const ScalingPlan& plan, const ScalingData& d,
                 const StudyClock& clock, const Log& log, std::size_t& finished, ScalingRuns& results) {
  results.central[d.name] = central_model(d, study_config(o, d), o.threads);
  // Runs of other data, hyper-parameters or seed are recomputed.
  const Checkpoint checkpoint((plan.out / "runs").string(),
                              {{"study", "scaling"}, {"version", 3}, {"seed", o.seed}, {"dataset", d.name},
                               {"n", d.train.n_rows}, {"d", d.train.n_features}, {"params", d.params()}});
  // Repetitions outermost, so an interrupted run still has every τ of its first reps.
  std::vector<BatchUnit> units;
  std::vector<std::pair<int, int>> order;  // (τ, repetition)
  for (int rep = 0; rep < plan.reps; ++rep)
    for (int tau : plan.taus) {
      units.push_back({fmt::format("{}-tau{}-r{:02}", d.name, tau, rep), 1.0});
      order.emplace_back(tau, rep);
    }
  const std::size_t total = plan.data.size() * plan.taus.size() * plan.reps;
  BatchOptions bo;
  bo.jobs = 1;  // timings: one run at a time
  bo.on_start = [&](const BatchProgress& p) { finished += p.resumed; };
  bo.on_finished = [&](std::size_t i, const nlohmann::json& j, const BatchProgress& p) {
    ++finished;
    const ScalingRun r = run_from_json(j);
    log(fmt::format("[{}/{}] {} tau={} rep={}: {:.3f} s (local {:.3f}, all-reduce {:.4f}); elapsed {:.0f} s, ETA "
                    "{:.0f} s",
                    finished, total, d.name, order[i].first, order[i].second, r.training_seconds, r.local_max,
                    r.aggregate_min, clock.elapsed(), p.eta_seconds));
  };
  const BatchOutcome outcome = run_checkpointed(checkpoint, units, [&](std::size_t i) {
    return run_unit(o, d, order[i].first, order[i].second);
  }, bo);
  for (const nlohmann::json& j : outcome.results) results.runs[d.name].push_back(run_from_json(j));
}

// What the study found: the tables of scaling.csv, per_dataset.csv and the report.
struct ScalingSummary {
  std::string scaling_csv =
      "dataset,n_train,d,classes,m,s,rho,gamma,parties,repetitions,mean_seconds,sd_seconds,speedup,"
      "speedup_sd,local_mean_seconds,allreduce_mean_seconds,wait_mean_seconds,setup_mean_seconds,"
      "bytes_sent_per_party,identical_to_central,cpu_critical_seconds,cpu_speedup\n";
  std::string per_dataset_csv = "dataset,method,accuracy,params,seconds\n";
  nlohmann::json datasets = nlohmann::json::array();
  std::string md, cpu_md;  // the report's time and CPU-time table rows
};

// The mean over repetitions of the runs at τ = 1 (the smallest τ): what speed-ups divide.
struct Baseline {
  const std::map<int, ScalingRun>& runs;  // repetition → run
  double mean_seconds, mean_cpu;
};

// One τ's line of every table (its cells of the markdown rows appended to `cells`).
void summarize_parties(const ScalingData& d, const FlyConfig& config, const Central& central, int tau,
                       const std::map<int, ScalingRun>& by_rep, const Baseline& base, nlohmann::json& jd,
                       std::string& cells, std::string& cpu_cells, ScalingSummary& s) {
  std::vector<double> t, sp, local, ar, wait, setup, cpu;
  bool identical = true;
  std::uint64_t bytes = 0;
  for (const auto& [rep, r] : by_rep) {
    t.push_back(r.training_seconds);
    if (base.runs.count(rep)) sp.push_back(base.runs.at(rep).training_seconds / r.training_seconds);
    local.push_back(r.local_max);
    ar.push_back(r.aggregate_min);
    wait.push_back(r.wait_max);
    setup.push_back(r.setup_max);
    cpu.push_back(r.compute_cpu_max);
    identical &= r.model_crc32 == central.crc;
    bytes = r.aggregate_traffic.bytes_sent;
  }
  const MeanSd mt = mean_sd(t), msp = mean_sd(sp);
  const double speedup = mt.mean > 0 ? base.mean_seconds / mt.mean : 0;
  const MeanSd mc = mean_sd(cpu);
  const double cpu_speedup = mc.mean > 0 ? base.mean_cpu / mc.mean : 0;
  s.scaling_csv += fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{:.6f},{:.6f},{:.4f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{:.6f},{:.4f}\n",
      d.name, d.train.n_rows, d.train.n_features, d.train.classes.size(), config.m, config.s, config.rho,
      config.gamma, tau, mt.n, mt.mean, mt.sd, speedup, msp.sd, mean_sd(local).mean, mean_sd(ar).mean,
      mean_sd(wait).mean, mean_sd(setup).mean, bytes, identical ? "yes" : "NO", mc.mean, cpu_speedup);
  s.per_dataset_csv += fmt::format("{},FlyNNFL tau={},{:.6f},{},{:.6f}\n", d.name, tau, central.accuracy,
                                   detail::csv_field(d.params()), mt.mean);
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

void summarize_dataset(const ScalingStudyOptions& o, const ScalingPlan& plan, const ScalingData& d,
                       const Central& central, const std::vector<ScalingRun>& runs, ScalingSummary& s) {
  const FlyConfig config = study_config(o, d);
  std::map<int, std::map<int, ScalingRun>> by;  // tau → rep → run
  for (const ScalingRun& r : runs) by[r.parties][r.repetition] = r;
  nlohmann::json jd = {{"dataset", d.name}, {"n_train", d.train.n_rows}, {"n_test", d.test.n_rows},
                       {"d", d.train.n_features}, {"classes", d.train.classes.size()},
                       {"config", config_json(config)},
                       {"split", d.split_note}, {"accuracy", central.accuracy},
                       {"paper_one_party_seconds", d.paper_one_party_seconds}, {"parties", nlohmann::json::array()}};
  const auto& base_runs = by[plan.taus.front()];
  std::vector<double> base_t, base_cpu;
  for (const auto& [rep, r] : base_runs) {
    base_t.push_back(r.training_seconds);
    base_cpu.push_back(r.compute_cpu_max);
  }
  const Baseline base{base_runs, mean_sd(base_t).mean, mean_sd(base_cpu).mean};
  std::string cells, cpu_cells;
  for (int tau : plan.taus) summarize_parties(d, config, central, tau, by[tau], base, jd, cells, cpu_cells, s);
  s.md += fmt::format("| {} | {} × {} | {} | {} |{}\n", d.name, d.train.n_rows, d.train.n_features,
                      d.train.classes.size(), config.describe().substr(0, config.describe().find(", seed")), cells);
  s.cpu_md += fmt::format("| {} |{}\n", d.name, cpu_cells);
  s.datasets.push_back(jd);
}

ScalingSummary summarize(const ScalingStudyOptions& o, const ScalingPlan& plan, const ScalingRuns& results) {
  ScalingSummary s;
  for (const ScalingData& d : plan.data)
    summarize_dataset(o, plan, d, results.central.at(d.name), results.runs.at(d.name), s);
  return s;
}

// The report's table of the time split, τ ≤ 4.
std::string split_rows(const ScalingSummary& s) {
  std::string split_md;
  for (const nlohmann::json& jd : s.datasets) {
    for (const auto& p : jd["parties"]) {
      const int tau = p["parties"].get<int>();
      if (tau > 4) continue;
      split_md += fmt::format("| {} | {} | {:.4f} | {:.5f} | {:.4f} | {} |\n", jd["dataset"].get<std::string>(), tau,
                              p["local_mean_seconds"].get<double>(), p["allreduce_mean_seconds"].get<double>(),
                              p["wait_mean_seconds"].get<double>(),
                              human_bytes(p["bytes_sent_per_party"].get<std::uint64_t>()));
    }
  }
  return split_md;
}

// The markdown tables' header and rule lines: time, and critical-path CPU time.
struct TableHeads {
  std::string header = "| data | n × d | L | config |", rule = "|---|---|---|---|";
  std::string cpu_header = "| data |", cpu_rule = "|---|";
};

TableHeads table_heads(const ScalingPlan& plan) {
  TableHeads h;
  for (int tau : plan.taus) {
    h.header += fmt::format(" τ={} s (speed-up) |", tau);
    h.rule += "---|";
    h.cpu_header += fmt::format(" τ={} CPU s (speed-up) |", tau);
    h.cpu_rule += "---|";
  }
  return h;
}

std::string report_markdown(const ScalingStudyOptions& o, const ScalingPlan& plan, const ScalingSummary& s,
                            const StudyClock& clock, const std::string& plot_note) {
  const TableHeads h = table_heads(plan);
  std::string paper;
  for (const ScalingData& d : plan.data)
    paper += fmt::format("{}{}: {} s", paper.empty() ? "" : ", ", d.name, d.paper_one_party_seconds);
  std::string note_md;
  for (const std::string& n : plan.notes) note_md += "* " + n + "\n";
  const std::string command =
      o.command.empty() ? fmt::format("flynn reproduce scaling --out {}{}", o.out, o.quick ? " --quick" : "")
                        : o.command;
  return fmt::format(
      R"(# Scaling of FlyNNFL with the number of parties

Command: `{command}`, {reps} repetitions, seed {seed}.
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
`results.json`, `scaling.png` (Figure 2: time and speed-up vs τ), and `runs/` (one file per
finished run, what a rerun resumes from). Run time of this
invocation: {secs:.1f} s wall, {cpu:.1f} s CPU, i.e. {eff:.2f} cores busy on average (runs
already on disk are reused; with {cores} idle cores this would approach {cores} for τ ≥ {cores}). {pnote}
)",
      fmt::arg("command", command), fmt::arg("reps", plan.reps), fmt::arg("seed", o.seed),
      fmt::arg("machine", machine_description()), fmt::arg("cores", plan.cores), fmt::arg("paper", paper),
      fmt::arg("header", h.header), fmt::arg("rule", h.rule), fmt::arg("rows", s.md),
      fmt::arg("split", split_rows(s)), fmt::arg("notes", note_md), fmt::arg("secs", clock.seconds),
      fmt::arg("pnote", plot_note), fmt::arg("load0", clock.load_before), fmt::arg("load1", clock.load_after),
      fmt::arg("cpu", clock.cpu_seconds),
      fmt::arg("eff", clock.seconds > 0 ? clock.cpu_seconds / clock.seconds : 0.0),
      fmt::arg("cpu_header", h.cpu_header), fmt::arg("cpu_rule", h.cpu_rule), fmt::arg("cpu_rows", s.cpu_md));
}

// Writes every file of the study (the tables, plot, report and results.json).
ScalingStudyResult write_artifacts(const ScalingStudyOptions& o, const ScalingPlan& plan, const ScalingRuns& results,
                                   const ScalingSummary& s, const StudyClock& clock, const Log& log) {
  const fs::path& out = plan.out;
  io::write_file_atomic((out / "runs.csv").string(), [&](std::ostream& f) {
    f << kRunsHeader << "\n";
    for (const ScalingData& d : plan.data)
      for (const ScalingRun& r : results.runs.at(d.name)) f << run_line(d.name, r) << "\n";
  });
  io::write_file_atomic((out / "scaling.csv").string(), s.scaling_csv);
  io::write_file_atomic((out / "per_dataset.csv").string(), s.per_dataset_csv);
  std::string plot_note;
  try {
    run_plot_script("scaling.py",
                    {(out / "scaling.csv").string(), (out / "scaling.png").string(), std::to_string(plan.cores)});
  } catch (const Error& e) {
    plot_note = std::string("The plot could not be drawn: ") + e.what();
    log("flynn: warning: " + plot_note);
  }
  io::write_file_atomic((out / "report.md").string(), report_markdown(o, plan, s, clock, plot_note));
  ScalingStudyResult result;
  result.summary = {{"command", "reproduce scaling"}, {"load_average", {clock.load_before, clock.load_after}},
                    {"out", o.out},                  {"quick", o.quick},
                    {"repetitions", plan.reps},      {"parties", plan.taus},
                    {"cores", plan.cores},           {"machine", machine_description()},
                    {"seconds", clock.seconds},      {"cpu_seconds", clock.cpu_seconds},
                    {"notes", plan.notes},           {"datasets", s.datasets}};
  io::write_file_atomic((out / "results.json").string(), result.summary.dump(2) + "\n");
  const TableHeads h = table_heads(plan);
  result.table_markdown = h.header + "\n" + h.rule + "\n" + s.md + "critical-path CPU time:\n" + h.cpu_header +
                          "\n" + h.cpu_rule + "\n" + s.cpu_md;
  result.seconds = clock.seconds;
  return result;
}

}  // namespace

ScalingStudyResult run_scaling_study(const ScalingStudyOptions& o) {
  const Log log = [&](const std::string& line) {
    if (o.log) o.log(line);
  };
  const ScalingPlan plan = plan_study(o, log);
  fs::create_directories(plan.out);
  ScalingRuns results;
  StudyClock clock;
  std::size_t finished = 0;  // over all data sets, resumed runs included
  for (const ScalingData& d : plan.data) run_dataset(o, plan, d, clock, log, finished, results);
  clock.stop();
  return write_artifacts(o, plan, results, summarize(o, plan, results), clock, log);
}

}  // namespace flynn::harness
