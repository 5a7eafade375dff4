// `flynn train` and `flynn predict` read their data in chunks (io::RowStream): the model
// and the predictions must equal whole-file ones, whatever the chunk size.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "cli_support.hpp"
#include "flynn/classifier.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::read_text;
using test::run_cli;
using test::run_shell;
using test::TempDir;
using test::write_text;

// 3 classes × 70 rows in 6 dimensions, labels spelled several ways, as CSV (header),
// gzip CSV, LIBSVM (sparse: zeros left out, so chunks differ in width) and ARFF.
class CliStreaming : public ::testing::Test {
 protected:
  void SetUp() override {
    const Dataset d = test::blobs(3, 70, 6, 5);
    std::string csv = "a,b,c,d,e,f,class\n", svm, arff = "@relation r\n";
    for (char c = 'a'; c <= 'f'; ++c) arff += std::string("@attribute ") + c + " numeric\n";
    arff += "@attribute class {c0,c1,c2}\n@data\n";
    for (std::size_t r = 0; r < d.n_rows; ++r) {
      const std::string& label = d.classes.name(d.labels[r]);
      svm += std::to_string(d.labels[r]);
      for (std::size_t j = 0; j < d.n_features; ++j) {
        // Round to a few digits; some values become exact zeros (sparse LIBSVM entries).
        const float v = r % 5 == j ? 0.0f : d.row(r)[j];
        const std::string text = fmt::format("{:.3g}", v);
        csv += text + ",";
        arff += text + ",";
        if (v != 0.0f) svm += fmt::format(" {}:{}", j + 1, text);
      }
      csv += label + "\n";
      arff += label + "\n";
      svm += r % 17 == 0 ? "  # comment\n\n" : "\n";
    }
    write_text(csv_ = dir_.file("train.csv"), csv);
    write_text(gz_ = dir_.file("train.csv.gz"), test::gzip_bytes(csv));
    write_text(svm_ = dir_.file("train.libsvm"), svm);
    write_text(arff_ = dir_.file("train.arff"), arff);
  }

  // The model trained from `data` streamed in chunks of `chunk` rows.
  std::string streamed_model(const std::string& data, const std::string& flags, int chunk) {
    const std::string model = dir_.file(fmt::format("s{}.flynn", ++n_));
    const auto r = run_cli(fmt::format("train --data {} --model {} --quiet --chunk-rows {} {}", data,
                                       model, chunk, flags));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_text(model);
  }
  // The model trained from `data` through a pipe, which is loaded whole (fit()).
  std::string whole_file_model(const std::string& data, const std::string& flags) {
    const std::string model = dir_.file(fmt::format("w{}.flynn", ++n_));
    const auto r = run_shell(fmt::format("cat {} | {} train --data /dev/stdin --model {} --quiet {}",
                                         data, FLYNN_CLI_PATH, model, flags));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return read_text(model);
  }

  TempDir dir_;
  std::string csv_, gz_, svm_, arff_;
  int n_ = 0;
};

TEST_F(CliStreaming, TrainingInChunksWritesTheWholeFileModel) {
  for (const std::string variant : {"paper", "zsign-q", "thermo"}) {
    for (const std::string& data : {csv_, gz_, svm_, arff_}) {
      if (variant == "thermo" && data != svm_) continue;  // the LIBSVM three-pass case
      // LIBSVM names no format in a pipe: give it.
      const std::string flags = "--variant " + variant +
                                (data == svm_ ? " --format libsvm" : data == arff_ ? " --format arff" : "");
      const std::string whole = whole_file_model(data, flags);
      ASSERT_FALSE(whole.empty());
      for (int chunk : {1, 7})
        EXPECT_EQ(streamed_model(data, flags, chunk), whole) << data << " " << variant << " " << chunk;
    }
  }
  // A label list that fixes the class order (and adds a class no row has).
  const std::string flags = "--variant zsign-q --labels c2,c0,c1,zz";
  EXPECT_EQ(streamed_model(csv_, flags, 5), whole_file_model(csv_, flags));
}

