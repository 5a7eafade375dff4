// The model footprint estimate and the model-memory limit: what a model costs
// is known from its header, in saturating arithmetic, and a model file that claims more
// than it can justify is refused before its counts are inflated.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstring>
#include <limits>
#include <string>

#include "core/one_row_plan.hpp"
#include "flynn/classifier.hpp"
#include "flynn/detail/memory.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/model_footprint.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = KiB << 10, GiB = MiB << 10;

// Pretends this machine has `bytes` of memory for the lifetime of the object.
class FakeMemory {
 public:
  explicit FakeMemory(std::uint64_t bytes) { detail::override_physical_memory_bytes(bytes); }
  ~FakeMemory() { detail::override_physical_memory_bytes(0); }
};

FlyConfig paper_config(std::uint32_t d, std::uint32_t m, std::uint32_t s, double gamma = 0.5) {
  FlyConfig c;
  c.input_dim = d;
  c.m = m;
  c.s = s;
  c.rho = 8;
  c.gamma = gamma;
  c.seed = 1;
  c.variant = Variant{};
  return c;
}

TEST(ModelFootprint, PartsOfAPaperModel) {
  const FlyConfig c = paper_config(6, 300, 3);
  const ModelFootprint f = model_footprint(c, 3, ModelUse::Predict, 1);
  EXPECT_EQ(f.counts, 3u * 300 * 4);
  EXPECT_EQ(f.score_table, 300u * 3 * 8);          // γ^count in double
  EXPECT_EQ(f.lifting_matrix, 300u * 3 * (4 + 2));  // uint32 columns and their uint16 copy
  EXPECT_EQ(f.sparse_lists, 300u * 3 * 4 + (6 + 1) * 16);
  EXPECT_EQ(f.feature_state, 0u);
  EXPECT_EQ(f.training_counts, 0u);
  EXPECT_EQ(f.additions_per_row, 300u * 3);
  EXPECT_EQ(f.threads, 1);
  EXPECT_GT(f.thread_scratch, 300u * 4);  // at least the sparse path's activations
  EXPECT_EQ(f.one_row_plan, kernels::plan_bytes_bound(300, 3, 6));
  EXPECT_EQ(f.total(), f.counts + f.score_table + f.lifting_matrix + f.sparse_lists +
                           f.one_row_plan + f.thread_scratch);
  // Scratch is per thread; the model's own parts are not.
  const ModelFootprint f4 = model_footprint(c, 3, ModelUse::Predict, 4);
  EXPECT_EQ(f4.thread_scratch, 4 * f.thread_scratch);
  EXPECT_EQ(f4.lifting_matrix, f.lifting_matrix);
  EXPECT_NE(f4.describe().find("scratch of 4 threads"), std::string::npos) << f4.describe();
}

TEST(ModelFootprint, EachUseCountsWhatItBuilds) {
  const FlyConfig c = paper_config(6, 1000, 3);
  const ModelFootprint inspect = model_footprint(c, 5, ModelUse::Inspect, 8);
  EXPECT_EQ(inspect.total(), 5u * 1000 * 4);  // info decodes the counts and nothing else
  const ModelFootprint train = model_footprint(c, 5, ModelUse::Train, 3);
  EXPECT_EQ(train.score_table, 0u);                    // update and forget never score
  EXPECT_EQ(train.training_counts, 3u * 5 * 1000 * 4);  // one accumulator per thread
  // Binary filters (γ = 0) of at most 64 classes score with one 64-bit mask per unit.
  EXPECT_EQ(model_footprint(paper_config(6, 1000, 3, 0.0), 64, ModelUse::Predict, 1).score_table,
            1000u * 8);
  EXPECT_EQ(model_footprint(paper_config(6, 1000, 3, 0.0), 65, ModelUse::Predict, 1).score_table,
            1000u * 65 * 8);
  // Relative scores take the table at γ = 0 too.
  FlyConfig relative = paper_config(6, 1000, 3, 0.0);
  relative.filter_scoring = FilterScoring::Relative;
  EXPECT_EQ(model_footprint(relative, 64, ModelUse::Predict, 1).score_table, 1000u * 64 * 8);
}

TEST(ModelFootprint, WideColumnsHaveNoNarrowCopyAndDensifyNoSparseLists) {
  FlyConfig c = paper_config(70000, 1000, 3);
  EXPECT_EQ(model_footprint(c, 1, ModelUse::Predict, 1).lifting_matrix, 1000u * 3 * 4);
  c.preprocess = Preprocess::Densify;  // 131072 columns after padding, hashed densely
  const ModelFootprint f = model_footprint(c, 1, ModelUse::Predict, 1);
  EXPECT_EQ(f.sparse_lists, 0u);
  EXPECT_EQ(f.feature_state, 70000u);  // one sign per input column
}

