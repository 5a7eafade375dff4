// Plot scripts are files found in $FLYNN_PLOT_DIR, the source tree or the install tree, and
// run without a shell: arguments arrive verbatim, a failing script's stderr becomes the error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "flynn/error.hpp"
#include "flynn/harness/plot.hpp"
#include "test_support.hpp"

namespace flynn::harness {
namespace {

namespace fs = std::filesystem;

// Sets $FLYNN_PLOT_DIR for one test.
class PlotDirEnv {
 public:
  explicit PlotDirEnv(const std::string& dir) { ::setenv("FLYNN_PLOT_DIR", dir.c_str(), 1); }
  ~PlotDirEnv() { ::unsetenv("FLYNN_PLOT_DIR"); }
};

TEST(PlotScripts, TheStudiesScriptsAreInTheSourceTree) {
  ::unsetenv("FLYNN_PLOT_DIR");
  for (const char* s : {"figure1_scatter.py", "privacy.py", "scaling.py"})
    EXPECT_EQ(fs::path(plot_script_dir(s)), fs::path(FLYNN_SOURCE_DIR) / "scripts" / "plots") << s;
}

TEST(PlotScripts, EnvironmentFolderComesFirstAndArgumentsPassVerbatim) {
  if (!fs::exists(plot_python()) && plot_python() != "python3") GTEST_SKIP() << "no Python";
  test::TempDir dir;
  const std::string out = (dir.path() / "args.txt").string();
  std::ofstream(dir.path() / "scaling.py") << "import sys\nopen(sys.argv[1], 'w').write('|'.join(sys.argv[2:]))\n";
  PlotDirEnv env(dir.path().string());
  EXPECT_EQ(plot_script_dir("scaling.py"), dir.path().string());
  // The source tree still serves the scripts the folder does not have.
  EXPECT_EQ(fs::path(plot_script_dir("privacy.py")), fs::path(FLYNN_SOURCE_DIR) / "scripts" / "plots");
  run_plot_script("scaling.py", {out, "it's $HOME", "a b;c", ""});
  EXPECT_EQ(test::read_text(out), "it's $HOME|a b;c|");
}

TEST(PlotScripts, FailuresAreErrorsWithTheScriptsMessage) {
  test::TempDir dir;
  std::ofstream(dir.path() / "broken.py") << "import sys\nsys.stderr.write('no such column: xyz')\nsys.exit(3)\n";
  PlotDirEnv env(dir.path().string());
  try {
    run_plot_script("broken.py", {});
    FAIL() << "a failing script was not an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such column: xyz"), std::string::npos) << e.what();
  }
  try {
    run_plot_script("absent.py", {});
    FAIL() << "a missing script was not an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("absent.py"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flynn::harness
