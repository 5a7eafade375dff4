// flynn demo: the main job. Fashion-MNIST with flynn's defaults and the paper's setting,
// next to exact kNN (FAISS), on the standard 60000/10000 split.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;

struct DemoOptions {
  std::string fashion_dir = experiments::kDefaultFashionMnistDir;
  std::string out = "flynn-demo";
  std::uint32_t knn_k = 10;
  bool skip_knn = false;
  CommonOptions common;
};

struct Row {
  std::string method;
  std::string setting;
  double accuracy = 0, train_seconds = 0, predict_seconds = 0;
  std::uint64_t size_bytes = 0;
};

Row run_flynn(const std::string& setting, const FlyConfig& config, const Dataset& train,
              const Dataset& test, const DemoOptions& o) {
  FlyNN model(config, train.classes, o.common.threads);
  Row row{"FlyNN", setting};
  auto t0 = std::chrono::steady_clock::now();
  {
    ProgressBar bar("training " + setting, !o.common.quiet);
    model.fit(train, bar.callback());
  }
  row.train_seconds = seconds_since(t0);
  const std::string path = (fs::path(o.out) / ("fashion-mnist-" + setting + ".flynn")).string();
  io::save_model(model, path);
  row.size_bytes = fs::file_size(path);
  PredictOptions po;
  po.threads = o.common.threads;
  t0 = std::chrono::steady_clock::now();
  ProgressBar bar("predicting " + setting, !o.common.quiet);
  po.progress = bar.callback();
  const auto pred = model.predict(test, po);
  row.predict_seconds = seconds_since(t0);
  row.accuracy = flynn::accuracy(test.labels, pred);
  row.setting += " (" + config.describe() + ")";
  return row;
}

void run_demo(const DemoOptions& o) {
  const Dataset train = experiments::load_fashion_mnist(o.fashion_dir, false);
  Dataset test = experiments::load_fashion_mnist(o.fashion_dir, true);
  test.relabel(train.classes);
  fs::create_directories(o.out);
  const auto d = static_cast<std::uint32_t>(train.n_features);

  std::vector<Row> rows;
  rows.push_back(run_flynn("default", HyperParams{}.resolve(d, train.classes.size()), train, test, o));
  rows.push_back(run_flynn("paper", experiments::fashion_mnist_paper_params().resolve(d, train.classes.size()), train, test, o));

  if (!o.skip_knn) {
    Row knn{"kNN (FAISS exact)", fmt::format("k={}, L2-normalised rows", o.knn_k)};
    auto t0 = std::chrono::steady_clock::now();
    experiments::ExactKnnIndex index(train, o.common.threads);
    knn.train_seconds = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const auto nb = index.search(test, o.knn_k);
    const auto pred = experiments::knn_vote(nb, o.knn_k, train.labels, train.classes.size());
    knn.predict_seconds = seconds_since(t0);
    knn.accuracy = flynn::accuracy(test.labels, pred);
    knn.size_bytes = train.n_rows * train.n_features * sizeof(float);  // the index holds the rows
    knn.setting += "; BLAS: " + experiments::blas_description();
    rows.push_back(knn);
  }

  if (o.common.json) {
    nlohmann::json j = {{"command", "demo"},
                        {"data_dir", o.fashion_dir},
                        {"train_rows", train.n_rows},
                        {"test_rows", test.n_rows},
                        {"features", train.n_features},
                        {"threads", o.common.threads},
                        {"results", nlohmann::json::array()}};
    for (const Row& r : rows)
      j["results"].push_back({{"method", r.method},
                              {"setting", r.setting},
                              {"accuracy", r.accuracy},
                              {"train_seconds", r.train_seconds},
                              {"predict_seconds", r.predict_seconds},
                              {"size_bytes", r.size_bytes}});
    print_json(j);
    return;
  }
  std::cout << fmt::format("Fashion-MNIST: {} training rows, {} test rows, {} features ({})\n\n",
                           train.n_rows, test.n_rows, train.n_features, o.fashion_dir)
            << fmt::format("{:<20} {:>9} {:>10} {:>12} {:>12}\n", "method", "accuracy", "train s",
                           "predict s", "size")
            << std::string(67, '-') << "\n";
  for (const Row& r : rows)
    std::cout << fmt::format("{:<20} {:>9.4f} {:>10.3f} {:>12.3f} {:>12}\n", r.method + " " +
                                 (r.method == "FlyNN" ? r.setting.substr(0, r.setting.find(' ')) : ""),
                             r.accuracy, r.train_seconds, r.predict_seconds, human_bytes(r.size_bytes));
  std::cout << "\nsettings:\n";
  for (const Row& r : rows) std::cout << "  " << r.method << ": " << r.setting << "\n";
  std::cout << fmt::format("models written to {}/; kNN size is its float32 index of the training rows\n",
                           o.out);
}

void add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "The main job: Fashion-MNIST with flynn's defaults and the paper's setting, beside exact kNN");
  add_fashion_dir_option(cmd, o->fashion_dir, "Folder with the Fashion-MNIST IDX files", true);
  add_out_option(cmd, o->out, "Where the trained models are written (default flynn-demo)");
  cmd->add_option("--knn-k", o->knn_k, "k of the kNN baseline (default 10)");
  cmd->add_flag("--skip-knn", o->skip_knn, "Do not run the kNN baseline");
  // Acted on before parsing (prepare_bench scans argv: the BLAS kernels are chosen when the
  // library loads), so the flag stores nothing; it is declared for --help and validation.
  cmd->add_flag("--keep-blas-core")
                ->description("Do not set OPENBLAS_CORETYPE / OMP_WAIT_POLICY for FAISS (see flynn bench)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_demo(*o); });
}

const RegisterCommand registered(5, add_demo_command);

}  // namespace

}  // namespace flynn::cli