TEST(ModelFootprint, DefaultShapesFitTheFloor) {
  // Fashion-MNIST with flynn's defaults: m = 131072, s = 64, zsign-q+paper, 10 classes.
  const FlyConfig fashion = HyperParams{}.resolve(784, 10);
  ASSERT_EQ(fashion.m, 131072u);
  ASSERT_TRUE(fashion.variant.paper_half);
  const ModelFootprint f = model_footprint(fashion, 10, ModelUse::Predict, 16);
  EXPECT_EQ(f.counts, 10u * 131072 * 4);
  EXPECT_EQ(f.score_table, 10u * 131072 * 8);
  // Both halves, all columns below 2^16; a signed half also keeps its unmirrored layout.
  // The second half is counted as it is when the statistics make it standardise
  // (paper_half_min_columns): signed, with its own encoder.
  ASSERT_EQ(fashion.paper_half_min_columns, Defaults::paper_half_min_columns);
  EXPECT_EQ(f.lifting_matrix, 2 * (65536u * 64 * 6 + 65536u * 64 * 2 + 65536u * 6));
  EXPECT_EQ(f.feature_state, 2 * 784u * 2 * 12);     // standardisation statistics, per half
  FlyConfig raw_half = fashion;
  raw_half.paper_half_min_columns = 0;  // the paper's raw half: unsigned, no encoder
  const ModelFootprint r = model_footprint(raw_half, 10, ModelUse::Predict, 16);
  EXPECT_EQ(r.lifting_matrix, 131072u * 64 * 6 + 65536u * 64 * 2 + 65536u * 6);
  EXPECT_EQ(r.feature_state, 784u * 2 * 12);
  EXPECT_LT(r.total(), f.total());
  EXPECT_LT(f.total(), 512 * MiB) << f.describe();
  FakeMemory machine(24 * GiB);
  EXPECT_LT(f.total(), default_model_memory_limit(1));  // whatever the file's size
}

TEST(ModelFootprint, TheDefaultLimitTellsALegitimateModelFromAnInflatedOne) {
  FakeMemory machine(24 * GiB);
  // A 2500-class model (10000 rows × 256 features, m = 65536): 2.2 MB on
  // disk, ~1.9 GiB to load and predict; a file a sixteenth of that size with the same
  // header does not hold what it declares.
  HyperParams p;
  p.m = 65536;
  const FlyConfig wide = p.resolve(256, 2500);
  const ModelFootprint f = model_footprint(wide, 2500, ModelUse::Predict, 2);
  EXPECT_GT(f.total(), GiB + GiB / 2);
  EXPECT_LT(f.total(), 2 * GiB);
  EXPECT_LE(f.total(), default_model_memory_limit(2200 * 1000));
  EXPECT_GT(f.total(), default_model_memory_limit(130 * 1000));
  // m = 2^26 with two classes, as a 130 KB file declares it.
  const FlyConfig crafted = paper_config(2, 1u << 26, 1);
  EXPECT_GT(model_footprint(crafted, 2, ModelUse::Predict, 2).total(),
            2 * default_model_memory_limit(130 * 1000));
}

TEST(ModelFootprint, TheDefaultLimitIsTheFileTermCappedByTheMachine) {
  {
    FakeMemory machine(64 * GiB);
    EXPECT_EQ(default_model_memory_limit(0), kModelMemoryFloor);
    EXPECT_EQ(default_model_memory_limit(MiB), kModelMemoryFloor + kModelMemoryPerFileByte * MiB);
    EXPECT_EQ(default_model_memory_limit(std::numeric_limits<std::uint64_t>::max()), 64 * GiB);
  }
  FakeMemory small(512 * MiB);
  EXPECT_EQ(default_model_memory_limit(0), 512 * MiB);
}

TEST(ModelFootprint, AbsurdHeadersSaturateInsteadOfWrapping) {
  FlyConfig c = paper_config(0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu);
  c.rho = 0xFFFFFFFFu;
  c.preprocess = Preprocess::Densify;
  const std::uint64_t L = std::uint64_t{1} << 40;
  const ModelFootprint f = model_footprint(c, L, ModelUse::Train, 1 << 30);
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(f.counts, kMax);            // 2^72 bytes
  EXPECT_EQ(f.training_counts, kMax);
  EXPECT_EQ(f.total(), kMax);
  EXPECT_EQ(f.additions_per_row, 0xFFFFFFFFull * 0xFFFFFFFFull);  // fits: 2^64 − 2^33 + 1
  EXPECT_NE(f.describe().find("PiB"), std::string::npos) << f.describe();
  // Every part is at least as large as in a smaller model of the same kind: no product
  // wrapped around to a small number.
  for (std::uint32_t m : {1u << 20, 1u << 31, 0xFFFFFFFFu}) {
    FlyConfig big = paper_config(1u << 30, m, 1u << 30);
    big.rho = m - 1;
    const ModelFootprint g = model_footprint(big, 1u << 20, ModelUse::Predict, 64);
    EXPECT_GE(g.lifting_matrix, std::uint64_t{m} * (1u << 30)) << m;
    EXPECT_GE(g.thread_scratch, std::uint64_t{m} * 4) << m;
    EXPECT_GE(g.total(), g.score_table) << m;
  }
  // And a huge estimate is refused, not accepted after wrapping.
  EXPECT_TRUE(test::contains(test::error_of([&] {
                               check_model_footprint(f, ModelUse::Train, GiB, 100, "m.flynn");
                             }),
                             {"m.flynn: the model (m = ", "PiB", "above the limit of 1.00 GiB"}));
}

