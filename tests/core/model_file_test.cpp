// Model files: round trip, byte-identical re-save, and clear errors for truncated,
// corrupted, foreign and future-version files; atomic writes.
#include <gtest/gtest.h>

#include <zlib.h>

#include <filesystem>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

FlyNN trained_model(std::uint64_t seed = 5489) {
  const Dataset data = test::blobs(3, 60, 8, seed);
  HyperParams p;
  p.seed = seed;
  p.m = 500;
  p.rho = 12;
  p.variant = Variant{};  // the format-1 file (variants_test.cpp covers format 2)
  FlyNN model(p.resolve(8, 3), data.classes, 1);
  model.fit(data);
  return model;
}

std::string error_of(const std::string& bytes) {
  try {
    io::parse_model(bytes, "m.flynn");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelFile, RoundTripKeepsEverything) {
  const FlyNN model = trained_model();
  test::TempDir dir;
  const std::string path = dir.file("m.flynn");
  io::save_model(model, path);
  const FlyNN back = io::load_model(path, 1);
  EXPECT_EQ(back.config(), model.config());
  EXPECT_EQ(back.labels(), model.labels());
  EXPECT_EQ(back.counts(), model.counts());
  const Dataset q = test::blobs(3, 20, 8, 7);
  EXPECT_EQ(back.predict(q), model.predict(q));
  EXPECT_EQ(back.scores(q), model.scores(q));
}

TEST(ModelFile, ByteIdenticalResaveAndDeterministic) {
  const std::string a = io::serialize_model(trained_model());
  const std::string b = io::serialize_model(trained_model());
  EXPECT_EQ(a, b);
  const io::ModelContents mc = io::parse_model(a, "m");
  FlyNN again(mc.config, mc.labels, mc.counts, 1);
  again.set_calibration(mc.calibration);  // fitted by fit(), not derived from the counts
  EXPECT_EQ(io::serialize_model(again), a);
}

TEST(ModelFile, CompressesCounts) {
  const FlyNN model = trained_model();
  const std::string bytes = io::serialize_model(model);
  EXPECT_LT(bytes.size(), model.counts().values().size() * 4 / 4);
}

TEST(ModelFile, EveryTruncationIsAnError) {
  const std::string bytes = io::serialize_model(trained_model());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::string e = error_of(bytes.substr(0, n));
    ASSERT_FALSE(e.empty()) << "prefix of " << n << " bytes was accepted";
    ASSERT_NE(e.find("m.flynn"), std::string::npos) << e;
  }
}

TEST(ModelFile, EverySingleByteCorruptionIsAnError) {
  const std::string bytes = io::serialize_model(trained_model());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5A);
    ASSERT_FALSE(error_of(bad).empty()) << "corruption at byte " << i << " was accepted";
  }
  std::string bad = bytes;
  bad[bytes.size() / 2] ^= 1;
  EXPECT_NE(error_of(bad).find("checksum"), std::string::npos);
}

TEST(ModelFile, ForeignAndFutureFiles) {
  EXPECT_NE(error_of("hello, world, this is a csv file\n1,2,3\n").find("not a flynn model"),
            std::string::npos);
  EXPECT_NE(error_of("").find("not a flynn model"), std::string::npos);
  std::string future = io::serialize_model(trained_model());
  // One past the newest version this build reads (3, the one with the table section).
  future[8] = static_cast<char>(io::kModelFormatVersion + 1);
  const std::string e = error_of(future);
  EXPECT_NE(e.find("version " + std::to_string(io::kModelFormatVersion + 1)), std::string::npos) << e;
  EXPECT_NE(e.find("newer"), std::string::npos) << e;
}