TEST_F(CliStreaming, TrainingErrorsAreTheWholeFileOnes) {
  // A label outside --labels is refused naming its line, read once or in chunks.
  auto streamed = run_cli("train --data " + csv_ + " --model " + dir_.file("x.flynn") +
                          " --labels c0,c1 --chunk-rows 4");
  test::expect_clean_error(streamed, "train.csv:");
  EXPECT_NE(streamed.err.find("'c2'"), std::string::npos) << streamed.err;
  // One class only.
  write_text(dir_.file("one.csv"), "1,2,a\n3,4,a\n5,6,a\n");
  auto one = run_cli("train --data " + dir_.file("one.csv") + " --model " + dir_.file("y.flynn") +
                     " --chunk-rows 1");
  test::expect_clean_error(one, "all 3 rows have the class 'a'");
  // A bad row after several chunks: nothing is written.
  write_text(dir_.file("late.csv"), read_text(csv_) + "1,2,3,4,5,oops,c0\n");
  auto late = run_cli("train --data " + dir_.file("late.csv") + " --model " + dir_.file("z.flynn") +
                      " --chunk-rows 10");
  test::expect_clean_error(late, "late.csv:212:6: 'oops' is not a number");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("z.flynn")));
}

TEST_F(CliStreaming, PredictionsInChunksEqualWholeFilePredictions) {
  const std::string model = dir_.file("m.flynn");
  // gamma 0 (binary filters) makes many ties, so the random tie-break is exercised.
  ASSERT_EQ(run_cli("train --data " + csv_ + " --model " + model + " --quiet --gamma 0 --m 64 --rho 4").exit_code, 0);
  const FlyNN fly = io::load_model(model);
  io::LoadOptions load;
  load.expected_features = fly.config().input_dim;
  load.require_labels = false;
  const Dataset data = io::load_dataset(csv_, load);
  PredictOptions po;
  po.tie_break = TieBreak::Random;
  po.tie_seed = 9;
  const std::vector<std::uint32_t> pred = fly.predict(data, po);
  std::string expected = "row,prediction\n";
  for (std::size_t r = 0; r < pred.size(); ++r)
    expected += std::to_string(r + 1) + "," + fly.labels().name(pred[r]) + "\n";
  std::size_t correct = 0;
  for (std::size_t r = 0; r < pred.size(); ++r)
    correct += fly.labels().name(pred[r]) == data.classes.name(data.labels[r]);

  const std::string flags = " --tie-break random --tie-seed 9";
  std::string whole_proba;
  for (int chunk : {1000, 1, 7}) {
    const auto r = run_cli("predict --model " + model + " --data " + csv_ + flags +
                           " --chunk-rows " + std::to_string(chunk));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, expected) << "chunk " << chunk;
    EXPECT_NE(r.err.find(fmt::format("({}/{})", correct, pred.size())), std::string::npos) << r.err;
    // Probabilities and --out: the same bytes at every chunk size.
    const std::string out = dir_.file(fmt::format("p{}.csv", chunk));
    ASSERT_EQ(run_cli("predict --quiet --proba --model " + model + " --data " + gz_ + flags +
                      " --out " + out + " --chunk-rows " + std::to_string(chunk))
                  .exit_code,
              0);
    if (whole_proba.empty()) whole_proba = read_text(out);
    EXPECT_EQ(read_text(out), whole_proba) << "chunk " << chunk;
    // --json: the predicted names and the accuracy.
    const auto j = run_cli("predict --json --model " + model + " --data " + csv_ + flags +
                           " --chunk-rows " + std::to_string(chunk));
    ASSERT_EQ(j.exit_code, 0);
    EXPECT_NE(j.out.find(fmt::format("\"correct\": {}", correct)), std::string::npos) << j.out;
    EXPECT_NE(j.out.find("\"" + fly.labels().name(pred.back()) + "\"\n  ]"), std::string::npos);
  }
  EXPECT_NE(whole_proba.find("row,prediction,p_c0,p_c1,p_c2\n1,"), std::string::npos);
}

