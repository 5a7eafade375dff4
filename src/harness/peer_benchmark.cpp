#include "flynn/harness/peer_benchmark.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "flynn/baselines/ann_index.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/classifier.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/detail/simd.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"
#include "flynn/harness/speed_benchmark.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

// The medians of `repeats` timings of fn.
template <typename Fn>
CallSeconds median_time(std::uint32_t repeats, Fn&& fn) {
  std::vector<double> wall, cpu;
  for (std::uint32_t i = 0; i < std::max<std::uint32_t>(repeats, 1); ++i) {
    const CallSeconds s = time_call(fn);
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
  }
  return {summarize_timing(wall).median, summarize_timing(cpu).median};
}

// `p` with m and s given explicitly (0: as p has them).
HyperParams with(HyperParams p, std::uint64_t m, std::uint64_t s) {
  if (m) {
    p.m = m;
    p.expansion_factor.reset();
  }
  if (s) {
    p.s = s;
    p.connection_sparsity.reset();
  }
  return p;
}

// Neighbour ids → classes → accuracy on the test rows.
double vote_accuracy(const Neighbours& nb, std::uint32_t k, const Dataset& train, const Dataset& test) {
  return accuracy(test.labels, knn_vote(nb, k, train.labels, train.classes.size()));
}

void log_line(const PeerBenchmarkOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

// One index kind: built on one thread, searched at every breadth on one thread; built
// again on all threads, searched on all threads. A result line per breadth.
void run_index(const PeerSpec& spec, const std::vector<float>& train_rows, const std::vector<float>& test_rows,
               const Dataset& train, const Dataset& test, const PeerBenchmarkOptions& o, int threads_all,
               std::vector<PeerResult>& out) {
  const std::size_t d = train.n_features, first = out.size();
  for (const int threads : {1, threads_all}) {
    std::unique_ptr<AnnIndex> index = spec.library == "hnswlib"
                                          ? make_hnswlib_index(spec.m_links, spec.ef_construction)
                                          : make_faiss_index(spec.factory);
    log_line(o, fmt::format("building {} on {} thread{}", index->name(), threads, threads == 1 ? "" : "s"));
    const CallSeconds build = time_call([&] { index->build(train_rows.data(), train.n_rows, d, threads); });
    for (std::size_t b = 0; b < spec.breadths.size(); ++b) {
      const std::uint32_t breadth = spec.breadths[b];
      if (threads == 1) {
        PeerResult r;
        r.method = index->name() == "FAISS Flat" ? "FAISS exact" : index->name();
        r.setting = index->breadth_name().empty() ? "IndexFlatL2" : fmt::format("{}={}", index->breadth_name(), breadth);
        r.size_bytes = index->size_bytes();
        out.push_back(r);
      }
      PeerResult& r = out[first + b];
      index->set_breadth(breadth);
      log_line(o, fmt::format("searching {} {} on {} thread{}", r.method, r.setting, threads, threads == 1 ? "" : "s"));
      double acc = 0;
      const CallSeconds t = median_time(o.repeats, [&] {
        const Neighbours nb = index->search(test_rows.data(), test.n_rows, o.knn_k, threads);
        acc = vote_accuracy(nb, o.knn_k, train, test);
      });
      if (threads == 1) {
        r.build_1t = build.wall;
        r.build_cpu_1t = build.cpu;
        r.predict_1t = t.wall;
        r.predict_cpu_1t = t.cpu;
        r.accuracy = acc;
      } else {
        r.build_all = build.wall;
        r.predict_all = t.wall;
        r.accuracy_all = acc;
      }
    }
  }
}

void run_flynn(const FlySetting& setting, const Dataset& train, const Dataset& test,
               const PeerBenchmarkOptions& o, int threads_all, std::vector<PeerResult>& out) {
  const FlyConfig config =
      setting.params.resolve(static_cast<std::uint32_t>(train.n_features), train.classes.size());
  PeerResult r;
  r.method = "FlyNN";
  r.flynn = true;
  r.setting = fmt::format("{} ({})", setting.name, config.describe());
  FlyNN model(config, train.classes, 1);
  log_line(o, fmt::format("training FlyNN {} on 1 thread", setting.name));
  const CallSeconds build = time_call([&] { model.fit(train); });
  r.build_1t = build.wall;
  r.build_cpu_1t = build.cpu;
  model.set_threads(threads_all);
  log_line(o, fmt::format("training FlyNN {} on {} threads", setting.name, threads_all));
  r.build_all = time_call([&] { model.fit(train); }).wall;
  r.size_bytes = io::serialize_model(model).size();
  std::vector<std::uint32_t> pred;
  PredictOptions po;
  for (const int threads : {1, threads_all}) {
    po.threads = threads;
    log_line(o, fmt::format("predicting FlyNN {} on {} thread{}", setting.name, threads, threads == 1 ? "" : "s"));
    const CallSeconds t = median_time(o.repeats, [&] { pred = model.predict(test, po); });
    (threads == 1 ? r.predict_1t : r.predict_all) = t.wall;
    if (threads == 1) r.predict_cpu_1t = t.cpu;
  }
  r.accuracy = r.accuracy_all = accuracy(test.labels, pred);  // thread-independent
  out.push_back(r);
}

// "1.23 s" / "45.6 ms".
std::string secs(double s) {
  return s >= 1.0 ? fmt::format("{:.2f} s", s) : fmt::format("{:.0f} ms", s * 1e3);
}

std::string label(const PeerResult& r) {
  if (r.flynn) return "FlyNN " + r.setting.substr(0, r.setting.find(" ("));
  return r.setting == "IndexFlatL2" ? r.method : r.method + " " + r.setting;
}

}  // namespace

