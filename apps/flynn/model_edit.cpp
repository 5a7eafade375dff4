#include "model_edit.hpp"

#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "flynn/io/model_file.hpp"

namespace flynn::cli {

io::FileEditOptions edit_options(const DataOptions& format, const ProgressBar& bar) {
  io::FileEditOptions o;
  o.load = format.load_options();
  o.progress = bar.callback();
  o.add_classes_hint = "give --labels with the model's labels first, then the new ones";
  return o;
}

void save_and_report(const FlyNN& model, const std::string& out, nlohmann::json report,
                     const CommonOptions& common) {
  io::save_model(model, out);
  const auto bytes = std::filesystem::file_size(out);
  nlohmann::json per_class = nlohmann::json::object();
  for (std::size_t l = 0; l < model.labels().size(); ++l)
    per_class[model.labels().name(l)] = model.counts().rows_per_class()[l];
  report["out"] = out;
  report["model_bytes"] = bytes;
  report["classes"] = model.labels().names();
  report["rows_per_class"] = per_class;
  report["training_rows"] = model.counts().total_rows();
  if (common.json) {
    print_json(report);
    return;
  }
  std::cout << fmt::format("model: {} ({}), {} classes, {} training rows\n", out,
                           human_bytes(bytes), model.labels().size(), model.counts().total_rows());
}

}  // namespace flynn::cli
