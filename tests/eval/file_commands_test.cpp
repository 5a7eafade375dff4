// The file-level operations behind `flynn eval` and `flynn tune` (cross_validate_file,
// tune_file): they report what the in-memory routines compute, in both forms, and refuse
// --knn when no baseline is linked.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/eval/cross_validate_file.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/model_file_edits.hpp"
#include "flynn/eval/predict_and_write.hpp"
#include "flynn/eval/train_and_save.hpp"
#include "flynn/eval/tune_file.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

// Blobs written as a CSV with the class last (rows [first, last) of 90); returns the path.
std::string write_blobs(const test::TempDir& dir, std::size_t first = 0, std::size_t last = 90,
                        const std::string& name = "blobs.csv") {
  const Dataset data = test::blobs(3, 30, 5, 11);
  std::string text;
  for (std::size_t r = first; r < last; ++r) {
    for (std::size_t c = 0; c < data.n_features; ++c) text += fmt::format("{},", data.row(r)[c]);
    text += data.classes.name(data.labels[r]) + "\n";
  }
  const std::string path = dir.file(name);
  test::write_text(path, text);
  return path;
}

TEST(CrossValidateFile, ReportsTheFoldsOfCrossValidateFlynn) {
  test::TempDir dir;
  const std::string path = write_blobs(dir);
  eval::CrossValidateFileRequest request;
  request.data = path;
  request.folds = 3;
  eval::CrossValidateFileRun how;
  how.hyper.m = 128;
  how.hyper.seed = 3;
  const eval::Report r = eval::cross_validate_file(request, how);

  const Dataset data = io::load_dataset(path, how.load);
  const FlyConfig config = how.hyper.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
  const auto folds = eval::stratified_folds(data.labels, data.classes.size(), 3, 0);
  const eval::CvResult cv = eval::cross_validate_flynn(data, config, folds, 3, 0);
  EXPECT_EQ(r.json["command"], "eval");
  EXPECT_EQ(r.json["rows"], 90u);
  EXPECT_EQ(r.json["fold_accuracy"].get<std::vector<double>>(), cv.fold_accuracy);
  EXPECT_NE(r.text.find(fmt::format("3-fold CV accuracy: {:.4f}", cv.mean)), std::string::npos) << r.text;
  EXPECT_FALSE(r.json.contains("calibration"));

  request.calibration = true;
  const eval::Report c = eval::cross_validate_file(request, how);
  EXPECT_TRUE(c.json.contains("calibration"));
  EXPECT_NE(c.text.find("calibration fitted on out-of-fold scores"), std::string::npos);
}

TEST(CrossValidateFile, AComparisonJoinsTheReportAndKnnWithoutOneIsAnError) {
  test::TempDir dir;
  eval::CrossValidateFileRequest request;
  request.data = write_blobs(dir);
  request.folds = 3;
  request.knn = true;
  eval::CrossValidateFileRun how;
  try {
    eval::cross_validate_file(request, how);
    FAIL() << "--knn without a baseline ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FAISS"), std::string::npos) << e.what();
  }
  std::uint32_t seen_folds = 0;
  how.knn = [&](const Dataset& d, const std::vector<std::uint32_t>& f, std::uint32_t k, int) {
    EXPECT_EQ(f.size(), d.n_rows);
    seen_folds = k;
    return eval::Report{{{"baseline", 1}}, "baseline line\n"};
  };
  const eval::Report r = eval::cross_validate_file(request, how);
  EXPECT_EQ(seen_folds, 3u);
  EXPECT_EQ(r.json["baseline"], 1);
  EXPECT_NE(r.text.find("baseline line\n"), std::string::npos);
}

TEST(TuneFile, SavesTheChosenModelAndJudgesTheTestFile) {
  test::TempDir dir;
  eval::TuneFileRequest request;
  request.data = write_blobs(dir);
  request.test = request.data;
  request.model = dir.file("tuned.flynn");
  request.folds = 3;
  request.budget = 2;
  request.variants = "paper";
  eval::TuneFileRun how;
  int phases = 0;
  how.progress = [&](std::string_view phase) -> ProgressFn {
    if (!phase.empty()) ++phases;
    return {};
  };
  const eval::Report r = eval::tune_file(request, how);
  EXPECT_EQ(phases, 2);
  const FlyNN model = io::load_model(request.model);
  EXPECT_EQ(r.json["model_bytes"], std::filesystem::file_size(request.model));
  EXPECT_EQ(r.json["config"]["m"], model.config().m);
  EXPECT_DOUBLE_EQ(r.json["temperature"].get<double>(), model.temperature());
  EXPECT_EQ(r.json["test"]["rows"], 90u);
  EXPECT_NE(r.text.find("test: 90 rows"), std::string::npos) << r.text;

  // A missing test file fails before the search, and leaves no model behind.
  std::filesystem::remove(request.model);
  request.test = dir.file("absent.csv");
  EXPECT_THROW(eval::tune_file(request, how), Error);
  EXPECT_FALSE(std::filesystem::exists(request.model));
}