// Relative filter scoring (the default of every variant but paper) is format 6: it round
// trips, and its one byte must say relative (format 6 is written for nothing else).
TEST(ModelFile, RelativeScoringIsFormatSixAndItsByteIsChecked) {
  const Dataset data = test::blobs(3, 60, 8, 9);
  HyperParams p;
  p.m = 500;
  p.rho = 12;
  p.variant = parse_variant("sign");
  FlyNN model(p.resolve(8, 3), data.classes, 1);
  ASSERT_EQ(model.config().filter_scoring, FilterScoring::Relative);
  model.fit(data);
  model.clear_temperature();  // format 6 is that of a model without a calibration
  const std::string bytes = io::serialize_model(model);
  EXPECT_EQ(bytes[8], 6);
  const io::ModelContents mc = io::parse_model(bytes, "m");
  EXPECT_EQ(mc.config, model.config());
  FlyNN back(mc.config, mc.labels, mc.counts, 1);
  EXPECT_EQ(io::serialize_model(back), bytes);
  EXPECT_EQ(back.scores(data), model.scores(data));
  // Every byte of the body set to 2, with a valid checksum: exactly one position is the
  // scoring byte, and its error names it.
  int named = 0;
  for (std::size_t i = 20; i + 4 < bytes.size(); ++i) {
    if (bytes[i] == 2) continue;
    std::string bad = bytes;
    bad[i] = 2;
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(bad.data()), static_cast<uInt>(bad.size() - 4));
    for (int k = 0; k < 4; ++k) bad[bad.size() - 4 + k] = static_cast<char>((crc >> (8 * k)) & 0xff);
    named += error_of(bad).find("filter scoring 2 is not 1") != std::string::npos;
  }
  EXPECT_EQ(named, 1);
}

// A model that records its missing-value policy but fitted no calibration (made from
// counts) is format 10 with the default calibration, and reads back as it was written.
TEST(ModelFile, AMissingValuePolicyWithoutACalibrationRoundTrips) {
  const Dataset data = test::blobs(3, 40, 6, 13);
  HyperParams p;
  p.m = 256;
  p.rho = 8;
  FlyNN model(p.resolve(6, 3), data.classes, 1);
  model.partial_fit(data);  // counts only: no calibration
  ASSERT_EQ(model.calibration().source, CalibrationSource::Default);
  model.set_missing_policy(MissingPolicy::Zero);
  const std::string bytes = io::serialize_model(model);
  EXPECT_EQ(bytes[8], 10);
  const FlyNN back = io::deserialize_model(bytes, "m");
  EXPECT_EQ(back.missing_policy(), std::optional<MissingPolicy>(MissingPolicy::Zero));
  EXPECT_EQ(back.calibration(), Calibration{});
  EXPECT_EQ(io::serialize_model(back), bytes);
}

TEST(ModelFile, TrailingGarbageIsAnError) {
  const std::string bytes = io::serialize_model(trained_model()) + "x";
  EXPECT_FALSE(error_of(bytes).empty());
}

TEST(ModelFile, MissingFileNamesThePath) {
  try {
    io::load_model("/nonexistent/dir/model.flynn");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.flynn"), std::string::npos);
  }
}

TEST(ModelFile, DifferentialPrivacyProvenanceRoundTrips) {
  FlyNN model = trained_model();
  Provenance p;
  p.differentially_private = true;
  p.epsilon = 1.5;
  p.dp_T = 300;
  p.dp_parties = 2;
  model.set_provenance(p);
  const io::ModelContents mc = io::parse_model(io::serialize_model(model), "m");
  EXPECT_EQ(mc.provenance, p);
}

TEST(AtomicFile, ReplacesAndLeavesNoTemporaries) {
  test::TempDir dir;
  const std::string path = dir.file("out.bin");
  io::write_file_atomic(path, std::string("first"));
  io::write_file_atomic(path, std::string("second"));
  EXPECT_EQ(test::read_text(path), "second");
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  EXPECT_THROW(io::write_file_atomic(dir.file("missing/sub/out.bin"), std::string("x")), Error);
  EXPECT_THROW(io::write_file_atomic(dir.path().string(), std::string("x")), Error);
}

}  // namespace
}  // namespace flynn
