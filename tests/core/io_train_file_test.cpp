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
#include "flynn/io/predict_file.hpp"
#include "flynn/metrics.hpp"
#include "flynn/io/train_file.hpp"
#include "io_test_helpers.hpp"
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
  model.set_missing_policy(load.missing);  // what training from a file records
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

// An MNIST-style IDX pair of 120 "pixel" rows (values 0..255, mostly small, some zeros)
// of 3 × 4 and labels 3, 5, 8 under `dir`; returns the images file's path and fills the
// pixels and labels as an in-process caller would hold them.
std::string write_pixel_idx(const TempDir& dir, std::vector<std::uint8_t>& pixels,
                            std::vector<std::string>& labels) {
  const std::uint32_t n = 120, d = 12;
  pixels.clear();
  labels.clear();
  std::string lbl;
  for (std::uint32_t r = 0; r < n; ++r) {
    const int c = static_cast<int>(r % 3);
    for (std::uint32_t j = 0; j < d; ++j)
      pixels.push_back(static_cast<std::uint8_t>((r * 31 + j * 17 + c * 90) % 7 == 0 ? 0 : (r * 13 + j * (c + 3) * 29) % 256));
    lbl += static_cast<char>(c == 0 ? 3 : c == 1 ? 5 : 8);
    labels.push_back(c == 0 ? "3" : c == 1 ? "5" : "8");
  }
  const std::string images = dir.file("px-images-idx3-ubyte");
  write_text(images, test::idx_u8({n, 3, 4}, pixels));
  write_text(dir.file("px-labels-idx1-ubyte"), test::idx_header(0x08, {n}) + lbl);
  return images;
}

// IDX, binary, is held whole: `flynn train` fits its rows where they lie, uint8 pixels as
// bytes, exactly as in-process training on a uint8 array does: the same kernel, the same
// model bytes (for the paper's method and for the standardising default).
TEST(TrainFromFile, IdxPixelsTakeTheInProcessUint8PathAndGiveItsModel) {
  TempDir dir;
  std::vector<std::uint8_t> pixels;
  std::vector<std::string> names;
  const std::string images = write_pixel_idx(dir, pixels, names);
  const LabelSet classes = LabelSet::parse_list("3,5,8");
  std::vector<std::uint32_t> ids;
  for (const std::string& n : names) ids.push_back(static_cast<std::uint32_t>(classes.find(n)));
  const DataView view(pixels.data(), names.size(), 12);
  HyperParams paper;
  paper.variant = Variant{};
  paper.m = 600;
  paper.rho = 8;
  for (const HyperParams& hyper : {paper, HyperParams{}}) {
    io::FileTrainingOptions o;
    o.hyper = hyper;
    o.chunk_rows = 7;  // chunks do not apply: the file is fitted at once
    const io::FileTrainingResult t = io::train_from_file(images, o);
    FlyNN in_process(hyper.resolve(12, 3), classes);
    in_process.fit(view, ids);
    in_process.set_missing_policy(o.load.missing);
    EXPECT_EQ(io::serialize_model(t.model), io::serialize_model(in_process));
    EXPECT_EQ(io::serialize_model(t.model), whole_file_model(images, o.load, hyper));
    EXPECT_EQ(t.rows, 120u);
    EXPECT_EQ(t.n_features, 12u);
    EXPECT_EQ(t.row_elements, "uint8");
    const std::vector<float> first(pixels.begin(), pixels.begin() + 12);
    EXPECT_EQ(t.row_path, in_process.hasher().row_path(first.data()));
  }
  const io::FileTrainingResult t = io::train_from_file(images, [&] {
    io::FileTrainingOptions o;
    o.hyper = paper;
    return o;
  }());
  EXPECT_EQ(t.row_path, "uint8");  // the paper's method hashes the raw pixels
}

