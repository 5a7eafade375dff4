// RowStream: chunked reading gives exactly what load_dataset gives (values, labels,
// lines, errors), for every text format, plain and gzip, at any chunk and block size.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <string>
#include <thread>
#include <vector>

#include "flynn/io/loaders.hpp"
#include "flynn/io/row_stream.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

using flynn::Dataset;
using flynn::io::ChunkLimits;
using flynn::io::LoadOptions;
using flynn::io::RowStream;
using flynn::test::contains;
using flynn::test::error_of;
using flynn::test::gzip_bytes;
using flynn::test::TempDir;
using flynn::test::write_text;

// What a test compares: everything a loader promises, with labels as names.
struct Rows {
  std::size_t n_features = 0;
  bool has_labels = false;
  std::vector<float> features;
  std::vector<std::string> labels;
  std::vector<std::uint64_t> origin;
  bool operator==(const Rows&) const = default;
};

void add(Rows& rows, const Dataset& d) {
  rows.n_features = d.n_features;
  rows.has_labels = d.has_labels;
  rows.features.insert(rows.features.end(), d.features.begin(), d.features.end());
  for (std::uint32_t id : d.labels) rows.labels.push_back(d.classes.name(id));
  rows.origin.insert(rows.origin.end(), d.row_origin.begin(), d.row_origin.end());
}

Rows whole(const std::string& path, const LoadOptions& options) {
  Rows r;
  add(r, flynn::io::load_dataset(path, options));
  return r;
}

// Reads every chunk, checking each against the limits; `chunks` receives their number.
Rows streamed(const std::string& path, const LoadOptions& options, const ChunkLimits& limits,
              std::size_t* chunks = nullptr) {
  RowStream stream(path, options, limits);
  Rows r;
  Dataset chunk;
  std::size_t n = 0;
  while (stream.next(chunk)) {
    EXPECT_GE(chunk.n_rows, 1u);
    EXPECT_LE(chunk.n_rows, limits.max_rows);
    EXPECT_EQ(chunk.features.size(), chunk.n_rows * chunk.n_features);
    EXPECT_EQ(chunk.row_origin.size(), chunk.n_rows);
    EXPECT_EQ(chunk.has_labels, stream.has_labels());
    if (stream.n_features()) {
      EXPECT_EQ(chunk.n_features, stream.n_features());
    }
    if (chunk.n_rows > 1) {
      EXPECT_LE(chunk.n_rows * chunk.n_features, limits.max_values);
    }
    // The chunk's classes are exactly the names its rows use, sorted.
    if (chunk.has_labels) {
      std::vector<bool> used(chunk.classes.size(), false);
      for (auto id : chunk.labels) used.at(id) = true;
      for (bool u : used) EXPECT_TRUE(u);
    }
    add(r, chunk);
    ++n;
  }
  EXPECT_EQ(chunk.n_rows, 0u);
  EXPECT_EQ(stream.rows_read(), r.origin.size());
  if (chunks) *chunks = n;
  return r;
}

const std::vector<ChunkLimits>& limit_grid() {
  static const std::vector<ChunkLimits> grid = [] {
    std::vector<ChunkLimits> g;
    for (std::size_t rows : {1u, 2u, 3u, 1000u})
      for (std::size_t block : {1u, 5u, 64u, 1u << 20}) g.push_back({rows, 1u << 22, block});
    g.push_back({1000, 5, 7});  // by values: wide rows make small chunks
    return g;
  }();
  return grid;
}

// Plain, gzip and two-member gzip spellings of `text`, all compared with load_dataset.
void expect_same_everywhere(TempDir& dir, const std::string& name, const std::string& text,
                            const LoadOptions& options = {}) {
  const std::string half = text.substr(0, text.size() / 2);
  const std::vector<std::pair<std::string, std::string>> files = {
      {dir.file(name), text},
      {dir.file(name + ".gz"), gzip_bytes(text)},
      {dir.file("two-" + name + ".gz"), gzip_bytes(half) + gzip_bytes(text.substr(half.size()))}};
  for (const auto& [path, bytes] : files) {
    write_text(path, bytes);
    const Rows expected = whole(path, options);
    ASSERT_FALSE(expected.origin.empty());
    for (const ChunkLimits& limits : limit_grid()) {
      EXPECT_EQ(streamed(path, options, limits), expected)
          << path << " max_rows " << limits.max_rows << " block " << limits.block_bytes;
    }
  }
}

