// The CLI's hyper-parameter flags are the settings table's rows (flynn/settings_table.hpp;
// the table itself: tests/eval/settings_table_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"
#include "flynn/settings_table.hpp"

namespace flynn {
namespace {

// The CLI's flags are the table's rows: every command that trains lists every one.
TEST(SettingsFlags, EveryTrainingCommandHasEveryHyperParameterFlag) {
  for (const char* cmd : {"train", "eval", "federated train", "federated simulate"}) {
    const auto r = test::run_cli(std::string(cmd) + " --help");
    ASSERT_EQ(r.exit_code, 0) << cmd << r.err;
    for (const HyperParamField& f : hyper_param_fields())
      EXPECT_NE(r.out.find(std::string(f.flag) + " "), std::string::npos) << cmd << " " << f.flag;
  }
}

}  // namespace
}  // namespace flynn
