// Model loader bounds: impossible metadata is refused, every allocation a file
// drives is estimated and bounded first, and whatever training writes reads back.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <zlib.h>

#include <cstring>
#include <random>
#include <string>

#include "flynn/classifier.hpp"
#include "flynn/detail/memory.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

// Field offsets of a format-1 file (model_file.hpp): 20 header bytes, then the body.
constexpr std::size_t kFlagsAt = 54, kEpsilonAt = 56, kTAt = 64, kPartiesAt = 68;
constexpr std::size_t kClassCountAt = 72;

FlyNN paper_model(std::size_t classes = 3, std::uint32_t m = 300, std::uint32_t rho = 8) {
  const Dataset data = test::blobs(classes, 20, 6, 11);
  HyperParams p;
  p.m = m;
  p.rho = rho;
  p.variant = Variant{};  // format 1, whose offsets are fixed above
  FlyNN model(p.resolve(6, classes), data.classes, 1);
  model.fit(data);
  model.clear_temperature();  // format 1 has no calibration
  return model;
}

template <typename T>
void put(std::string& bytes, std::size_t at, T value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);  // little-endian hosts only
}

// Recomputes the trailing CRC so a patched file fails on its content, not its checksum.
void fix_crc(std::string& bytes) {
  const auto crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size() - 4)));
  put(bytes, bytes.size() - 4, crc);
}

// Offset of the first class's row count in a format-1 file.
std::size_t rows_at(const std::string& bytes) {
  std::uint32_t L = 0;
  std::memcpy(&L, bytes.data() + kClassCountAt, 4);
  std::size_t at = kClassCountAt + 4;
  for (std::uint32_t l = 0; l < L; ++l) {
    std::uint32_t len = 0;
    std::memcpy(&len, bytes.data() + at, 4);
    at += 4 + len;
  }
  return at;
}