TEST(RowStream, CsvChunksEqualTheWholeFile) {
  TempDir dir;
  // BOM, CRLF, blank lines, quoted fields and labels spelled several ways ("1", "1.0",
  // "+01" are one class).
  expect_same_everywhere(dir, "a.csv",
                         "\xEF\xBB\xBFx,y,class\r\n1,2,1\r\n\r\n3.5,\"4\",1.0\n  \n5,6,\"b, c\"\n"
                         "7,8,+01\n9,10,b\n11,12,2\n13,14,1\n15,16,x\n17,18,2");
  // No header, semicolons, and the "1,2,cat" header rule that peeks at line 2.
  expect_same_everywhere(dir, "b.csv", "1;2;a\n3;4;b\n5;6;a\n7;8;c\n");
  expect_same_everywhere(dir, "c.csv", "1,2,class\n\n\n1,2,3\n4,5,6\n7,8,3\n");
  // Unlabelled rows (prediction): exactly expected_features columns.
  LoadOptions predict;
  predict.expected_features = 2;
  predict.require_labels = false;
  expect_same_everywhere(dir, "d.csv", "1,2\n3,4\n5,6\n7,8\n9,10\n", predict);
  expect_same_everywhere(dir, "e.csv", "1,2,a\n3,4,b\n5,6,a\n7,8,c\n", predict);
  // Label column by name, first column.
  LoadOptions named;
  named.label_column = flynn::io::LabelColumn::parse("kind");
  expect_same_everywhere(dir, "f.tsv", "kind\tp\tq\na\t1\t2\nb\t3\t4\na\t5\t6\n", named);
}

TEST(RowStream, ArffChunksEqualTheWholeFile) {
  TempDir dir;
  const std::string header =
      "% comment\n@relation r\n@attribute a numeric\n@attribute b real\n"
      "@attribute c integer\n@attribute class {x,y,'z z'}\n\n@data\n";
  expect_same_everywhere(dir, "a.arff",
                         header + "1,2,3,x\n% note\n4,5,6,y\n{0 7, 3 'z z'}\n{3 x}\n8,9,10,y\n");
  // Named .csv but ARFF content, after a long run of comments (format sniffing needs more
  // than the first block).
  std::string comments;
  for (int i = 0; i < 40; ++i) comments += "% comment line " + std::to_string(i) + "\n";
  expect_same_everywhere(dir, "sniffed.csv", comments + header + "1,2,3,x\n4,5,6,y\n");
}

TEST(RowStream, LibsvmChunksEqualTheWholeFile) {
  TempDir dir;
  const std::string text =
      "+1 1:0.5 3:2 # first\n\n-1 2:1.5 qid:3 7:1\n# comment only\n1 1:1\n007 4:2 5:3\n2 6:1\n";
  LoadOptions fixed;
  fixed.expected_features = 7;  // the file's largest index: the width load_dataset picks
  expect_same_everywhere(dir, "a.libsvm", text, fixed);
  write_text(dir.file("b.libsvm"), text);
  EXPECT_EQ(whole(dir.file("b.libsvm"), {}), whole(dir.file("b.libsvm"), fixed));

  // Without a fixed width each chunk is as wide as its own largest index, and a row that
  // would take a chunk past max_values starts the next one.
  RowStream stream(dir.file("b.libsvm"), {}, {1000, 14, 1 << 20});
  EXPECT_EQ(stream.n_features(), 0u);
  std::vector<std::pair<std::size_t, std::size_t>> shapes;  // rows, width
  Dataset chunk;
  while (stream.next(chunk)) shapes.emplace_back(chunk.n_rows, chunk.n_features);
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {{2, 7}, {2, 5}, {1, 6}};
  EXPECT_EQ(shapes, expected);
}

TEST(RowStream, IdxIsHandedOutInChunks) {
  TempDir dir;
  std::string images = flynn::test::idx_header(0x08, {5, 2, 2});
  for (int i = 0; i < 20; ++i) images += static_cast<char>(i);
  std::string labels = flynn::test::idx_header(0x08, {5});
  for (int i = 0; i < 5; ++i) labels += static_cast<char>(i % 3);
  write_text(dir.file("t-images-idx3-ubyte"), images);
  write_text(dir.file("t-labels-idx1-ubyte"), labels);
  const std::string path = dir.file("t-images-idx3-ubyte");
  std::size_t chunks = 0;
  EXPECT_EQ(streamed(path, {}, {2, 1 << 22, 1 << 20}, &chunks), whole(path, {}));
  EXPECT_EQ(chunks, 3u);

  // The stream holds the file whole: every row as the file's bytes, with the labels.
  const RowStream stream(path);
  const auto all = stream.whole_file();
  ASSERT_TRUE(all.has_value());
  ASSERT_NE(all->rows.bytes(), nullptr);
  EXPECT_EQ(all->rows.n_rows(), 5u);
  EXPECT_EQ(all->rows.n_cols(), 4u);
  EXPECT_EQ(all->rows.bytes()[19], 19);
  EXPECT_EQ(all->records->n_features, 0u);
  EXPECT_EQ(all->records->labels, (std::vector<std::uint32_t>{0, 1, 2, 0, 1}));
  EXPECT_EQ(all->records->row_origin.back(), 5u);

  // Other element types are held as floats; text formats are never held whole.
  std::string wide = flynn::test::idx_header(0x0B, {2, 1});
  wide += std::string("\x01\x02\xFF\xFE", 4);
  write_text(dir.file("w.idx"), wide);
  flynn::io::LoadOptions unlabelled;
  unlabelled.require_labels = false;
  const RowStream words(dir.file("w.idx"), unlabelled);
  ASSERT_TRUE(words.whole_file().has_value());
  ASSERT_NE(words.whole_file()->rows.floats(), nullptr);
  EXPECT_EQ(words.whole_file()->rows.floats()[1], -2.0f);
  write_text(dir.file("t.csv"), "1,2,a\n3,4,b\n");
  EXPECT_FALSE(RowStream(dir.file("t.csv")).whole_file().has_value());
}

