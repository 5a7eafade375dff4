// io::train_from_file (the trainer behind `flynn train` and Python's flynn.fit_file):
// streamed in chunks, it gives the model of fit() on the whole loaded file, byte for byte.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/train_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::TempDir;
using test::write_text;

// fit() on the whole file as load_dataset reads it, with its table schema: the reference.
std::string whole_file_model(const std::string& path, const io::LoadOptions& load,
                             const HyperParams& hyper = {}) {
  const Dataset data = io::load_dataset(path, load);
  FlyNN model(hyper.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size()),
              data.classes);
  model.fit(data);
  model.set_table_schema(data.schema);
  return io::serialize_model(model);
}

// A table of 3 classes with missing cells ("", "NA") in numeric columns and a name header.
std::string messy_csv() {
  std::string csv = "x1,x2,x3,x4,label\n";
  for (int r = 0; r < 90; ++r) {
    const int c = r % 3;
    csv += fmt::format("{},{},{},{},k{}\n", r % 7 == 0 ? "" : fmt::format("{:.2f}", 0.1 * r + c),
                       c * 2 + r % 4, r % 11 == 0 ? "NA" : fmt::format("{}", (r * 37) % 13 - 6),
                       1.5 * c - 0.01 * r, c);
  }
  return csv;
}

TEST(TrainFromFile, ChunksOfAnySizeGiveTheWholeFileModel) {
  TempDir dir;
  const std::string csv = dir.file("messy.csv");
  write_text(csv, messy_csv());
  io::FileTrainingOptions o;
  const std::string expected = whole_file_model(csv, o.load);
  for (std::size_t chunk : {1u, 7u, 65536u}) {
    o.chunk_rows = chunk;
    const io::FileTrainingResult t = io::train_from_file(csv, o);
    EXPECT_EQ(io::serialize_model(t.model), expected) << "chunk_rows " << chunk;
    EXPECT_EQ(t.rows, 90u);
    EXPECT_EQ(t.n_features, 4u);
    EXPECT_FALSE(t.model.table_schema().fill.empty());  // the fill means are kept
  }
}

TEST(TrainFromFile, LibsvmOfChunksOfDifferentWidthsGivesTheWholeFileModel) {
  TempDir dir;
  const std::string svm = dir.file("rows.libsvm");
  std::string text;
  // Early rows use low indices only, so a chunk's own width is below the file's.
  for (int r = 0; r < 40; ++r)
    text += fmt::format("{} 1:{} {}:{}\n", r % 2, 0.5 + r, r < 20 ? 2 : 9, r % 5 + 1);
  write_text(svm, text);
  io::FileTrainingOptions o;
  o.chunk_rows = 6;
  o.hyper.seed = 7;
  const io::FileTrainingResult t = io::train_from_file(svm, o);
  EXPECT_EQ(t.n_features, 9u);
  EXPECT_EQ(io::serialize_model(t.model), whole_file_model(svm, o.load, o.hyper));
}

TEST(TrainFromFile, ReportsEachPhaseAsItBeginsAndEnds) {
  TempDir dir;
  const std::string csv = dir.file("messy.csv");
  write_text(csv, messy_csv());
  io::FileTrainingOptions o;
  std::vector<std::string> phases;
  o.progress = [&](std::string_view phase) -> ProgressFn {
    phases.emplace_back(phase);
    return {};
  };
  io::train_from_file(csv, o);
  EXPECT_EQ(phases, (std::vector<std::string>{"reading", "", "training", ""}));
}

TEST(TrainFromFile, AProgressCallbackReturningFalseCancels) {
  TempDir dir;
  const std::string csv = dir.file("messy.csv");
  write_text(csv, messy_csv());
  io::FileTrainingOptions o;
  o.chunk_rows = 10;
  int calls = 0;
  o.progress = [&](std::string_view phase) -> ProgressFn {
    if (phase != "training") return {};
    return [&](std::size_t, std::size_t) { return ++calls < 3; };  // stop at the third chunk
  };
  EXPECT_THROW(io::train_from_file(csv, o), Cancelled);
  EXPECT_EQ(calls, 3);
}

TEST(TrainFromFile, FixedLabelsMustNameEveryClass) {
  TempDir dir;
  const std::string csv = dir.file("messy.csv");
  write_text(csv, messy_csv());
  io::FileTrainingOptions o;
  o.labels = LabelSet::parse_list("k0,k1");
  try {
    io::train_from_file(csv, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("messy.csv:4: label 'k2'"), std::string::npos) << e.what();
  }
  o.labels = LabelSet::parse_list("k2,k1,k0");  // a superset in another order fixes the ids
  EXPECT_EQ(io::train_from_file(csv, o).model.labels().names(),
            (std::vector<std::string>{"k2", "k1", "k0"}));
}

TEST(LoadFlags, MeanWhatTheCliFlagsMean) {
  io::LoadFlags f;
  f.header = "yes";
  f.delimiter = "tab";
  f.id_col = "2";
  f.missing = "zero";
  const io::LoadOptions o = io::load_options(f);
  EXPECT_EQ(o.header, io::LoadOptions::Header::Yes);
  EXPECT_EQ(o.delimiter, '\t');
  EXPECT_EQ(o.missing, MissingPolicy::Zero);
  f.header = "maybe";
  EXPECT_THROW(
      {
        try {
          io::load_options(f);
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "--header: 'maybe' is not one of auto, yes, no");
          throw;
        }
      },
      Error);
  f.header = "auto";
  f.delimiter = "::";
  EXPECT_THROW(io::load_options(f), Error);
}

}  // namespace
}  // namespace flynn