TEST_F(CliStreaming, APredictionErrorLeavesNoOutputFile) {
  const std::string model = dir_.file("m.flynn");
  ASSERT_EQ(run_cli("train --data " + csv_ + " --model " + model + " --quiet").exit_code, 0);
  write_text(dir_.file("late.csv"), read_text(csv_) + "1,2,3\n");
  const std::string out = dir_.file("pred.csv");
  const auto r = run_cli("predict --model " + model + " --data " + dir_.file("late.csv") +
                         " --out " + out + " --chunk-rows 10");
  test::expect_clean_error(r, "late.csv:212: 3 fields, expected 7 (ragged row)");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// Messy tables (an id column, missing cells, a text column) streamed: the model equals the
// whole-file one, and predictions carry the ids at every chunk size.
TEST_F(CliStreaming, MessyTablesStreamLikeWholeFiles) {
  const Dataset d = test::blobs(3, 40, 4, 11);
  std::string plain = "key,a,b,c,d,class\n", text = "key,a,b,city,d,class\n";
  const char* cities[] = {"Oslo", "Rome", "Lima"};
  for (std::size_t r = 0; r < d.n_rows; ++r) {
    std::string cells[4];
    for (std::size_t j = 0; j < 4; ++j) cells[j] = fmt::format("{:.3g}", d.row(r)[j]);
    // Missing cells in several spellings, some rows with two.
    if (r % 6 == 1) cells[1] = "NA";
    if (r % 9 == 2) cells[0] = "";
    if (r % 11 == 3) cells[3] = "?";
    const std::string key = fmt::format("r{}", r + 1), label = d.classes.name(d.labels[r]);
    plain += fmt::format("{},{},{},{},{},{}\n", key, cells[0], cells[1], cells[2], cells[3], label);
    text += fmt::format("{},{},{},{},{},{}\n", key, cells[0], cells[1], cities[(r + d.labels[r]) % 3],
                        cells[3], label);
  }
  const std::string plain_csv = dir_.file("plain.csv"), text_csv = dir_.file("text.csv");
  write_text(plain_csv, plain);
  write_text(text_csv, text);
  for (const std::string& data : {plain_csv, text_csv}) {
    const std::string whole = whole_file_model(data, "--id-col key");
    ASSERT_FALSE(whole.empty());
    for (int chunk : {1, 7}) EXPECT_EQ(streamed_model(data, "--id-col key", chunk), whole) << data << " " << chunk;
    // The mean-filled model keeps its table (format 3): the streamed first pass found the means.
    const FlyNN fly = io::load_model(dir_.file(fmt::format("s{}.flynn", n_)));
    ASSERT_FALSE(fly.table_schema().empty()) << data;
    EXPECT_EQ(fly.table_schema().fill.size(), fly.config().input_dim) << data;
  }
  // Prediction with the model's schema: names matched, missing cells filled, ids written.
  const std::string model = dir_.file("messy.flynn");
  ASSERT_EQ(run_cli("train --quiet --id-col key --data " + plain_csv + " --model " + model).exit_code, 0);
  std::string expected;
  for (int chunk : {1000, 1, 7}) {
    const auto r = run_cli("predict --quiet --proba --model " + model + " --data " + plain_csv +
                           " --chunk-rows " + std::to_string(chunk));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (expected.empty()) expected = r.out;
    EXPECT_EQ(r.out, expected) << "chunk " << chunk;
    const auto j = run_cli("predict --json --model " + model + " --data " + plain_csv +
                           " --chunk-rows " + std::to_string(chunk));
    ASSERT_EQ(j.exit_code, 0) << j.err;
    EXPECT_NE(j.out.find("\"r120\"\n  ]"), std::string::npos) << j.out;
  }
  EXPECT_EQ(expected.rfind("key,prediction,p_c0,p_c1,p_c2\nr1,", 0), 0u) << expected;
  EXPECT_NE(expected.find("\nr120,"), std::string::npos);
}

// The library side of chunked prediction: with PredictOptions::first_row, predicting rows
// in slices gives the random tie-break choices of one call on all rows.
TEST(ChunkedPrediction, FirstRowKeysTheRandomTieBreak) {
  const Dataset data = test::blobs(4, 50, 8, 3);
  HyperParams hp;
  hp.m = 32;
  hp.rho = 3;
  hp.gamma = 0.0;  // binary filters: many equal scores
  FlyNN model(hp.resolve(8, data.classes.size()), data.classes);
  model.fit(data);
  PredictOptions po;
  po.tie_break = TieBreak::Random;
  po.tie_seed = 4;
  const std::vector<std::uint32_t> whole = model.predict(DataView(data), po);
  std::vector<std::uint32_t> sliced, unkeyed;
  for (std::size_t first = 0; first < data.n_rows; first += 7) {
    const DataView part = DataView(data).rows(first, std::min<std::size_t>(7, data.n_rows - first));
    po.first_row = 0;
    for (auto p : model.predict(part, po)) unkeyed.push_back(p);
    po.first_row = first;
    for (auto p : model.predict(part, po)) sliced.push_back(p);
  }
  EXPECT_EQ(sliced, whole);
  EXPECT_NE(unkeyed, whole);  // ties exist, so restarting the stream per slice shows
}

}  // namespace
}  // namespace flynn
