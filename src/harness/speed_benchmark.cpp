#include "flynn/harness/speed_benchmark.hpp"

#include "flynn/detail/cpu_time.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/metrics.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/detail/simd.hpp"
#include "flynn/harness/add_rate.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

Timing summarize_timing(std::vector<double> runs) {
  Timing t;
  t.runs = runs;
  if (runs.empty()) return t;
  std::sort(runs.begin(), runs.end());
  t.min = runs.front();
  t.max = runs.back();
  const std::size_t n = runs.size();
  t.median = n % 2 ? runs[n / 2] : 0.5 * (runs[n / 2 - 1] + runs[n / 2]);
  return t;
}

namespace {

// The speed benchmark's measures, each into its part of the report (the model fitted).

void time_training(FlyNN& model, const Dataset& train, const SpeedBenchmarkOptions& o, SpeedBenchmarkReport& r) {
  std::vector<double> t1, ta;  // one thread, all threads
  for (std::uint32_t i = 0; i < o.repeats; ++i) {
    model.set_threads(1);
    t1.push_back(time_call([&] { model.fit(train); }).wall);
    model.set_threads(o.threads);
    ta.push_back(time_call([&] { model.fit(train); }).wall);
  }
  r.train_1t = summarize_timing(t1);
  r.train_all = summarize_timing(ta);
}

// The kernel alone: hashing every training row on one core, results discarded. The
// roofline is the streaming-add rate of the lane type the kernel uses for these rows.
void time_kernel(const FlyNN& model, const Dataset& train, const SpeedBenchmarkOptions& o, SpeedBenchmarkReport& r) {
  r.lane = train.n_rows ? model.hasher().row_path(train.row(0)) : "float";
  using detail::simd::Lane;
  const Lane lane = r.lane == "uint8"   ? Lane::Uint8ToInt16
                    : r.lane == "int16" ? Lane::Int16
                                        : Lane::Float32;
  std::vector<double> h1;
  for (std::uint32_t i = 0; i < o.repeats; ++i) {
    h1.push_back(time_call([&] {
      model.hasher().hash_stream(train.features.data(), train.n_rows, 1,
                                 [](int, std::size_t, std::size_t, const std::uint32_t*) {});
    }).wall);
  }
  r.hash_1t = summarize_timing(h1);
  r.additions = static_cast<double>(train.n_rows) * r.config.m * r.config.s;
  r.hash_add_rate = r.additions / r.hash_1t.median;
  r.peak_add_rate = detail::simd::peak_add_rate(lane, o.peak_seconds);
}

void time_prediction(const FlyNN& model, const Dataset& test, const SpeedBenchmarkOptions& o,
                     SpeedBenchmarkReport& r) {
  std::vector<double> p1, pa;
  std::vector<std::uint32_t> pred;
  for (std::uint32_t i = 0; i < o.repeats; ++i) {
    PredictOptions po;
    po.threads = 1;
    p1.push_back(time_call([&] { pred = model.predict(test, po); }).wall);
    po.threads = o.threads;
    pa.push_back(time_call([&] { pred = model.predict(test, po); }).wall);
  }
  r.predict_1t = summarize_timing(p1);
  r.predict_all = summarize_timing(pa);
  r.flynn_accuracy = flynn::accuracy(test.labels, pred);
}

// FAISS exact kNN on the same normalised rows; index construction is not timed (it is a
// copy), search + vote is.
void time_knn(const Dataset& train, const Dataset& test, const SpeedBenchmarkOptions& o, SpeedBenchmarkReport& r) {
  std::vector<double> k1, kall;
  std::vector<std::uint32_t> pred;
  const auto search = [&](const ExactKnnIndex& index) {
    const Neighbours nb = index.search(test, o.knn_k);
    pred = knn_vote(nb, o.knn_k, train.labels, train.classes.size());
  };
  for (std::uint32_t i = 0; i < o.knn_repeats; ++i) {
    if (o.single_thread_knn) {
      ExactKnnIndex index(train, 1);
      k1.push_back(time_call([&] { search(index); }).wall);
      r.knn_1t_measured = true;
    }
    ExactKnnIndex index(train, o.threads);
    kall.push_back(time_call([&] { search(index); }).wall);
  }
  r.knn_1t = summarize_timing(k1);
  r.knn_all = summarize_timing(kall);
  r.knn_accuracy = flynn::accuracy(test.labels, pred);
}

}  // namespace

SpeedBenchmarkReport run_speed_benchmark(const Dataset& train, const Dataset& test,
                                         const FlyConfig& config,
                                         const SpeedBenchmarkOptions& o) {
  SpeedBenchmarkReport r;
  r.train_rows = train.n_rows;
  r.test_rows = test.n_rows;
  r.features = train.n_features;
  r.config = config;
  r.simd_target = detail::simd::target_name();
  r.threads_all = detail::resolve_threads(o.threads);

  FlyNN model(config, train.classes, 1);
  time_training(model, train, o, r);
  time_kernel(model, train, o, r);
  time_prediction(model, test, o, r);
  time_knn(train, test, o, r);
  r.blas = blas_description();

  r.model_bytes = io::serialize_model(model).size();
  r.train_bytes_uint8 = static_cast<std::uint64_t>(train.n_rows) * train.n_features;
  r.train_bytes_float32 = r.train_bytes_uint8 * sizeof(float);
  return r;
}

namespace {
nlohmann::json timing_json(const Timing& t) {
  return {{"median", t.median}, {"min", t.min}, {"max", t.max}, {"runs", t.runs}};
}
}  // namespace

