// read_file (gzip handling), format names/detection, label-column parsing, and loading the
// real data sets available on the machine.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using flynn::Dataset;
using flynn::io::Format;
using flynn::io::LabelColumn;
using flynn::test::contains;
using flynn::test::error_of;
using flynn::test::gzip_bytes;
using flynn::test::TempDir;
using flynn::test::write_text;

TEST(IoReadFile, PlainAndGzip) {
  TempDir dir;
  write_text(dir.file("plain.txt"), "hello\n");
  EXPECT_EQ(flynn::io::read_file(dir.file("plain.txt")), "hello\n");
  write_text(dir.file("empty.txt"), "");
  EXPECT_EQ(flynn::io::read_file(dir.file("empty.txt")), "");
  std::string big;
  for (int i = 0; i < 200000; ++i) big += std::to_string(i) + ",";
  write_text(dir.file("big.gz"), gzip_bytes(big));
  EXPECT_EQ(flynn::io::read_file(dir.file("big.gz")), big);
  // Detection is by magic, not by name.
  write_text(dir.file("noext"), gzip_bytes("abc"));
  EXPECT_EQ(flynn::io::read_file(dir.file("noext")), "abc");
}

TEST(IoReadFile, InputSizeLimit) {
  TempDir dir;
  write_text(dir.file("plain.txt"), std::string(1000, 'x'));
  EXPECT_EQ(flynn::io::read_file(dir.file("plain.txt"), 1000).size(), 1000u);
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("plain.txt"), 999); }),
                       {"plain.txt", "more than 999 bytes", "input size limit"}));
  // A gzip bomb: 64 MiB of zeros compress to ~64 KiB; the limit stops the inflation early.
  write_text(dir.file("bomb.gz"), gzip_bytes(std::string(64u << 20, '\0')));
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("bomb.gz"), 1u << 20); }),
                       {"bomb.gz", "decompresses to more than 1048576 bytes"}));
  // An endless stream: /dev/zero has no size, reading stops at the limit.
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file("/dev/zero", 1u << 20); }),
                       {"/dev/zero", "more than 1048576 bytes"}));
  flynn::io::LoadOptions options;
  options.max_input_bytes = 10;
  write_text(dir.file("t.csv"), "1,2,a\n3,4,b\n5,6,a\n");
  EXPECT_TRUE(contains(error_of([&] { flynn::io::load_dataset(dir.file("t.csv"), options); }),
                       {"t.csv", "more than 10 bytes"}));
}

TEST(IoReadFile, MultiMemberGzipAndZeroPadding) {
  TempDir dir;
  write_text(dir.file("multi.gz"), gzip_bytes("first,") + gzip_bytes("") + gzip_bytes("second\n"));
  EXPECT_EQ(flynn::io::read_file(dir.file("multi.gz")), "first,second\n");
  write_text(dir.file("padded.gz"), gzip_bytes("x") + std::string(512, '\0'));
  EXPECT_EQ(flynn::io::read_file(dir.file("padded.gz")), "x");
}

TEST(IoReadFile, CorruptTruncatedAndGarbage) {
  TempDir dir;
  const std::string gz = gzip_bytes(std::string(10000, 'a') + "tail");
  write_text(dir.file("trunc.gz"), gz.substr(0, gz.size() - 6));
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("trunc.gz")); }),
                       {dir.file("trunc.gz") + ": truncated gzip data"}));
  write_text(dir.file("magic-only.gz"), "\x1f\x8b");
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("magic-only.gz")); }),
                       {dir.file("magic-only.gz") + ": truncated gzip data"}));
  std::string bad = gz;
  for (std::size_t i = 12; i < 40 && i < bad.size(); ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5A);
  write_text(dir.file("corrupt.gz"), bad);
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("corrupt.gz")); }),
                       {dir.file("corrupt.gz") + ": corrupt gzip data"}));
  std::string crc = gz;
  crc[crc.size() - 6] = static_cast<char>(crc[crc.size() - 6] ^ 1);  // CRC32 of the trailer
  write_text(dir.file("crc.gz"), crc);
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("crc.gz")); }),
                       {dir.file("crc.gz") + ": corrupt gzip data"}));
  write_text(dir.file("garbage.gz"), gz + "junk");
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("garbage.gz")); }),
                       {dir.file("garbage.gz") + ": 4 bytes of trailing garbage"}));
}