TEST(ModelFootprint, TheRefusalNamesTheEstimateItsPartsAndTheLimit) {
  FakeMemory machine(24 * GiB);
  const ModelFootprint f = model_footprint(paper_config(2, 1u << 26, 1), 2, ModelUse::Predict, 2);
  const std::string by_default =
      test::error_of([&] { check_model_footprint(f, ModelUse::Predict, 0, 133120, "m.flynn"); });
  EXPECT_TRUE(test::contains(
      by_default, {"m.flynn: the model (m = 67108864, s = 1, 2 classes) needs an estimated ",
                   " GiB (counts 512.0 MiB, score table 1.00 GiB, "
                   "lifting matrix 384.0 MiB, sparse-row lists 256.0 MiB, one-row layout 1.53 GiB, "
                   "scratch of 2 threads",
                   "to load and predict, above the limit of 1.25 GiB",
                   "the default limit for a model file of 130.0 KiB: 1.00 GiB plus 2048 bytes per "
                   "byte of the file, at most this machine's 24.00 GiB; --max-model-memory SIZE "
                   "sets another"}))
      << by_default;
  const std::string given =
      test::error_of([&] { check_model_footprint(f, ModelUse::Train, GiB, 133120, "m.flynn"); });
  EXPECT_TRUE(test::contains(given, {"to load and train, above the limit of 1.00 GiB (--max-model-memory)"}))
      << given;
  EXPECT_NO_THROW(check_model_footprint(f, ModelUse::Predict, f.total(), 1, "m"));
}

// The loader applies the limit after the header and before the counts: a file whose
// count stream is damaged is refused by the estimate, not by the inflate that would follow.
TEST(ModelFootprint, TheLoaderChecksTheEstimateBeforeInflatingCounts) {
  const Dataset data = test::blobs(3, 20, 6, 11);
  HyperParams p;
  p.m = 300;
  p.rho = 8;
  p.variant = Variant{};
  FlyNN model(p.resolve(6, 3), data.classes, 1);
  model.fit(data);
  std::string bytes = io::serialize_model(model);
  const ModelFootprint need = model_footprint(model.config(), 3, ModelUse::Predict, 1);
  io::ModelMemoryLimit limit;  // the loader counts one thread's scratch
  limit.bytes = need.total();
  EXPECT_NO_THROW(io::parse_model(bytes, "m.flynn", io::kDefaultMaxInputBytes, limit));
  limit.bytes = need.total() - 1;
  EXPECT_TRUE(test::contains(
      test::error_of([&] { io::parse_model(bytes, "m.flynn", io::kDefaultMaxInputBytes, limit); }),
      {"m.flynn: the model (m = ", "(--max-model-memory)"}));
  EXPECT_TRUE(test::contains(
      test::error_of([&] { io::deserialize_model(bytes, "m.flynn", 1, io::kDefaultMaxInputBytes, limit); }),
      {"m.flynn: the model (m = ", "to load and predict"}));
  // Inspecting decodes the counts alone: 3600 bytes are enough.
  limit.use = ModelUse::Inspect;
  limit.bytes = 3 * 300 * 4;
  EXPECT_NO_THROW(io::parse_model(bytes, "m.flynn", io::kDefaultMaxInputBytes, limit));
  // Damage the count stream's first bytes (and fix the checksum): with room for the
  // model, inflate reports it; without, the estimate comes first.
  bytes[bytes.size() - 20] ^= 0x55;
  bytes[bytes.size() - 21] ^= 0x55;
  const auto crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size() - 4)));
  std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  limit.use = ModelUse::Predict;
  limit.bytes = need.total();
  const std::string damaged =
      test::error_of([&] { io::parse_model(bytes, "m.flynn", io::kDefaultMaxInputBytes, limit); });
  EXPECT_TRUE(test::contains(damaged, {"m.flynn: "}));  // corrupted, or counts that do not add up
  EXPECT_EQ(damaged.find("estimated"), std::string::npos) << damaged;
  limit.bytes = need.total() - 1;
  EXPECT_TRUE(test::contains(
      test::error_of([&] { io::parse_model(bytes, "m.flynn", io::kDefaultMaxInputBytes, limit); }),
      {"m.flynn: the model (m = "}));
}

}  // namespace
}  // namespace flynn