const std::vector<FlySetting>& peer_fly_settings() {
  // Beyond the defaults and the paper's setting: the defaults with less work per query
  // (a prediction costs m·s additions per row): fewer lifting ones s, and a smaller m;
  // and the quantised standardised hash alone (no paper half), with m and s chosen on a
  // validation split of Fashion-MNIST's training rows (docs/guide/performance.md, "Less work
  // per query").
  static const std::vector<FlySetting> settings = [] {
    const HyperParams defaults;
    HyperParams zsign_q = with(defaults, 98304, 16);
    zsign_q.variant = parse_variant("zsign-q");
    return std::vector<FlySetting>{
        {"defaults", defaults},
        {"paper", fashion_mnist_paper_params()},
        {"defaults s=32", with(defaults, 0, 32)},
        {"defaults s=16", with(defaults, 0, 16)},
        {"defaults m=32768 s=32", with(defaults, 32768, 32)},
        {"defaults m=16384 s=16", with(defaults, 16384, 16)},
        {"zsign-q m=98304 s=16", zsign_q},
    };
  }();
  return settings;
}

std::vector<PeerSpec> peer_specs(bool smoke) {
  std::vector<PeerSpec> specs = {
      {"faiss", "Flat", 0, 0, {0}},
      {"faiss", smoke ? "IVF32,Flat" : "IVF1024,Flat", 0, 0, {1, 4, 16}},
      {"faiss", "HNSW32", 0, 0, {16, 32, 64}},
  };
  if (have_hnswlib()) specs.push_back({"hnswlib", "", 16, 200, {10, 20, 40}});
  return specs;
}

PeerBenchmarkReport run_peer_benchmark(const Dataset& train, const Dataset& test, const PeerBenchmarkOptions& o) {
  PeerBenchmarkReport rep;
  rep.train_rows = train.n_rows;
  rep.test_rows = test.n_rows;
  rep.features = train.n_features;
  rep.threads_all = flynn::detail::resolve_threads(o.threads);
  rep.simd_target = flynn::detail::simd::target_name();
  rep.machine = machine_description();
  rep.knn_k = o.knn_k;
  rep.repeats = std::max<std::uint32_t>(o.repeats, 1);

  // The indexes' rows: L2-normalised, as the exact-kNN baseline's.
  std::vector<float> train_rows(train.features.size()), test_rows(test.features.size());
  l2_normalize_rows(train.features.data(), train.n_rows, train.n_features, train_rows.data());
  l2_normalize_rows(test.features.data(), test.n_rows, test.n_features, test_rows.data());
  for (const PeerSpec& spec : peer_specs(o.smoke))
    run_index(spec, train_rows, test_rows, train, test, o, rep.threads_all, rep.results);
  rep.blas = blas_description();

  const std::vector<FlySetting>& settings = peer_fly_settings();
  for (std::size_t i = 0; i < (o.smoke ? 2 : settings.size()); ++i)
    run_flynn(settings[i], train, test, o, rep.threads_all, rep.results);
  mark_pareto_and_levels(rep);
  return rep;
}

void mark_pareto_and_levels(PeerBenchmarkReport& rep) {
  std::vector<PeerResult>& rs = rep.results;
  for (PeerResult& r : rs) {
    r.pareto = std::none_of(rs.begin(), rs.end(), [&](const PeerResult& q) {
      return q.accuracy >= r.accuracy && q.predict_1t <= r.predict_1t &&
             (q.accuracy > r.accuracy || q.predict_1t < r.predict_1t);
    });
  }
  std::vector<double> levels = {0.70, 0.72, 0.74, 0.76, 0.78, 0.80, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86};
  for (const PeerResult& r : rs)
    if (r.flynn) levels.push_back(std::floor(r.accuracy * 1000.0) / 1000.0);  // its own accuracy
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  rep.levels.clear();
  for (const double level : levels) {
    AccuracyLevel l;
    l.level = level;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (rs[i].accuracy < level) continue;
      int& best = rs[i].flynn ? l.fastest_flynn : l.fastest_peer;
      if (best < 0 || rs[i].predict_1t < rs[static_cast<std::size_t>(best)].predict_1t) best = static_cast<int>(i);
    }
    if (l.fastest_peer >= 0 || l.fastest_flynn >= 0) rep.levels.push_back(l);
  }
}

