#pragma once
// Running the flynn CLI built beside the tests (the CLI's tests only: the library's tests do
// not know where, or whether, the CLI is built).
#include <string>

#include "test_support.hpp"

namespace flynn::test {

/// The CLI executable this build made.
std::string cli_path();

/// Runs `flynn <args>` through /bin/sh; stdout and stderr are captured separately.
CommandResult run_cli(const std::string& args);

/// Checks the CLI's contract for a failure: a non-zero exit without a crash (no signal),
/// one line on stderr starting "flynn: error:" that contains `needle`.
void expect_clean_error(const CommandResult& r, const std::string& needle);

}  // namespace flynn::test