std::string error_of(const std::string& bytes, std::uint64_t limit = io::kDefaultMaxInputBytes) {
  try {
    io::parse_model(bytes, "m.flynn", limit);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string dp_file(double epsilon, std::uint32_t T, std::uint32_t parties) {
  std::string bytes = io::serialize_model(paper_model());
  put<std::uint16_t>(bytes, kFlagsAt, 1);
  put(bytes, kEpsilonAt, epsilon);
  put(bytes, kTAt, T);
  put(bytes, kPartiesAt, parties);
  fix_crc(bytes);
  return bytes;
}

TEST(ModelBounds, DifferentialPrivacyMetadataMustBePossible) {
  EXPECT_EQ(error_of(dp_file(1.5, 100, 2)), "");  // the patching itself is sound
  EXPECT_TRUE(test::contains(error_of(dp_file(std::nan(""), 100, 2)), {"m.flynn", "dp epsilon nan"}));
  EXPECT_TRUE(test::contains(error_of(dp_file(-1.0, 100, 2)), {"dp epsilon -1"}));
  EXPECT_TRUE(test::contains(error_of(dp_file(0.0, 100, 2)), {"dp epsilon 0"}));
  EXPECT_TRUE(test::contains(error_of(dp_file(1.0 / 0.0, 100, 2)), {"dp epsilon inf"}));
  EXPECT_TRUE(test::contains(error_of(dp_file(1.0, 0, 2)), {"dp T is 0"}));
  EXPECT_TRUE(test::contains(error_of(dp_file(1.0, 10, 0)), {"dp parties is 0"}));
}

TEST(ModelBounds, RowsTimesRhoMustNotOverflow) {
  std::string bytes = io::serialize_model(paper_model());
  put<std::uint64_t>(bytes, rows_at(bytes), std::uint64_t{1} << 62);  // × rho 8 overflows
  fix_crc(bytes);
  EXPECT_TRUE(test::contains(error_of(bytes), {"rows × codes per row", "overflows"}));
}

TEST(ModelBounds, NoCountExceedsItsClassRows) {
  // One class of two rows, m = 2, rho = 1: counts {2, 0} are valid, {3, 0} are not (a row
  // adds at most one to a unit), refused by the count check before the sum check.
  FlyNN model = paper_model(1, 2, 1);
  ClassCounts counts(1, 2);
  counts.values() = {3, 0};
  counts.rows_per_class() = {2};  // sums to 3 ≠ 2 × 1, but the count check comes first
  model.set_counts(counts);
  EXPECT_TRUE(test::contains(error_of(io::serialize_model(model)),
                             {"count of 3 at cell 0, more than its 2 rows"}));
  counts.values() = {2, 0};
  model.set_counts(counts);
  EXPECT_EQ(error_of(io::serialize_model(model)), "");
}

TEST(ModelBounds, HugeCountsNeedNoHugeTables) {
  // One count of 2^28, consistent with 2^28 rows: the file is valid, and scoring it must
  // not allocate a table of 2^28 powers (it used to take 2.1 GB and 13 s).
  FlyNN model = paper_model(1, 2, 1);
  ClassCounts counts(1, 2);
  counts.values() = {1u << 28, 0};
  counts.rows_per_class() = {1u << 28};
  model.set_counts(counts);
  const FlyNN back = io::deserialize_model(io::serialize_model(model), "m", 1);
  const Dataset q = test::blobs(1, 3, 6, 2);
  EXPECT_EQ(back.predict(q).size(), 3u);
  EXPECT_EQ(back.counts().values()[0], 1u << 28);
}

TEST(ModelBounds, TheCountTableIsEstimatedBeforeItIsAllocated) {
  const std::string bytes = io::serialize_model(paper_model(3, 300, 8));
  // 3 × 300 counts × 4 bytes = 3600 bytes.
  EXPECT_TRUE(test::contains(error_of(bytes, 3599),
                             {"3 classes × 300 cells of counts need 3600 bytes", "input size limit of 3599"}));
  EXPECT_EQ(error_of(bytes, 3600), "");
  detail::override_physical_memory_bytes(2048);
  const std::string e = error_of(bytes);
  detail::override_physical_memory_bytes(0);
  EXPECT_TRUE(test::contains(e, {"counts need 3600 bytes", "more than this machine's"})) << e;
}

TEST(ModelBounds, AModelFileIsReadOnlyAsFarAsItsHeaderSays) {
  EXPECT_TRUE(test::contains(test::error_of([] { io::load_model("/dev/zero", 1); }),
                             {"/dev/zero", "not a flynn model file"}));
  test::TempDir dir;
  const std::string path = dir.file("m.flynn");
  io::save_model(paper_model(), path);
  EXPECT_TRUE(test::contains(test::error_of([&] { io::load_model(path, 1, 100); }),
                             {"m.flynn", "input size limit"}));
}

// The count stream's own deflate encoder (counts_deflate.hpp), read back by zlib's
// inflate inside parse_model: runs of every length around the match limits (1..3, 258,
// 259, 260, 516, ...), multi-byte varints, the largest count, runs of non-zero bytes.
TEST(ModelBounds, CountStreamRoundTripsEveryRunShape) {
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> values;
  const std::uint32_t specials[] = {0, 1, 2, 127, 128, 255, 256, 16383, 16384, 4294967295u};
  for (std::uint32_t len : {1u, 2u, 3u, 4u, 257u, 258u, 259u, 260u, 261u, 516u, 517u, 100000u})
    for (std::uint32_t v : specials) values.insert(values.end(), len % 7 == 0 ? 1 : len, v);
  for (int i = 0; i < 20000; ++i) values.push_back(rng() % 3 ? 0 : static_cast<std::uint32_t>(rng() >> (rng() % 64)));
  const std::uint32_t m = 1000;
  values.resize((values.size() + m - 1) / m * m, 0);
  FlyNN model = paper_model(1, m, 8);
  Provenance dp;  // DP counts carry no row-sum rule, so any values are a valid model
  dp.differentially_private = true;
  dp.epsilon = 1;
  dp.dp_T = 1;
  dp.dp_parties = 1;
  model.set_provenance(dp);
  const std::size_t L = values.size() / m;
  std::vector<std::string> names;
  // fmt: GCC 12's -Wrestrict misfires on "c" + string&& (and on std::string("c") + it).
  for (std::size_t l = 0; l < L; ++l) names.push_back(fmt::format("c{}", l));
  FlyNN wide(model.config(), LabelSet(names), ClassCounts(L, m, values), 1);
  wide.set_provenance(dp);
  const io::ModelContents mc = io::parse_model(io::serialize_model(wide), "m");
  EXPECT_EQ(mc.counts.values(), values);
}

// Whatever training writes, the loader reads back: random configurations (every variant,
// binary and decaying filters, DP provenance) and awkward labels.
TEST(ModelBounds, RoundTripOverRandomConfigurationsAndLabels) {
  std::mt19937_64 rng(20261201);
  const char* variants[] = {"paper", "sign", "z", "zsign", "zsign-q", "thermo", "thermo-sign"};
  const std::string awkward[] = {"a,b", " lead", "\"quoted\"", "ünïcödé", "1",
                                 "-0", std::string(65530, 'x'), "#", "%", "{", "?"};
  for (int round = 0; round < 40; ++round) {
    const std::size_t classes = 1 + rng() % 5, d = 1 + rng() % 12;
    Dataset data = test::blobs(classes, 3 + rng() % 10, d, rng());
    std::vector<std::string> names;
    for (std::size_t l = 0; l < classes; ++l)
      names.push_back(awkward[rng() % std::size(awkward)] + std::to_string(l));
    data.classes = LabelSet(names);
    HyperParams p;
    p.variant = parse_variant(variants[rng() % std::size(variants)]);
    p.m = 2 + rng() % 700;
    p.rho = 1 + rng() % (*p.m - 1);
    p.gamma = (rng() % 2) ? 0.0 : 0.9;
    p.seed = rng();
    FlyNN model(p.resolve(static_cast<std::uint32_t>(d), classes), data.classes, 1);
    model.fit(data);
    if (rng() % 4 == 0) {
      Provenance dp;
      dp.differentially_private = true;
      dp.epsilon = 0.5 + (rng() % 100);
      dp.dp_T = 1 + rng() % 1000;
      dp.dp_parties = 1 + rng() % 8;
      model.set_provenance(dp);
    }
    const std::string bytes = io::serialize_model(model);
    SCOPED_TRACE(model.config().describe());
    const FlyNN back = io::deserialize_model(bytes, "m", 1);
    EXPECT_EQ(back.config(), model.config());
    EXPECT_EQ(back.labels(), model.labels());
    EXPECT_EQ(back.counts(), model.counts());
    EXPECT_EQ(back.provenance(), model.provenance());
    EXPECT_EQ(io::serialize_model(back), bytes);
    EXPECT_EQ(back.predict(data), model.predict(data));
  }
}

}  // namespace
}  // namespace flynn