nlohmann::json to_json(const SpeedBenchmarkReport& r) {
  nlohmann::json j = {
      {"train_rows", r.train_rows},
      {"test_rows", r.test_rows},
      {"features", r.features},
      {"config", config_json(r.config)},
      {"simd_target", r.simd_target},
      {"threads_all", r.threads_all},
      {"blas", r.blas},
      {"flynn_train_seconds_1t", timing_json(r.train_1t)},
      {"flynn_train_seconds_all", timing_json(r.train_all)},
      {"flynn_hash_seconds_1t", timing_json(r.hash_1t)},
      {"flynn_predict_seconds_1t", timing_json(r.predict_1t)},
      {"flynn_predict_seconds_all", timing_json(r.predict_all)},
      {"flynn_accuracy", r.flynn_accuracy},
      {"knn_predict_seconds_all", timing_json(r.knn_all)},
      {"knn_accuracy", r.knn_accuracy},
      {"predict_speedup_vs_faiss_all", r.knn_all.median / r.predict_all.median},
      {"additions", r.additions},
      {"hash_add_rate", r.hash_add_rate},
      {"peak_add_rate", r.peak_add_rate},
      {"peak_fraction", r.hash_add_rate / r.peak_add_rate},
      {"lane", r.lane},
      {"model_bytes", r.model_bytes},
      {"train_bytes_uint8", r.train_bytes_uint8},
      {"train_bytes_float32", r.train_bytes_float32},
      {"model_ratio_uint8", double(r.train_bytes_uint8) / r.model_bytes},
  };
  if (r.knn_1t_measured) {
    j["knn_predict_seconds_1t"] = timing_json(r.knn_1t);
    j["predict_speedup_vs_faiss_1t"] = r.knn_1t.median / r.predict_1t.median;
  }
  return j;
}

bool is_full_split(const SpeedBenchmarkReport& r) {
  return r.train_rows == 60000 && r.test_rows == 10000;
}

void shrink_to_smoke(Dataset& train, Dataset& test, SpeedBenchmarkOptions& o) {
  std::vector<std::size_t> tr(std::min<std::size_t>(3000, train.n_rows)),
      te(std::min<std::size_t>(500, test.n_rows));
  for (std::size_t i = 0; i < tr.size(); ++i) tr[i] = i;
  for (std::size_t i = 0; i < te.size(); ++i) te[i] = i;
  train = train.subset(tr);
  test = test.subset(te);
  o.repeats = 1;
  o.knn_repeats = 1;
  o.peak_seconds = 0.05;
}

std::string to_text(const SpeedBenchmarkReport& r, const SpeedBenchmarkOptions& so,
                    const char* coretype) {
  auto ms = [](const Timing& t) { return fmt::format("{:8.3f} s", t.median); };
  std::string text =
      fmt::format("Fashion-MNIST {} train / {} test rows, d = {}; {}\n", r.train_rows,
                  r.test_rows, r.features, r.config.describe()) +
      fmt::format("SIMD target {}, {} threads for 'all'; FAISS BLAS: {}{}\n", r.simd_target,
                  r.threads_all, r.blas,
                  coretype ? fmt::format(" [OPENBLAS_CORETYPE={}]", coretype) : "") +
      fmt::format("medians of {} runs (FAISS: {})\n\n", so.repeats, so.knn_repeats) +
      fmt::format("{:<44} {:>12} {:>12}\n", "", "1 thread", fmt::format("{} threads", r.threads_all)) +
      fmt::format("{:<44} {:>12} {:>12}\n", "FlyNN training", ms(r.train_1t), ms(r.train_all)) +
      fmt::format("{:<44} {:>12} {:>12}\n", "FlyNN prediction", ms(r.predict_1t), ms(r.predict_all)) +
      fmt::format("{:<44} {:>12} {:>12}\n",
                  "FAISS exact kNN prediction (k=" + std::to_string(so.knn_k) + ")",
                  r.knn_1t_measured ? ms(r.knn_1t) : std::string("-"), ms(r.knn_all)) +
      fmt::format("{:<44} {:>12} {:>11.1f}x\n", "prediction speed-up over FAISS",
                  r.knn_1t_measured ? fmt::format("{:.1f}x", r.knn_1t.median / r.predict_1t.median) : "-",
                  r.knn_all.median / r.predict_all.median) +
      "\n" +
      fmt::format("accuracy: FlyNN {:.4f}, kNN {:.4f}\n", r.flynn_accuracy, r.knn_accuracy) +
      fmt::format("FlyHash kernel: {:.3g} {} additions in {:.3f} s on one core = {:.1f} G/s; "
                  "peak streaming-add rate {:.1f} G/s; {:.0f}% of peak\n",
                  r.additions, r.lane, r.hash_1t.median, r.hash_add_rate / 1e9,
                  r.peak_add_rate / 1e9, 100.0 * r.hash_add_rate / r.peak_add_rate) +
      fmt::format("model: {} on disk; training rows {} as uint8 ({:.0f}x larger), {} as float32 ({:.0f}x)\n",
                  human_bytes(r.model_bytes), human_bytes(r.train_bytes_uint8),
                  double(r.train_bytes_uint8) / r.model_bytes, human_bytes(r.train_bytes_float32),
                  double(r.train_bytes_float32) / r.model_bytes);
  if (is_full_split(r))
    text += fmt::format(
        "vs the Python reference on one core (training {:.0f} s, prediction {:.0f} s; scikit-learn kNN "
        "{:.0f} s): training {:.0f}x faster on 1 thread, {:.0f}x on {}; prediction {:.0f}x faster on 1 thread\n",
        kReferenceTrainSeconds, kReferencePredictSeconds, kSklearnKnnPredictSeconds,
        kReferenceTrainSeconds / r.train_1t.median, kReferenceTrainSeconds / r.train_all.median,
        r.threads_all, kReferencePredictSeconds / r.predict_1t.median);
  return text;
}

}  // namespace flynn::harness
