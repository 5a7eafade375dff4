#include "flynn/eval/model_file_edits.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/train_file.hpp"

namespace flynn::eval {

namespace {

using R = ModelEditRequest;

const OptionField<R> kModel = {"--model", "Model file to edit", &R::model, {}, true};
const OptionField<R> kOut = {"--out", "Where to write the edited model (default: --model itself)", &R::out};

io::ModelMemoryLimit memory(const ModelEditRun& how, ModelUse use) { return {how.model_memory_bytes, use}; }

io::FileEditOptions edit_options(const ModelEditRun& how) {
  io::FileEditOptions o;
  o.load = how.load;
  o.progress = how.progress;
  o.add_classes_hint = "give --labels with the model's labels first, then the new ones";
  return o;
}

// Writes `model` atomically to `out` (nothing is written when an earlier step threw) and
// completes `report` with the model's classes, rows per class and file size.
Report save_and_report(const FlyNN& model, const std::string& out, nlohmann::json report) {
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
  return {std::move(report), fmt::format("model: {} ({}), {} classes, {} training rows\n", out, human_bytes(bytes),
                                         model.labels().size(), model.counts().total_rows())};
}

}  // namespace

const OptionTable<ModelEditRequest>& update_fields() {
  static const OptionTable<R> fields = {
      kModel,
      {"--data", "Labelled rows to learn (CSV[.gz], ARFF, IDX[.gz], LIBSVM)", &R::data, {}, true},
      kOut,
      {"--labels", "Extended label list L1,L2,...: the model's labels in order, then new ones", &R::labels},
  };
  return fields;
}

const OptionTable<ModelEditRequest>& forget_fields() {
  static const OptionTable<R> fields = {
      kModel,
      {"--data", "The labelled rows to forget, as they were learned", &R::data, {}, true},
      kOut,
  };
  return fields;
}

const OptionTable<MergeRequest>& merge_fields() {
  using M = MergeRequest;
  static const OptionTable<M> fields = {
      {"models", "Model files A B ... (at least two)", &M::models, {}, true},
      {"--out", "Merged model file (written atomically)", &M::out, {}, true},
  };
  return fields;
}

Report update_model_file(const ModelEditRequest& o, const ModelEditRun& how) {
  FlyNN model = io::load_model(o.model, how.threads, how.max_input_bytes, memory(how, ModelUse::Train));
  const std::size_t classes_before = model.labels().size();
  if (!o.labels.empty()) model.add_classes(LabelSet::parse_list(o.labels));
  const std::uint64_t rows = io::learn_file(model, o.data, edit_options(how));
  return save_and_report(model, o.out.empty() ? o.model : o.out,
                         {{"command", "update"},
                          {"model", o.model},
                          {"data", o.data},
                          {"rows_added", rows},
                          {"classes_added", model.labels().size() - classes_before}});
}

Report forget_model_file(const ModelEditRequest& o, const ModelEditRun& how) {
  FlyNN model = io::load_model(o.model, how.threads, how.max_input_bytes, memory(how, ModelUse::Train));
  const std::uint64_t rows = io::forget_file(model, o.data, edit_options(how));
  return save_and_report(model, o.out.empty() ? o.model : o.out,
                         {{"command", "forget"}, {"model", o.model}, {"data", o.data}, {"rows_removed", rows}});
}

Report merge_model_files(const MergeRequest& o, const ModelEditRun& how) {
  if (o.models.size() < 2) throw Error(fmt::format("merge needs at least two models, got {}", o.models.size()));
  // Merging builds each model as loading for prediction does (its hasher), then adds counts.
  FlyNN merged = io::load_model(o.models[0], how.threads, how.max_input_bytes, memory(how, ModelUse::Predict));
  for (std::size_t i = 1; i < o.models.size(); ++i) {
    const FlyNN other = io::load_model(o.models[i], how.threads, how.max_input_bytes, memory(how, ModelUse::Predict));
    try {
      merged.merge(other);
    } catch (const Error& e) {
      throw Error(fmt::format("{} and {}: {}", o.models[0], o.models[i], e.what()));
    }
  }
  return save_and_report(merged, o.out, {{"command", "merge"}, {"models", o.models}});
}

}  // namespace flynn::eval
