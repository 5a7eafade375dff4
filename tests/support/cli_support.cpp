#include "cli_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace flynn::test {

std::string cli_path() { return FLYNN_CLI_PATH; }

CommandResult run_cli(const std::string& args) { return run_shell(cli_path() + " " + args); }

void expect_clean_error(const CommandResult& r, const std::string& needle) {
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_LT(r.exit_code, 128) << "crashed: " << r.err;
  EXPECT_NE(r.err.find("flynn: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace flynn::test
