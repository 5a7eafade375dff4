#include "flynn/harness/fashion_mnist_demo.hpp"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

namespace fs = std::filesystem;

using detail::seconds_since;

// A timed step, heard of by options.progress as it begins and ends.
class Step {
 public:
  Step(const DemoOptions& o, const std::string& name) : o_(o) {
    if (o_.progress) callback_ = o_.progress(name);
  }
  ~Step() {
    if (o_.progress) o_.progress({});
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  const ProgressFn& callback() const { return callback_; }

 private:
  const DemoOptions& o_;
  ProgressFn callback_;
};

DemoResult run_flynn(const std::string& setting, const FlyConfig& config, const Dataset& train,
                     const Dataset& test, const DemoOptions& o) {
  FlyNN model(config, train.classes, o.threads);
  DemoResult row{"FlyNN", setting};
  auto t0 = std::chrono::steady_clock::now();
  {
    const Step step(o, "training " + setting);
    model.fit(train, step.callback());
  }
  row.train_seconds = seconds_since(t0);
  const std::string path = (fs::path(o.out_dir) / ("fashion-mnist-" + setting + ".flynn")).string();
  io::save_model(model, path);
  row.size_bytes = fs::file_size(path);
  PredictOptions po;
  po.threads = o.threads;
  t0 = std::chrono::steady_clock::now();
  const Step step(o, "predicting " + setting);
  po.progress = step.callback();
  const auto pred = model.predict(test, po);
  row.predict_seconds = seconds_since(t0);
  row.accuracy = accuracy(test.labels, pred);
  row.setting += " (" + config.describe() + ")";
  return row;
}

}  // namespace

std::vector<DemoResult> run_demo(const Dataset& train, const Dataset& test, const DemoOptions& o) {
  fs::create_directories(o.out_dir);
  const auto d = static_cast<std::uint32_t>(train.n_features);
  const std::size_t L = train.classes.size();
  std::vector<DemoResult> rows;
  rows.push_back(run_flynn("default", HyperParams{}.resolve(d, L), train, test, o));
  rows.push_back(run_flynn("paper", fashion_mnist_paper_params().resolve(d, L), train, test, o));
  if (!o.knn) return rows;
  DemoResult knn{"kNN (FAISS exact)", fmt::format("k={}, L2-normalised rows", o.knn_k)};
  auto t0 = std::chrono::steady_clock::now();
  ExactKnnIndex index(train, o.threads);
  knn.train_seconds = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto nb = index.search(test, o.knn_k);
  const auto pred = knn_vote(nb, o.knn_k, train.labels, L);
  knn.predict_seconds = seconds_since(t0);
  knn.accuracy = accuracy(test.labels, pred);
  knn.size_bytes = train.n_rows * train.n_features * sizeof(float);  // the index holds the rows
  knn.setting += "; BLAS: " + blas_description();
  rows.push_back(knn);
  return rows;
}

nlohmann::json to_json(const std::vector<DemoResult>& results) {
  nlohmann::json j = nlohmann::json::array();
  for (const DemoResult& r : results)
    j.push_back({{"method", r.method},
                 {"setting", r.setting},
                 {"accuracy", r.accuracy},
                 {"train_seconds", r.train_seconds},
                 {"predict_seconds", r.predict_seconds},
                 {"size_bytes", r.size_bytes}});
  return j;
}

std::string to_text(const std::vector<DemoResult>& results, const std::string& out_dir) {
  std::string text = fmt::format("{:<20} {:>9} {:>10} {:>12} {:>12}\n", "method", "accuracy",
                                 "train s", "predict s", "size") +
                     std::string(67, '-') + "\n";
  for (const DemoResult& r : results)
    text += fmt::format("{:<20} {:>9.4f} {:>10.3f} {:>12.3f} {:>12}\n",
                        r.method + " " +
                            (r.method == "FlyNN" ? r.setting.substr(0, r.setting.find(' ')) : ""),
                        r.accuracy, r.train_seconds, r.predict_seconds, human_bytes(r.size_bytes));
  text += "\nsettings:\n";
  for (const DemoResult& r : results) text += "  " + r.method + ": " + r.setting + "\n";
  text += fmt::format("models written to {}/; kNN size is its float32 index of the training rows\n",
                      out_dir);
  return text;
}

}  // namespace flynn::harness
