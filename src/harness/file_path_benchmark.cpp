#include "flynn/harness/file_path_benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/data_view.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/train_file.hpp"
#include "flynn/harness/speed_benchmark.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

// The file's rows as a caller holds them in memory: pixels as bytes, class ids.
struct InMemoryRows {
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint32_t> class_ids;
  std::size_t rows = 0, features = 0;
  LabelSet classes;
};

InMemoryRows load_in_memory(const std::string& images_path) {
  io::LoadOptions load;
  load.format = io::Format::Idx;
  const Dataset data = io::load_dataset(images_path, load);
  if (!data.has_labels) throw Error(images_path + ": no labels file beside the images");
  InMemoryRows m;
  m.rows = data.n_rows;
  m.features = data.n_features;
  m.classes = data.classes;
  m.class_ids = data.labels;
  m.pixels.resize(data.features.size());
  for (std::size_t k = 0; k < data.features.size(); ++k) {
    const float v = data.features[k];
    if (!(v >= 0.0f && v <= 255.0f) || v != std::floor(v))
      throw Error(images_path + ": the in-process comparison needs pixels 0..255");
    m.pixels[k] = static_cast<std::uint8_t>(v);
  }
  return m;
}

const char* plural(int threads) { return threads == 1 ? "" : "s"; }

}  // namespace

FilePathBenchmarkReport run_file_path_benchmark(const std::string& images_path, const FilePathBenchmarkOptions& o) {
  FilePathBenchmarkReport rep;
  rep.images_path = images_path;
  const InMemoryRows mem = load_in_memory(images_path);
  rep.rows = mem.rows;
  rep.features = mem.features;
  const DataView view(mem.pixels.data(), mem.rows, mem.features);
  const int threads_all = flynn::detail::resolve_threads(o.threads);
  const std::pair<const char*, HyperParams> settings[] = {{"paper", fashion_mnist_paper_params()},
                                                          {"defaults", HyperParams{}}};
  for (const auto& [name, params] : settings) {
    for (const int threads : {1, threads_all}) {
      FilePathResult r;
      r.setting = name;
      r.threads = threads;
      r.config = params.resolve(static_cast<std::uint32_t>(mem.features), mem.classes.size());
      std::vector<double> load, train, fit, file_cpu, fit_cpu;
      std::string file_bytes, fit_bytes;
      for (std::uint32_t i = 0; i < std::max<std::uint32_t>(o.repeats, 1); ++i) {
        if (o.log) o.log(fmt::format("{}: training from the file on {} thread{}", name, threads, plural(threads)));
        io::FileTrainingOptions training;
        training.load.format = io::Format::Idx;
        training.hyper = params;
        training.threads = threads;
        std::optional<io::FileTrainingResult> t;
        file_cpu.push_back(time_call([&] { t.emplace(io::train_from_file(images_path, training)); }).cpu);
        load.push_back(t->load_seconds);
        train.push_back(t->train_seconds);
        r.file_row_elements = t->row_elements;
        r.file_row_path = t->row_path;
        if (i == 0) file_bytes = io::serialize_model(t->model);

        if (o.log) o.log(fmt::format("{}: training in process on {} thread{}", name, threads, plural(threads)));
        // As the Python estimator's fit: the model (its lifting matrix) is made, then fitted.
        std::optional<FlyNN> model;
        const CallSeconds in_process = time_call([&] {
          model.emplace(r.config, mem.classes, threads);
          model->fit(view, mem.class_ids);
        });
        fit.push_back(in_process.wall);
        fit_cpu.push_back(in_process.cpu);
        if (i == 0) {
          model->set_missing_policy(training.load.missing);  // recorded by training from a file
          fit_bytes = io::serialize_model(*model);
          r.in_process_row_path = model->hasher().row_path(view);
        }
      }
      r.file_load = summarize_timing(load);
      r.file_train = summarize_timing(train);
      r.in_process = summarize_timing(fit);
      r.file_cpu = summarize_timing(file_cpu);
      r.in_process_cpu = summarize_timing(fit_cpu);
      r.identical = file_bytes == fit_bytes;
      rep.results.push_back(r);
    }
  }
  return rep;
}

