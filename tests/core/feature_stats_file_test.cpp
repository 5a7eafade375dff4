// The public standardisation statistics file (--feature-stats, io/feature_stats_file.hpp):
// two rows of centres and scales, and every other shape an error naming the file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/io/feature_stats_file.hpp"

namespace flynn {
namespace {

std::string error_of(const std::string& text) {
  try {
    io::parse_feature_stats(text, "s.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FeatureStatsFile, TwoRowsOfCentresAndScales) {
  const FeatureStats s = io::parse_feature_stats("0.5,-1,3\n2,0.25,1\n", "s.csv");
  EXPECT_EQ(s.mean, (std::vector<float>{0.5f, -1.0f, 3.0f}));
  EXPECT_EQ(s.scale, (std::vector<float>{2.0f, 0.25f, 1.0f}));
  // A header of names and another delimiter are fine.
  EXPECT_EQ(io::parse_feature_stats("a;b;c\n0.5;-1;3\n2;0.25;1\n", "s.csv"), s);
  EXPECT_EQ(io::feature_stats_digest(s), io::feature_stats_digest(io::parse_feature_stats("0.5,-1,3\n2,.25,1\n", "t")));
  EXPECT_NE(io::feature_stats_digest(s), io::feature_stats_digest(io::parse_feature_stats("0.5,-1,3\n2,0.5,1\n", "t")));
}

TEST(FeatureStatsFile, EveryOtherShapeIsAnErrorNamingTheFile) {
  EXPECT_NE(error_of("1,2\n").find("exactly 2 rows"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,4\n5,6\n").find("exactly 2 rows"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,0\n").find("scale of feature 2"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,-1\n").find("positive"), std::string::npos);
  EXPECT_NE(error_of("1,\n3,1\n").find("s.csv"), std::string::npos);  // missing centre
  EXPECT_NE(error_of("1,2\n3\n").find("s.csv"), std::string::npos);   // ragged
  EXPECT_NE(error_of("").find("s.csv"), std::string::npos);
  EXPECT_NE(error_of("x,y\nred,2\nblue,3\n").find("s.csv"), std::string::npos);
}

}  // namespace
}  // namespace flynn