TEST(IoReadFile, MissingFileAndDirectory) {
  TempDir dir;
  EXPECT_TRUE(contains(error_of([&] { flynn::io::read_file(dir.file("nope.csv")); }),
                       {dir.file("nope.csv") + ": cannot open: No such file or directory"}));
  EXPECT_TRUE(
      contains(error_of([&] { flynn::io::read_file(dir.path().string()); }), {"is a directory"}));
  EXPECT_TRUE(contains(error_of([&] { flynn::io::load_dataset(dir.file("nope.csv")); }),
                       {dir.file("nope.csv")}));
}

TEST(IoFormat, NamesAndDetection) {
  EXPECT_EQ(flynn::io::parse_format("csv"), Format::Csv);
  EXPECT_EQ(flynn::io::parse_format("ARFF"), Format::Arff);
  EXPECT_EQ(flynn::io::parse_format("idx"), Format::Idx);
  EXPECT_EQ(flynn::io::parse_format("libsvm"), Format::Libsvm);
  EXPECT_EQ(flynn::io::parse_format("svmlight"), Format::Libsvm);
  EXPECT_EQ(flynn::io::parse_format("auto"), Format::Auto);
  EXPECT_TRUE(
      contains(error_of([] { flynn::io::parse_format("xls"); }), {"unknown data format 'xls'"}));
  for (Format f : {Format::Auto, Format::Csv, Format::Arff, Format::Idx, Format::Libsvm}) {
    EXPECT_EQ(flynn::io::parse_format(flynn::io::format_name(f)), f);
  }

  using flynn::io::detect_format;
  EXPECT_EQ(detect_format("a/b/data.csv"), Format::Csv);
  EXPECT_EQ(detect_format("data.csv.gz"), Format::Csv);
  EXPECT_EQ(detect_format("data.txt"), Format::Csv);
  EXPECT_EQ(detect_format("iris.arff"), Format::Arff);
  EXPECT_EQ(detect_format("IRIS.ARFF.GZ"), Format::Arff);
  EXPECT_EQ(detect_format("a1a.libsvm"), Format::Libsvm);
  EXPECT_EQ(detect_format("a1a.svm"), Format::Libsvm);
  EXPECT_EQ(detect_format("a1a.svmlight.gz"), Format::Libsvm);
  EXPECT_EQ(detect_format("train-images-idx3-ubyte.gz"), Format::Idx);
  EXPECT_EQ(detect_format("t10k-labels.idx1-ubyte"), Format::Idx);
  EXPECT_EQ(detect_format("x.idx"), Format::Idx);
  EXPECT_EQ(detect_format("idx/data.csv"), Format::Csv);  // directories do not count
  EXPECT_EQ(detect_format("my_idx_file.csv"), Format::Csv);
}

TEST(IoFormat, LabelColumnParse) {
  EXPECT_EQ(LabelColumn::parse("last").kind, LabelColumn::Kind::Last);
  EXPECT_EQ(LabelColumn::parse("LAST").kind, LabelColumn::Kind::Last);
  EXPECT_EQ(LabelColumn::parse("none").kind, LabelColumn::Kind::None);
  const LabelColumn one = LabelColumn::parse("1");
  EXPECT_EQ(one.kind, LabelColumn::Kind::Index);
  EXPECT_EQ(one.index, 1);
  EXPECT_EQ(LabelColumn::parse("-2").index, -2);
  const LabelColumn name = LabelColumn::parse("class");
  EXPECT_EQ(name.kind, LabelColumn::Kind::Name);
  EXPECT_EQ(name.name, "class");
  EXPECT_EQ(LabelColumn::parse("1a").kind, LabelColumn::Kind::Name);
  EXPECT_TRUE(contains(error_of([] { LabelColumn::parse("0"); }), {"label column 0"}));
  EXPECT_TRUE(contains(error_of([] { LabelColumn::parse(""); }), {"empty label column"}));
}

// ---- real data (skipped when the files are not on this machine)