TEST(TrainFromFile, IdxKeepsTheStreamingChecksAndMessages) {
  TempDir dir;
  std::vector<std::uint8_t> pixels;
  std::vector<std::string> names;
  const std::string images = write_pixel_idx(dir, pixels, names);
  io::FileTrainingOptions o;
  o.labels = LabelSet::parse_list("3,5");
  EXPECT_TRUE(test::contains(test::error_of([&] { io::train_from_file(images, o); }),
                             {"px-images-idx3-ubyte:3: label '8'"}));
  o.labels = LabelSet::parse_list("8,5,3,1");  // a superset in another order fixes the ids
  EXPECT_EQ(io::train_from_file(images, o).model.labels().names(),
            (std::vector<std::string>{"8", "5", "3", "1"}));
  // One class only.
  const io::FileTrainingOptions plain;
  write_text(dir.file("one-images-idx3-ubyte"), test::idx_u8({2, 2}, {1, 2, 3, 4}));
  write_text(dir.file("one-labels-idx1-ubyte"), test::idx_u8({2}, {4, 4}));
  EXPECT_TRUE(test::contains(test::error_of([&] { io::train_from_file(dir.file("one-images-idx3-ubyte"), plain); }),
                             {"one-images-idx3-ubyte", "all 2 rows have the class"}));
  // No labels file: refused as before, naming the file.
  write_text(dir.file("lone.idx"), test::idx_u8({2, 2}, {1, 2, 3, 4}));
  EXPECT_NE(test::error_of([&] { io::train_from_file(dir.file("lone.idx"), plain); }), "<no error>");
}

// Parsed text reaches the kernels as floats, but integer pixel values take the same uint8
// kernel as in-process bytes do, and give the same model.
TEST(TrainFromFile, IntegerCsvTakesTheUint8KernelAndGivesTheInProcessModel) {
  TempDir dir;
  std::vector<std::uint8_t> pixels;
  std::vector<std::string> names;
  write_pixel_idx(dir, pixels, names);
  std::string csv;
  for (std::size_t r = 0; r < names.size(); ++r) {
    for (std::size_t j = 0; j < 12; ++j) csv += fmt::format("{},", pixels[r * 12 + j]);
    csv += names[r] + "\n";
  }
  write_text(dir.file("px.csv"), csv);
  HyperParams paper;
  paper.variant = Variant{};
  paper.m = 600;
  paper.rho = 8;
  io::FileTrainingOptions o;
  o.hyper = paper;
  o.chunk_rows = 7;
  const io::FileTrainingResult t = io::train_from_file(dir.file("px.csv"), o);
  EXPECT_EQ(t.row_elements, "float32");
  EXPECT_EQ(t.row_path, "uint8");
  const LabelSet classes = LabelSet::parse_list("3,5,8");
  std::vector<std::uint32_t> ids;
  for (const std::string& n : names) ids.push_back(static_cast<std::uint32_t>(classes.find(n)));
  FlyNN in_process(paper.resolve(12, 3), classes);
  in_process.fit(DataView(pixels.data(), names.size(), 12), ids);
  in_process.set_table_schema(t.model.table_schema());  // the CSV's columns
  in_process.set_missing_policy(o.load.missing);
  EXPECT_EQ(io::serialize_model(t.model), io::serialize_model(in_process));
}

// learn_file and forget_file (flynn update / forget): chunk by chunk, the model of the
// whole file: train on A then learn B equals training on A ∪ B, forgetting B gives A back.
TEST(EditFromFile, LearnAndForgetInChunksEqualTheWholeFile) {
  TempDir dir;
  // The paper's variant: standardisation statistics are fixed by the first training (A's),
  // so they would differ from those of A ∪ B.
  const std::string header = "x1,x2,x3,label\n";
  std::string first, second;
  for (int r = 0; r < 90; ++r)
    (r < 45 ? first : second) += fmt::format("{:.2f},{},{},k{}\n", 0.1 * r + r % 3,
                                             r % 3 * 2 + r % 4, (r * 37) % 13, r % 3);
  const std::string a = dir.file("a.csv"), b = dir.file("b.csv"), ab = dir.file("ab.csv");
  write_text(a, header + first);
  write_text(b, header + second);
  write_text(ab, header + first + second);
  io::FileTrainingOptions train;
  train.labels = LabelSet({"k0", "k1", "k2"});
  train.hyper.variant = Variant{};
  const FlyNN whole = io::train_from_file(ab, train).model;
  for (std::size_t chunk : {1u, 5u, 65536u}) {
    FlyNN model = io::train_from_file(a, train).model;
    const std::string just_a = io::serialize_model(model);
    io::FileEditOptions edit;
    edit.chunk_rows = chunk;
    EXPECT_EQ(io::learn_file(model, b, edit), 45u);
    // The counts of A ∪ B; the table's fill means stay A's (update never recomputes them).
    EXPECT_EQ(model.counts(), whole.counts()) << "chunk_rows " << chunk;
    EXPECT_EQ(io::forget_file(model, b, edit), 45u);
    EXPECT_EQ(io::serialize_model(model), just_a) << "chunk_rows " << chunk;
    // Rows it never held: refused at once, the model unchanged.
    EXPECT_THROW(io::forget_file(model, b, edit), Error);
    EXPECT_EQ(io::serialize_model(model), just_a);
  }
}