nlohmann::json to_json(const PeerBenchmarkReport& rep) {
  nlohmann::json results = nlohmann::json::array();
  for (const PeerResult& r : rep.results)
    results.push_back({{"method", r.method},
                       {"setting", r.setting},
                       {"flynn", r.flynn},
                       {"build_seconds_1t", r.build_1t},
                       {"build_seconds_all", r.build_all},
                       {"predict_seconds_1t", r.predict_1t},
                       {"predict_seconds_all", r.predict_all},
                       {"build_cpu_seconds_1t", r.build_cpu_1t},
                       {"predict_cpu_seconds_1t", r.predict_cpu_1t},
                       {"accuracy", r.accuracy},
                       {"accuracy_all_threads_build", r.accuracy_all},
                       {"size_bytes", r.size_bytes},
                       {"pareto", r.pareto}});
  nlohmann::json levels = nlohmann::json::array();
  auto name = [&](int i) { return i < 0 ? nlohmann::json() : nlohmann::json(label(rep.results[static_cast<std::size_t>(i)])); };
  for (const AccuracyLevel& l : rep.levels)
    levels.push_back({{"accuracy_at_least", l.level}, {"fastest_peer", name(l.fastest_peer)},
                      {"fastest_flynn", name(l.fastest_flynn)}});
  return {{"train_rows", rep.train_rows}, {"test_rows", rep.test_rows}, {"features", rep.features},
          {"threads_all", rep.threads_all}, {"simd_target", rep.simd_target}, {"blas", rep.blas},
          {"machine", rep.machine}, {"knn_k", rep.knn_k}, {"repeats", rep.repeats},
          {"results", results}, {"levels", levels}};
}

std::string to_csv(const PeerBenchmarkReport& rep) {
  std::string csv =
      "label,method,setting,flynn,build_seconds_1t,build_seconds_all,predict_seconds_1t,predict_seconds_all,"
      "build_cpu_seconds_1t,predict_cpu_seconds_1t,accuracy,size_bytes,pareto\n";
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const PeerResult& r : rep.results)
    csv += fmt::format("{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{},{}\n", quoted(label(r)),
                       quoted(r.method), quoted(r.setting), r.flynn ? 1 : 0, r.build_1t, r.build_all, r.predict_1t,
                       r.predict_all, r.build_cpu_1t, r.predict_cpu_1t, r.accuracy, r.size_bytes, r.pareto ? 1 : 0);
  return csv;
}

std::string to_text(const PeerBenchmarkReport& rep) {
  std::string t = fmt::format(
      "Fashion-MNIST {} train / {} test rows, d = {}; indexes on L2-normalised rows, k = {} majority vote\n"
      "{}; SIMD target {}; FAISS BLAS: {}; prediction times: median of {} run{}\n\n",
      rep.train_rows, rep.test_rows, rep.features, rep.knn_k, rep.machine, rep.simd_target, rep.blas, rep.repeats,
      rep.repeats == 1 ? "" : "s");
  t += fmt::format(
      "| method | build / train 1 thread (CPU) | {} threads | predict 1 thread (CPU) | {} threads | accuracy | size | "
      "Pareto |\n",
      rep.threads_all, rep.threads_all);
  t += "|---|---|---|---|---|---|---|---|\n";
  for (const PeerResult& r : rep.results)
    t += fmt::format("| {} | {} ({}) | {} | {} ({}) | {} | {:.4f} | {} | {} |\n", label(r), secs(r.build_1t),
                     secs(r.build_cpu_1t), secs(r.build_all), secs(r.predict_1t), secs(r.predict_cpu_1t),
                     secs(r.predict_all), r.accuracy, human_bytes(r.size_bytes), r.pareto ? "✓" : "");
  t += "\nFlyNN settings:\n";
  for (const PeerResult& r : rep.results)
    if (r.flynn) t += "  " + r.setting + "\n";
  t += "\nFastest at each accuracy (one-thread prediction of the test rows):\n";
  for (const AccuracyLevel& l : rep.levels) {
    auto one = [&](int i) {
      if (i < 0) return std::string("none");
      const PeerResult& r = rep.results[static_cast<std::size_t>(i)];
      return fmt::format("{} ({}, {:.4f})", label(r), secs(r.predict_1t), r.accuracy);
    };
    t += fmt::format("  ≥ {:.3f}: peer {}; {}", l.level, one(l.fastest_peer),
                     l.fastest_flynn < 0 ? std::string("no FlyNN setting") : one(l.fastest_flynn));
    if (l.fastest_peer >= 0 && l.fastest_flynn >= 0)
      t += fmt::format(" — FlyNN {:.2f}x the peer's time",
                       rep.results[static_cast<std::size_t>(l.fastest_flynn)].predict_1t /
                           rep.results[static_cast<std::size_t>(l.fastest_peer)].predict_1t);
    t += "\n";
  }
  std::string front;
  for (const PeerResult& r : rep.results)
    if (r.flynn && r.pareto) front += (front.empty() ? "" : ", ") + label(r);
  t += "\nFlyNN settings on the Pareto front (accuracy vs one-thread prediction time): " +
       (front.empty() ? std::string("none") : front) + "\n";
  return t;
}

}  // namespace flynn::harness
