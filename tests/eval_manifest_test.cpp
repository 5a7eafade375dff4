// MANIFEST.tsv reading: required columns, clear errors, data-file lookup, selection by
// did / name / id; and the real suite's manifest when it is present.
#include <gtest/gtest.h>

#include <filesystem>

#include "flynn/error.hpp"
#include "flynn/harness/manifest.hpp"
#include "test_support.hpp"

namespace flynn::harness {
namespace {

std::string error_of(const std::string& dir) {
  try {
    read_manifest(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(EvalManifest, ReadsEntriesAndFindsFiles) {
  test::TempDir dir;
  test::write_text(dir.file("MANIFEST.tsv"),
                   "did\tname\tL\tn\td\tsource\tsha256\tnotes\n"
                   "12\tmfeat-factors\t10\t2000\t217\tuci\tabc\t[A] note\n"
                   "7\tother\t2\t100\t5\r\n"   // CRLF, optional columns missing
                   "\n"
                   "9\tmissing\t2\t50\t3\tx\ty\tz\n");
  test::write_text(dir.file("12_mfeat-factors.csv.gz"), "x");
  test::write_text(dir.file("7_other.csv"), "x");
  const Manifest m = read_manifest(dir.path().string());
  ASSERT_EQ(m.entries.size(), 3u);
  EXPECT_EQ(m.entries[0].id(), "12_mfeat-factors");
  EXPECT_EQ(m.entries[0].classes, 10u);
  EXPECT_EQ(m.entries[0].rows, 2000u);
  EXPECT_EQ(m.entries[0].features(), 216u);
  EXPECT_EQ(m.entries[0].notes, "[A] note");
  EXPECT_EQ(std::filesystem::path(m.entries[0].path).filename(), "12_mfeat-factors.csv.gz");
  EXPECT_EQ(std::filesystem::path(m.entries[1].path).filename(), "7_other.csv");
  EXPECT_EQ(m.entries[1].source, "");
  EXPECT_EQ(m.entries[2].path, "");  // reported as missing by the caller, not an error here
  EXPECT_EQ(m.entries[2].line, 5u);

  EXPECT_EQ(select_entries(m, "").size(), 3u);
  const auto pick = select_entries(m, "other, 12");
  ASSERT_EQ(pick.size(), 2u);
  EXPECT_EQ(pick[0].did, "12");  // manifest order, not list order
  EXPECT_EQ(select_entries(m, "9_missing").size(), 1u);
  try {
    select_entries(m, "other,nope,zzz");
    FAIL() << "unknown names must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nope, zzz"), std::string::npos) << e.what();
  }
}

TEST(EvalManifest, ClearErrors) {
  test::TempDir dir;
  EXPECT_NE(error_of(dir.path().string()).find("MANIFEST.tsv: not found"), std::string::npos);
  EXPECT_NE(error_of(dir.file("nowhere")).find("does not exist"), std::string::npos);
  test::write_text(dir.file("MANIFEST.tsv"), "did\tname\tL\tn\n1\ta\t2\t3\n");
  EXPECT_NE(error_of(dir.path().string()).find("no 'd' column"), std::string::npos);
  test::write_text(dir.file("MANIFEST.tsv"), "did\tname\tL\tn\td\n1\ta\t2\tmany\t4\n");
  const std::string bad = error_of(dir.path().string());
  EXPECT_NE(bad.find("MANIFEST.tsv:2"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'many'"), std::string::npos) << bad;
  test::write_text(dir.file("MANIFEST.tsv"), "did\tname\tL\tn\td\n1\ta\t2\n");
  EXPECT_NE(error_of(dir.path().string()).find("fields"), std::string::npos);
  test::write_text(dir.file("MANIFEST.tsv"), "did\tname\tL\tn\td\n");
  EXPECT_NE(error_of(dir.path().string()).find("lists no dataset"), std::string::npos);
}

TEST(EvalManifest, TheSharedSuite) {
  const std::string dir = test::openml_dir();
  if (dir.empty()) GTEST_SKIP() << "../shared/data/openml not present";
  const Manifest m = read_manifest(dir);
  EXPECT_EQ(m.entries.size(), 60u);
  for (const auto& e : m.entries) {
    EXPECT_FALSE(e.path.empty()) << e.id();
    EXPECT_GE(e.classes, 2u);
    EXPECT_GE(e.rows, 1000u);
    EXPECT_GE(e.features(), 20u);
  }
  // Names repeat (binarised versions): a name selects every entry that has it.
  EXPECT_EQ(select_entries(m, "mfeat-fourier").size(), 2u);
}

}  // namespace
}  // namespace flynn::harness
