#pragma once
// An all-text table whose header line looks like data: the header decision's hard case,
// read by the loaders' tests (tests/core/io_header_decision_test.cpp) and the CLI's
// (tests/cli/header_decision_test.cpp).
#include <random>
#include <string>

namespace flynn::test {

// The nucleotide table (UCI promoters): 57 columns V2..V58 of a/c/g/t, then "class" (two
// classes), `rows` rows; with or without its header line.
inline std::string nucleotides(bool with_header, int rows = 106) {
  std::mt19937 rng(7);
  std::string s;
  if (with_header) {
    for (int j = 2; j <= 58; ++j) s += "\"V" + std::to_string(j) + "\",";
    s += "\"class\"\n";
  }
  const char* bases = "acgt";
  for (int r = 0; r < rows; ++r) {
    for (int j = 0; j < 57; ++j) s += std::string(1, bases[rng() % 4]) + ",";
    s += r % 2 ? "\"+\"\n" : "\"-\"\n";
  }
  return s;
}

}  // namespace flynn::test