std::string write_idx_pair(const Dataset& data, std::size_t rows, const std::string& dir) {
  rows = std::min(rows, data.n_rows);
  std::filesystem::create_directories(dir);
  auto be32 = [](std::string& s, std::uint32_t v) {
    for (int k = 3; k >= 0; --k) s += static_cast<char>((v >> (8 * k)) & 0xFF);
  };
  std::string images("\0\0\x08\x02", 4), labels("\0\0\x08\x01", 4);
  be32(images, static_cast<std::uint32_t>(rows));
  be32(images, static_cast<std::uint32_t>(data.n_features));
  be32(labels, static_cast<std::uint32_t>(rows));
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < data.n_features; ++j)
      images += static_cast<char>(static_cast<std::uint8_t>(std::clamp(data.row(r)[j], 0.0f, 255.0f)));
    labels += static_cast<char>(std::stoi(data.classes.name(data.labels[r])) & 0xFF);
  }
  const std::string images_path = (std::filesystem::path(dir) / "smoke-images-idx3-ubyte").string();
  const std::string labels_path = (std::filesystem::path(dir) / "smoke-labels-idx1-ubyte").string();
  std::ofstream(images_path, std::ios::binary) << images;
  std::ofstream(labels_path, std::ios::binary) << labels;
  return images_path;
}

nlohmann::json to_json(const FilePathBenchmarkReport& rep) {
  auto timing = [](const Timing& t) {
    return nlohmann::json{{"median", t.median}, {"min", t.min}, {"max", t.max}, {"runs", t.runs}};
  };
  nlohmann::json results = nlohmann::json::array();
  for (const FilePathResult& r : rep.results)
    results.push_back({{"setting", r.setting},
                       {"config", r.config.describe()},
                       {"threads", r.threads},
                       {"file_load_seconds", timing(r.file_load)},
                       {"file_train_seconds", timing(r.file_train)},
                       {"in_process_train_seconds", timing(r.in_process)},
                       {"train_ratio_min", r.file_train.min / r.in_process.min},
                       {"file_cpu_seconds", timing(r.file_cpu)},
                       {"in_process_cpu_seconds", timing(r.in_process_cpu)},
                       {"cpu_ratio_min", r.file_cpu.min / r.in_process_cpu.min},
                       {"file_row_elements", r.file_row_elements},
                       {"file_row_path", r.file_row_path},
                       {"in_process_row_path", r.in_process_row_path},
                       {"identical_models", r.identical}});
  return {{"images", rep.images_path}, {"rows", rep.rows}, {"features", rep.features}, {"results", results}};
}

std::string to_text(const FilePathBenchmarkReport& rep) {
  std::string t = fmt::format(
      "flynn train's path (the IDX file {}) vs in-process fit on the same {} × {} pixels as uint8; "
      "lowest of {} alternated runs\n\n",
      rep.images_path, rep.rows, rep.features, rep.results.empty() ? 0 : rep.results[0].in_process.runs.size());
  t += "| setting | threads | file: read | file: train | in process: train | train ratio | CPU: file (read + train) | CPU: in process | CPU ratio | file rows → kernel | in-process kernel | identical models |\n";
  t += "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const FilePathResult& r : rep.results)
    t += fmt::format("| {} | {} | {:.3f} s | {:.3f} s | {:.3f} s | {:.3f} | {:.3f} s | {:.3f} s | {:.3f} | {} → {} | {} | {} |\n",
                     r.setting, r.threads, r.file_load.min, r.file_train.min, r.in_process.min,
                     r.file_train.min / r.in_process.min, r.file_cpu.min, r.in_process_cpu.min,
                     r.file_cpu.min / r.in_process_cpu.min, r.file_row_elements, r.file_row_path,
                     r.in_process_row_path, r.identical ? "yes" : "NO");
  return t;
}

}  // namespace flynn::harness
