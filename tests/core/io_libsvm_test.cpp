// LIBSVM / svmlight loader.
#include <gtest/gtest.h>

#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

using flynn::Dataset;
using flynn::io::LoadOptions;
using flynn::test::contains;
using flynn::test::error_of;

Dataset svm(std::string_view text, const LoadOptions& o = {}) {
  return flynn::io::parse_libsvm(text, o, "a1a.svm");
}

std::string svm_error(std::string_view text, const LoadOptions& o = {}) {
  return error_of([&] { svm(text, o); });
}

TEST(IoLibsvm, BasicSparseRows) {
  const Dataset d = svm("+1 1:0.5 3:2\n-1 2:1\n+1\n");
  EXPECT_EQ(d.source, "a1a.svm");
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_EQ(d.n_features, 3u);
  EXPECT_EQ(d.features, (std::vector<float>{0.5f, 0, 2, 0, 1, 0, 0, 0, 0}));
  ASSERT_TRUE(d.has_labels);
  EXPECT_EQ(d.classes.joined(), "-1,1");
  EXPECT_EQ(d.labels, (std::vector<std::uint32_t>{1, 0, 1}));
  EXPECT_EQ(d.row_origin, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(IoLibsvm, CommentsQidTabsCrlfAndBlankLines) {
  const Dataset d = svm("# header comment\r\n3 qid:1 1:1\t2:2 # trailing\r\n\n  \n1 qid:2 2:5\r\n");
  EXPECT_EQ(d.n_rows, 2u);
  EXPECT_EQ(d.features, (std::vector<float>{1, 2, 0, 5}));
  EXPECT_EQ(d.classes.joined(), "1,3");
  EXPECT_EQ(d.row_origin, (std::vector<std::uint64_t>{2, 5}));
}

TEST(IoLibsvm, IntegerLabelsAreCanonicalOthersVerbatim) {
  EXPECT_EQ(svm("+1 1:1\n1 1:2\n01 1:3\n-1 1:4\n").classes.joined(), "-1,1");
  // Every format normalises integer-valued spellings ("1.0" is class "1", as in CSV).
  EXPECT_EQ(svm("cat 1:1\ndog 1:2\n1.0 1:3\n").classes.joined(), "1,cat,dog");
  EXPECT_EQ(svm("1.5 1:1\n1.0 1:2\n").classes.joined(), "1,1.5");
}

TEST(IoLibsvm, ExpectedFeaturesBoundsIndices) {
  LoadOptions o;
  o.expected_features = 5;
  const Dataset d = svm("1 2:1\n0 1:1\n", o);
  EXPECT_EQ(d.n_features, 5u);
  EXPECT_TRUE(contains(svm_error("1 2:1\n0 6:1\n", o),
                       {"a1a.svm:2:2: feature index 6 exceeds the model's 5 features"}));
}

TEST(IoLibsvm, IndexErrors) {
  EXPECT_TRUE(contains(svm_error("1 1:1 3:1 2:1\n"),
                       {"a1a.svm:1:4: feature index 2 after 3", "ascending"}));
  EXPECT_TRUE(
      contains(svm_error("1 1:1\n1 3:1 3:2\n"), {"a1a.svm:2:3: feature index 3 is repeated"}));
  EXPECT_TRUE(
      contains(svm_error("1 0:1\n"), {"a1a.svm:1:2: feature index 0: indices are 1-based"}));
  EXPECT_TRUE(contains(svm_error("1 x:1\n"), {"a1a.svm:1:2: 'x' is not a feature index"}));
  EXPECT_TRUE(contains(svm_error("1 -3:1\n"), {"a1a.svm:1:2: '-3' is not a feature index"}));
  EXPECT_TRUE(contains(svm_error("1 5\n"), {"a1a.svm:1:2: '5' is not an index:value pair"}));
  EXPECT_TRUE(
      contains(svm_error("1 99999999999:1\n"), {"a1a.svm:1:2: feature index", "too large"}));
}

TEST(IoLibsvm, ValueErrors) {
  EXPECT_TRUE(contains(svm_error("1 1:1\n2 1:abc\n"), {"a1a.svm:2:2: 'abc' is not a number"}));
  EXPECT_TRUE(contains(svm_error("1 1:nan\n"), {"a1a.svm:1:2: NaN is not allowed"}));
  EXPECT_TRUE(contains(svm_error("1 1:1 2:-inf\n"), {"a1a.svm:1:3: infinity"}));
  EXPECT_TRUE(contains(svm_error("1 1:\n"), {"a1a.svm:1:2: empty field"}));
}

TEST(IoLibsvm, MissingLabelEmptyAndDegenerateFiles) {
  EXPECT_TRUE(contains(svm_error("1 1:1\n2:3 4:5\n"), {"a1a.svm:2:1: missing label"}));
  EXPECT_TRUE(contains(svm_error(""), {"a1a.svm: empty file"}));
  EXPECT_TRUE(contains(svm_error("# nothing\n"), {"a1a.svm: no data rows"}));
  EXPECT_TRUE(contains(svm_error("1\n2\n"), {"a1a.svm: no feature in any row"}));
}

TEST(IoLibsvm, HugeIndexIsAnErrorNotAHugeAllocation) {
  LoadOptions o;
  o.max_values = 1 << 20;
  EXPECT_TRUE(contains(svm_error("1 1:1 4000000000:1\n", o), {"a1a.svm:", "too large to load"}));
}

TEST(IoLibsvm, LoadDatasetByExtension) {
  flynn::test::TempDir dir;
  for (const char* name : {"d.libsvm", "d.svm", "d.svmlight", "d.svm.gz"}) {
    const std::string text = "1 1:1\n-1 2:1\n";
    const std::string path = dir.file(name);
    flynn::test::write_text(
        path, std::string(name).ends_with(".gz") ? flynn::test::gzip_bytes(text) : text);
    const Dataset d = flynn::io::load_dataset(path);
    EXPECT_EQ(d.n_features, 2u) << name;
    EXPECT_EQ(d.classes.joined(), "-1,1") << name;
  }
}

}  // namespace
