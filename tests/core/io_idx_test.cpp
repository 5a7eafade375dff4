// IDX loader: element types, shapes, labels, size checks, labels-file discovery.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

using flynn::Dataset;
using flynn::io::parse_idx;
using flynn::test::contains;
using flynn::test::error_of;
using flynn::test::idx_header;
using flynn::test::idx_u8;

std::string idx_error(std::string_view images, std::string_view labels = {}) {
  return error_of([&] { parse_idx(images, labels, "img.idx", "lbl.idx"); });
}

void put_be32(std::string& s, std::uint32_t v) {
  for (int k = 3; k >= 0; --k) s += static_cast<char>(v >> (8 * k));
}

TEST(IoIdx, Uint8ImagesWithLabels) {
  // 3 images of 2x2.
  const std::string images = idx_u8({3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 255, 254, 253, 252});
  const std::string labels = idx_u8({3}, {7, 0, 7});
  const Dataset d = parse_idx(images, labels, "img.idx", "lbl.idx");
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_EQ(d.n_features, 4u);
  EXPECT_EQ(d.features[8], 255.0f);
  EXPECT_EQ(d.features[3], 3.0f);
  ASSERT_TRUE(d.has_labels);
  EXPECT_EQ(d.classes.joined(), "0,7");
  EXPECT_EQ(d.labels, (std::vector<std::uint32_t>{1, 0, 1}));
  EXPECT_EQ(d.row_origin, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(IoIdx, UnlabelledAndOneDimensional) {
  const Dataset d = parse_idx(idx_u8({4}, {1, 2, 3, 4}), {}, "v.idx");
  EXPECT_FALSE(d.has_labels);
  EXPECT_EQ(d.n_rows, 4u);
  EXPECT_EQ(d.n_features, 1u);
}

TEST(IoIdx, SignedAndWideTypes) {
  std::string s8 = idx_header(0x09, {2});
  s8 += static_cast<char>(0xFF);
  s8 += static_cast<char>(0x80);
  EXPECT_EQ(parse_idx(s8, {}, "x").features, (std::vector<float>{-1, -128}));

  std::string i16 = idx_header(0x0B, {2});
  i16 += std::string("\x01\x02\xFF\xFE", 4);
  EXPECT_EQ(parse_idx(i16, {}, "x").features, (std::vector<float>{258, -2}));

  std::string i32 = idx_header(0x0C, {1, 2});
  put_be32(i32, 100000);
  put_be32(i32, 0xFFFFFFFFu);
  EXPECT_EQ(parse_idx(i32, {}, "x").features, (std::vector<float>{100000, -1}));

  std::string f32 = idx_header(0x0D, {1, 2});
  float a = 1.5f, b = -0.0f;
  std::uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  put_be32(f32, ua);
  put_be32(f32, ub);
  const Dataset df = parse_idx(f32, {}, "x");
  EXPECT_EQ(df.features[0], 1.5f);
  EXPECT_FALSE(std::signbit(df.features[1]));

  std::string f64 = idx_header(0x0E, {1});
  double c = -2.25;
  std::uint64_t uc;
  std::memcpy(&uc, &c, 8);
  put_be32(f64, static_cast<std::uint32_t>(uc >> 32));
  put_be32(f64, static_cast<std::uint32_t>(uc));
  EXPECT_EQ(parse_idx(f64, {}, "x").features, (std::vector<float>{-2.25f}));

  // int16 labels.
  std::string l16 = idx_header(0x0B, {2});
  l16 += std::string("\x00\x0A\xFF\xFF", 4);
  EXPECT_EQ(parse_idx(idx_u8({2}, {1, 2}), l16, "x").classes.joined(), "-1,10");
}

TEST(IoIdx, NonFiniteFloatsAreErrors) {
  std::string f32 = idx_header(0x0D, {2, 2});
  put_be32(f32, 0);
  put_be32(f32, 0);
  put_be32(f32, 0);
  put_be32(f32, 0x7FC00000u);  // NaN: record 2, value 2
  EXPECT_TRUE(contains(idx_error(f32), {"img.idx: record 2, value 2: NaN is not allowed"}));
  std::string f64 = idx_header(0x0E, {1});
  double big = 1e300;
  std::uint64_t u;
  std::memcpy(&u, &big, 8);
  put_be32(f64, static_cast<std::uint32_t>(u >> 32));
  put_be32(f64, static_cast<std::uint32_t>(u));
  EXPECT_TRUE(contains(idx_error(f64), {"img.idx: record 1, value 1: value out of float range"}));
}

TEST(IoIdx, HeaderErrors) {
  EXPECT_TRUE(contains(idx_error(""), {"img.idx: empty file"}));
  EXPECT_TRUE(contains(idx_error(std::string("\0\0", 2)), {"img.idx: truncated IDX header"}));
  EXPECT_TRUE(contains(idx_error("abcdefgh"), {"img.idx: not an IDX file"}));
  EXPECT_TRUE(contains(idx_error(idx_header(0x0A, {1}) + "x"),
                       {"img.idx: unsupported IDX element type 0x0a"}));
  EXPECT_TRUE(contains(idx_error(idx_header(0x08, {})), {"img.idx: IDX header with 0 dimensions"}));
  EXPECT_TRUE(contains(idx_error(idx_header(0x08, {2, 3}).substr(0, 9)),
                       {"img.idx: truncated IDX header"}));
  EXPECT_TRUE(contains(idx_error(idx_header(0x08, {2, 0})), {"img.idx: IDX dimension 2 is 0"}));
}

TEST(IoIdx, TruncatedAndOversizedPayloads) {
  // 3 records of 4 bytes, only 10 bytes present: record 3 is incomplete.
  const std::string truncated = idx_header(0x08, {3, 2, 2}) + std::string(10, '\x01');
  EXPECT_TRUE(contains(idx_error(truncated),
                       {"img.idx: truncated", "3 records of 2x2 uint8", "record 3 is incomplete"}));
  const std::string oversized = idx_header(0x08, {3, 2, 2}) + std::string(13, '\x01');
  EXPECT_TRUE(
      contains(idx_error(oversized), {"img.idx: 1 unexpected bytes after the last record"}));
}

TEST(IoIdx, AbsurdDimensionsDoNotAllocate) {
  // 4e9 x 4e9 x 4e9 float64: overflows 64 bits; must be a clean error.
  const std::string h = idx_header(0x0E, {4000000000u, 4000000000u, 4000000000u}) + "12345678";
  EXPECT_TRUE(contains(idx_error(h), {"img.idx: truncated"}));
  const std::string h2 = idx_header(0x08, {4000000000u, 2}) + "12";
  EXPECT_TRUE(contains(idx_error(h2), {"img.idx: truncated", "record 2 is incomplete"}));
}

TEST(IoIdx, LabelErrors) {
  const std::string images = idx_u8({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(contains(idx_error(images, idx_u8({2}, {0, 1})),
                       {"img.idx: 3 images but lbl.idx has 2 labels"}));
  EXPECT_TRUE(contains(idx_error(images, idx_u8({3, 1}, {0, 1, 2})),
                       {"lbl.idx: a labels file must have 1 dimension"}));
  std::string fl = idx_header(0x0D, {3}) + std::string(12, '\0');
  EXPECT_TRUE(contains(idx_error(images, fl), {"lbl.idx: labels must be integers"}));
  EXPECT_TRUE(contains(idx_error(images, idx_u8({3}, {0, 1})), {"lbl.idx: truncated"}));
}

TEST(IoIdx, LabelsPathConvention) {
  flynn::test::TempDir dir;
  flynn::test::write_text(dir.file("train-images-idx3-ubyte.gz"), "x");
  EXPECT_EQ(flynn::io::idx_labels_path_for(dir.file("train-images-idx3-ubyte.gz")),
            "");  // no labels file yet
  flynn::test::write_text(dir.file("train-labels-idx1-ubyte"), "x");
  EXPECT_EQ(flynn::io::idx_labels_path_for(dir.file("train-images-idx3-ubyte.gz")),
            dir.file("train-labels-idx1-ubyte"));
  flynn::test::write_text(dir.file("train-labels-idx1-ubyte.gz"), "x");
  EXPECT_EQ(flynn::io::idx_labels_path_for(dir.file("train-images-idx3-ubyte.gz")),
            dir.file("train-labels-idx1-ubyte.gz"));
  EXPECT_EQ(flynn::io::idx_labels_path_for(dir.file("train-images-idx3-ubyte")),
            dir.file("train-labels-idx1-ubyte"));
  flynn::test::write_text(dir.file("t10k-labels.idx1-ubyte"), "x");
  EXPECT_EQ(flynn::io::idx_labels_path_for(dir.file("t10k-images.idx3-ubyte")),
            dir.file("t10k-labels.idx1-ubyte"));
  EXPECT_EQ(flynn::io::idx_labels_path_for(dir.file("data.csv")), "");
}

TEST(IoIdx, LoadDatasetFindsLabelsOrExplainsHowToGiveThem) {
  flynn::test::TempDir dir;
  const std::string images = idx_u8({2, 2}, {1, 2, 3, 4});
  flynn::test::write_text(dir.file("my-images-idx2-ubyte.gz"), flynn::test::gzip_bytes(images));
  // No labels file: an error saying how to give one...
  const std::string msg =
      error_of([&] { flynn::io::load_dataset(dir.file("my-images-idx2-ubyte.gz")); });
  EXPECT_TRUE(contains(msg, {dir.file("my-images-idx2-ubyte.gz"), "no labels file",
                             "load option idx_labels", dir.file("my-labels-idx1-ubyte.gz")}));
  // ...or unlabelled when labels are optional.
  flynn::io::LoadOptions opt;
  opt.require_labels = false;
  EXPECT_FALSE(flynn::io::load_dataset(dir.file("my-images-idx2-ubyte.gz"), opt).has_labels);
  // With the conventional file present.
  flynn::test::write_text(dir.file("my-labels-idx1-ubyte"), idx_u8({2}, {5, 3}));
  const Dataset d = flynn::io::load_dataset(dir.file("my-images-idx2-ubyte.gz"));
  EXPECT_EQ(d.classes.joined(), "3,5");
  // Explicit labels file, any name; mismatch names both files.
  flynn::test::write_text(dir.file("other.bin"), idx_u8({3}, {5, 3, 1}));
  opt.idx_labels = dir.file("other.bin");
  EXPECT_TRUE(
      contains(error_of([&] { flynn::io::load_dataset(dir.file("my-images-idx2-ubyte.gz"), opt); }),
               {"2 images but " + dir.file("other.bin") + " has 3 labels"}));
  // Truncated gzip names the file.
  const std::string gz = flynn::test::gzip_bytes(images);
  flynn::test::write_text(dir.file("cut-images-idx2-ubyte.gz"), gz.substr(0, gz.size() / 2));
  EXPECT_TRUE(
      contains(error_of([&] { flynn::io::load_dataset(dir.file("cut-images-idx2-ubyte.gz")); }),
               {dir.file("cut-images-idx2-ubyte.gz") + ": truncated gzip data"}));
  // IDX bytes under a name that does not say IDX are still recognised.
  opt.idx_labels.clear();
  flynn::test::write_text(dir.file("pixels.bin"), images);
  EXPECT_EQ(flynn::io::load_dataset(dir.file("pixels.bin"), opt).n_features, 2u);
  // expected_features is checked for IDX too.
  opt.expected_features = 3;
  EXPECT_TRUE(contains(error_of([&] { flynn::io::load_dataset(dir.file("pixels.bin"), opt); }),
                       {"2 values per record, model expects 3 features"}));
}

}  // namespace