TEST(RowStream, ErrorsMatchTheWholeFileLoader) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"ragged.csv", "a,b,c\n1,2,x\n3,4,y\n5,6\n"},
      {"inf.csv", "1,2,x\n3,inf,y\n"},  // "nan" is a missing cell (filled)
      {"empty.csv", "\n\n  \n"},
      {"header-only.csv", "a,b,c\n"},
      {"empty-label.csv", "1,2,x\n1,2,\n"},
      {"quote.csv", "1,2,x\n1,\"2,y\n"},
      {"no-data.arff", "@relation r\n@attribute a numeric\n@attribute c {x}\n@data\n% none\n"},
      {"no-data-section.arff", "@relation r\n@attribute a numeric\n"},
      {"undeclared.arff", "@attribute a numeric\n@attribute c {x}\n@data\n1,x\n2,y\n"},
      {"missing-class.arff", "@attribute a numeric\n@attribute c {x}\n@data\n1,x\n1,?\n"},
      {"descending.libsvm", "1 1:1 2:2\n2 3:1 2:1\n"},
      {"no-features.libsvm", "1\n2\n"},
      {"blank.libsvm", "# only a comment\n"},
  };
  for (const auto& [name, text] : bad) {
    for (const std::string& path : {dir.file(name), dir.file(name + ".gz")}) {
      write_text(path, path.ends_with(".gz") ? gzip_bytes(text) : text);
      const std::string expected = error_of([&] { flynn::io::load_dataset(path, {}); });
      ASSERT_NE(expected, "<no error>") << path;
      for (const ChunkLimits& limits : limit_grid()) {
        EXPECT_EQ(error_of([&] { streamed(path, {}, limits); }), expected)
            << path << " max_rows " << limits.max_rows << " block " << limits.block_bytes;
      }
    }
  }
  // Unreadable inputs fail when the stream is opened.
  EXPECT_TRUE(contains(error_of([&] { RowStream s(dir.file("nope.csv")); }),
                       {dir.file("nope.csv"), "cannot open"}));
  EXPECT_TRUE(contains(error_of([&] { RowStream s(dir.path().string()); }), {"is a directory"}));
  const std::string gz = gzip_bytes(std::string(5000, '1') + ",2,x\n");
  write_text(dir.file("trunc.csv.gz"), gz.substr(0, gz.size() - 6));
  EXPECT_TRUE(contains(error_of([&] { streamed(dir.file("trunc.csv.gz"), {}, {}); }),
                       {"truncated gzip data"}));
  // The input size limit holds while streaming.
  LoadOptions small;
  small.max_input_bytes = 10;
  write_text(dir.file("big.csv"), "1,2,a\n3,4,b\n5,6,a\n");
  EXPECT_TRUE(contains(error_of([&] { streamed(dir.file("big.csv"), small, {}); }),
                       {"more than 10 bytes"}));
}

TEST(RowStream, PipesAreReadOnceAndNotRereadable) {
  TempDir dir;
  const std::string text = "1,2,a\n3,4,b\n5,6,a\n";
  write_text(dir.file("a.csv"), text);
  EXPECT_TRUE(RowStream(dir.file("a.csv")).rereadable());
  const std::string fifo = dir.file("pipe.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { write_text(fifo, text); });
  Rows rows;
  {
    RowStream stream(fifo, {}, {1, 1 << 22, 2});
    EXPECT_FALSE(stream.rereadable());
    Dataset chunk;
    while (stream.next(chunk)) add(rows, chunk);
  }
  writer.join();
  EXPECT_EQ(rows, whole(dir.file("a.csv"), {}));
}

}  // namespace