TEST(IoRealData, ScikitLearnDigitsCsv) {
  const std::string path = flynn::test::digits_csv();
  if (path.empty()) GTEST_SKIP() << "python3-sklearn's digits.csv.gz is not installed";
  const Dataset d = flynn::io::load_dataset(path);
  EXPECT_EQ(d.n_rows, 1797u);
  EXPECT_EQ(d.n_features, 64u);
  ASSERT_TRUE(d.has_labels);
  EXPECT_EQ(d.classes.joined(), "0,1,2,3,4,5,6,7,8,9");
  const auto sizes = d.class_sizes();
  for (std::size_t c = 0; c < 10; ++c) EXPECT_GE(sizes[c], 170u);
  // First row of the file: 0,0,5,13,9,1,0,0,... label 0.
  EXPECT_EQ(d.features[2], 5.0f);
  EXPECT_EQ(d.features[3], 13.0f);
  EXPECT_EQ(d.classes.name(d.labels[0]), "0");
  EXPECT_EQ(d.row_origin.front(), 1u);
  EXPECT_EQ(d.row_origin.back(), 1797u);
}

TEST(IoRealData, SmallestOpenMlCsvGz) {
  const std::string dir = flynn::test::openml_dir();
  if (dir.empty()) GTEST_SKIP() << "the OpenML data folder is not available";
  fs::path smallest;
  std::uintmax_t best = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 7 || name.substr(name.size() - 7) != ".csv.gz") continue;
    if (smallest.empty() || e.file_size() < best) {
      smallest = e.path();
      best = e.file_size();
    }
  }
  if (smallest.empty()) GTEST_SKIP() << "no .csv.gz in " << dir;
  // Expected shape from MANIFEST.tsv: did, name, L, n, d (columns including the class).
  const std::string did =
      smallest.filename().string().substr(0, smallest.filename().string().find('_'));
  std::ifstream manifest(dir + "/MANIFEST.tsv");
  std::string line;
  std::size_t L = 0, n = 0, d = 0;
  while (std::getline(manifest, line)) {
    std::istringstream ss(line);
    std::string f_did, f_name;
    if (std::getline(ss, f_did, '\t') && f_did == did) {
      std::getline(ss, f_name, '\t');
      ss >> L >> n >> d;
      break;
    }
  }
  ASSERT_GT(n, 0u) << "did " << did << " not in MANIFEST.tsv";
  const Dataset ds = flynn::io::load_dataset(smallest.string());
  EXPECT_EQ(ds.n_rows, n) << smallest;
  EXPECT_EQ(ds.n_features, d - 1) << smallest;
  EXPECT_EQ(ds.classes.size(), L) << smallest;
  EXPECT_EQ(ds.row_origin.front(), 2u);  // line 1 is the header
  ds.require_trainable();
}

TEST(IoRealData, EveryOpenMlFileLoads) {
  const std::string dir = flynn::test::openml_dir();
  if (dir.empty()) GTEST_SKIP() << "the OpenML data folder is not available";
  std::ifstream manifest(dir + "/MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  int checked = 0;
  while (std::getline(manifest, line)) {
    std::istringstream ss(line);
    std::string did, name;
    std::size_t L = 0, n = 0, d = 0;
    std::getline(ss, did, '\t');
    std::getline(ss, name, '\t');
    ss >> L >> n >> d;
    const std::string path = dir + "/" + did + "_" + name + ".csv.gz";
    if (!fs::exists(path)) continue;
    SCOPED_TRACE(path);
    const Dataset ds = flynn::io::load_dataset(path);
    EXPECT_EQ(ds.n_rows, n);
    EXPECT_EQ(ds.n_features + 1, d);
    EXPECT_EQ(ds.classes.size(), L);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(IoRealData, FashionMnistT10kIdx) {
  const std::string dir = flynn::test::fashion_mnist_dir();
  if (dir.empty()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string images = dir + "/t10k-images-idx3-ubyte.gz";
  EXPECT_EQ(flynn::io::idx_labels_path_for(images), dir + "/t10k-labels-idx1-ubyte.gz");
  const Dataset d = flynn::io::load_dataset(images);
  EXPECT_EQ(d.n_rows, 10000u);
  EXPECT_EQ(d.n_features, 784u);
  ASSERT_TRUE(d.has_labels);
  EXPECT_EQ(d.classes.joined(), "0,1,2,3,4,5,6,7,8,9");
  for (std::size_t s : d.class_sizes()) EXPECT_EQ(s, 1000u);
  float lo = 255, hi = 0;
  for (float v : d.features) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 255.0f);
  EXPECT_EQ(d.classes.name(d.labels[0]), "9");  // the first t10k item is an ankle boot
  EXPECT_EQ(d.row_origin.back(), 10000u);
}

}  // namespace