TEST(EditFromFile, RefusesLabelsTheModelLacksAndDataWithoutLabels) {
  TempDir dir;
  const std::string csv = dir.file("messy.csv");
  write_text(csv, messy_csv());
  const io::FileTrainingOptions defaults;  // a named object: GCC 12 misreads a temporary's
                                           // strings as maybe-uninitialized
  FlyNN model = io::train_from_file(csv, defaults).model;
  const std::string other = dir.file("other.csv");
  write_text(other, "x1,x2,x3,x4,label\n1,2,3,4,k9\n");
  io::FileEditOptions edit;
  edit.add_classes_hint = "say so";
  try {
    io::learn_file(model, other, edit);
    FAIL() << "an unknown label was learned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("label 'k9' is not one of the model's classes "
                                         "(k0,k1,k2); to add classes say so"),
              std::string::npos)
        << e.what();
  }
  edit.load.label_column = io::LabelColumn::parse("none");
  EXPECT_THROW(io::learn_file(model, csv, edit), Error);
}

// io::predict_file (flynn predict, train --test, tune --test): chunk by chunk, the
// predictions and probabilities of one call on the whole file, the random tie rule keyed by
// the row's index in the file; labels the model lacks count as errors.
TEST(PredictFile, ChunksGiveTheWholeFilePredictionsAndCount) {
  TempDir dir;
  const std::string csv = dir.file("messy.csv");
  write_text(csv, messy_csv());
  const io::FileTrainingOptions defaults;  // named: see above
  const FlyNN model = io::train_from_file(csv, defaults).model;
  const io::LoadOptions load = io::model_load_options(io::LoadOptions{}, model);
  const Dataset data = io::load_dataset(csv, load);
  PredictOptions po;
  po.tie_break = TieBreak::Random;
  po.tie_seed = 3;
  const std::vector<std::uint32_t> expected = model.predict(data, po);
  const std::vector<double> expected_proba = model.predict_proba(data, po);
  for (std::size_t chunk : {1u, 8u, 65536u}) {
    io::ChunkLimits limits;
    limits.max_rows = chunk;
    io::RowStream rows(csv, load, limits);
    io::FilePredictionOptions fo;
    fo.predict = po;
    fo.proba = true;
    std::vector<std::uint32_t> got;
    std::vector<double> proba;
    const io::FilePrediction p = io::predict_file(rows, model, fo, [&](const io::PredictedChunk& c) {
      EXPECT_EQ(c.first_row, got.size());
      got.insert(got.end(), c.classes.begin(), c.classes.end());
      proba.insert(proba.end(), c.proba.begin(), c.proba.end());
    });
    EXPECT_EQ(got, expected) << "chunk_rows " << chunk;
    EXPECT_EQ(proba, expected_proba);
    EXPECT_EQ(p.rows, 90u);
    EXPECT_TRUE(p.labelled);
    EXPECT_EQ(p.correct, count_correct(io::truth_ids(data, model.labels()), expected));
    EXPECT_EQ(p.unknown, 0u);
  }
  // A label the model lacks is an error, counted.
  const std::string other = dir.file("other.csv");
  write_text(other, "x1,x2,x3,x4,label\n1,2,3,4,k9\n1,2,3,4,k1\n");
  io::RowStream rows(other, load);
  const io::FilePrediction p = io::predict_file(rows, model, io::FilePredictionOptions{});
  EXPECT_EQ(p.rows, 2u);
  EXPECT_EQ(p.unknown, 1u);
  EXPECT_LE(p.correct, 1u);
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