std::string file_bytes(const std::string& path) { return io::read_model_file(path); }

// The model file at `path` with the calibration of the one at `like`: edits change the
// counts exactly and keep the edited model's calibration (fit() fits one on the rows it
// sees; an edit does not see them all).
std::string bytes_with_calibration_of(const std::string& path, const std::string& like) {
  FlyNN model = io::deserialize_model(file_bytes(path), path, 1);
  model.set_calibration(io::deserialize_model(file_bytes(like), like, 1).calibration());
  return io::serialize_model(model);
}

TEST(ModelFileEdits, UpdateForgetAndMergeAreExact) {
  test::TempDir dir;
  const std::string all = write_blobs(dir), first = write_blobs(dir, 0, 50, "a.csv"),
                    rest = write_blobs(dir, 50, 90, "b.csv");
  io::FileTrainingOptions training;
  training.hyper.m = 128;
  training.hyper.seed = 5;
  training.hyper.variant = Variant{};  // no statistics of the rows: edits are exact byte for byte
  training.labels = LabelSet::parse_list("c0,c1,c2");
  const auto train = [&](const std::string& data, const std::string& model) {
    eval::TrainFileRequest t;
    t.data = data;
    t.model = dir.file(model);
    eval::train_and_save(t, training);
    return t.model;
  };
  const std::string whole = train(all, "all.flynn"), a = train(first, "a.flynn"), b = train(rest, "b.flynn");

  const eval::ModelEditRun run;  // named: GCC 12 misreads a {} temporary here
  eval::ModelEditRequest edit;
  edit.model = a;
  edit.data = rest;
  edit.out = dir.file("a+b.flynn");
  const eval::Report up = eval::update_model_file(edit, run);
  EXPECT_EQ(up.json["rows_added"], 40u);
  EXPECT_EQ(file_bytes(edit.out), bytes_with_calibration_of(whole, a));

  edit.model = edit.out;
  edit.out = dir.file("a+b-b.flynn");
  eval::forget_model_file(edit, run);
  EXPECT_EQ(file_bytes(edit.out), file_bytes(a));

  eval::MergeRequest merge{{a, b}, dir.file("merged.flynn")};
  const eval::Report m = eval::merge_model_files(merge, run);
  EXPECT_EQ(m.json["training_rows"], 90u);
  EXPECT_EQ(file_bytes(merge.out), bytes_with_calibration_of(whole, a));
  EXPECT_THROW(eval::merge_model_files({{a}, dir.file("one.flynn")}, run), Error);
}

TEST(PredictAndWrite, StreamsTheCsvOrKeepsThePredictions) {
  test::TempDir dir;
  const std::string data = write_blobs(dir);
  eval::TrainFileRequest t;
  t.data = data;
  t.model = dir.file("m.flynn");
  const io::FileTrainingOptions defaults;  // named: GCC 12 misreads a {} temporary here
  eval::train_and_save(t, defaults);

  eval::PredictFileRequest p;
  p.model = t.model;
  p.data = data;
  p.chunk_rows = 7;
  std::ostringstream csv;
  eval::PredictFileRun how;
  how.csv = &csv;
  const eval::Report streamed = eval::predict_and_write(p, how);
  EXPECT_EQ(streamed.json["rows"], 90u);
  EXPECT_FALSE(streamed.json.contains("predictions"));
  const std::string lines = csv.str();
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 91);  // header + one per row

  how.csv = nullptr;
  const eval::Report kept = eval::predict_and_write(p, how);
  ASSERT_EQ(kept.json["predictions"].size(), 90u);
  EXPECT_EQ(kept.json["accuracy"], streamed.json["accuracy"]);
  p.tie_break = "sideways";
  EXPECT_THROW(eval::predict_and_write(p, how), Error);
}

}  // namespace
}  // namespace flynn
