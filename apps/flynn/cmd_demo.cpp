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
#include "flynn/experiments/fashion_mnist.hpp"
#include "flynn/experiments/knn.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;

struct DemoOptions {
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  std::string out_dir = "flynn-demo";
  std::uint32_t knn_k = 10;
  bool skip_knn = false;
  bool keep_blas_core = false;  // acted on before parsing, in prepare_bench()
  CommonOptions common;
};

struct Row {
  std::string method;
  std::string setting;
  double accuracy = 0, train_seconds = 0, predict_seconds = 0;
  std::uint64_t size_bytes = 0;
};

double accuracy_of(const std::vector<std::uint32_t>& pred, const std::vector<std::uint32_t>& truth) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) c += pred[i] == truth[i];
  return pred.empty() ? 0.0 : static_cast<double>(c) / pred.size();
}

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
  const std::string path = (fs::path(o.out_dir) / ("fashion-mnist-" + setting + ".flynn")).string();
  io::save_model(model, path);
  row.size_bytes = fs::file_size(path);
  PredictOptions po;
  po.threads = o.common.threads;
  t0 = std::chrono::steady_clock::now();
  ProgressBar bar("predicting " + setting, !o.common.quiet);
  po.progress = bar.callback();
  const auto pred = model.predict(test, po);
  row.predict_seconds = seconds_since(t0);
  row.accuracy = accuracy_of(pred, test.labels);
  row.setting += " (" + config.describe() + ")";
  return row;
}

void run_demo(const DemoOptions& o) {
  const Dataset train = experiments::load_fashion_mnist(o.data_dir, false);
  Dataset test = experiments::load_fashion_mnist(o.data_dir, true);
  test.relabel(train.classes);
  fs::create_directories(o.out_dir);
  const auto d = static_cast<std::uint32_t>(train.n_features);

  std::vector<Row> rows;
  rows.push_back(run_flynn("default", HyperParams{}.resolve(d, train.classes.size()), train, test, o));
  HyperParams paper;  // Fashion-MNIST row of the paper's Table 5
  paper.expansion_factor = 138;
  paper.connection_sparsity = 0.105;
  paper.wta_nnz = 8;
  paper.gamma = 0.8;
  paper.variant = Variant{};  // the paper's method, whatever the defaults
  rows.push_back(run_flynn("paper", paper.resolve(d, train.classes.size()), train, test, o));

  if (!o.skip_knn) {
    Row knn{"kNN (FAISS exact)", fmt::format("k={}, L2-normalised rows", o.knn_k)};
    auto t0 = std::chrono::steady_clock::now();
    experiments::ExactKnnIndex index(train, o.common.threads);
    knn.train_seconds = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const auto nb = index.search(test, o.knn_k);
    const auto pred = experiments::knn_vote(nb, o.knn_k, train.labels, train.classes.size());
    knn.predict_seconds = seconds_since(t0);
    knn.accuracy = accuracy_of(pred, test.labels);
    knn.size_bytes = train.n_rows * train.n_features * sizeof(float);  // the index holds the rows
    knn.setting += "; BLAS: " + experiments::blas_description();
    rows.push_back(knn);
  }

  if (o.common.json) {
    nlohmann::json j = {{"command", "demo"},
                        {"data_dir", o.data_dir},
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
                           train.n_rows, test.n_rows, train.n_features, o.data_dir)
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
                           o.out_dir);
}

void add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "The main job: Fashion-MNIST with flynn's defaults and the paper's setting, beside exact kNN");
  cmd->add_option("--data-dir", o->data_dir, "Folder with the Fashion-MNIST IDX files");
  cmd->add_option("--out-dir", o->out_dir, "Where the trained models are written");
  cmd->add_option("--knn-k", o->knn_k, "k of the kNN baseline (default 10)");
  cmd->add_flag("--skip-knn", o->skip_knn, "Do not run the kNN baseline");
  cmd->add_flag("--keep-blas-core", o->keep_blas_core,
                "Do not set OPENBLAS_CORETYPE / OMP_WAIT_POLICY for FAISS (see flynn bench)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_demo(*o); });
}

const RegisterCommand registered(5, add_demo_command);

}  // namespace

}  // namespace flynn::cli
