#include "flynn/experiments/plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::experiments {

namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

fs::path temp_file(const std::string& suffix) {
  return fs::temp_directory_path() /
         fmt::format("flynn-{}-{}{}", static_cast<long>(::getpid()), std::rand(), suffix);
}

}  // namespace

std::string plot_python() {
  if (const char* env = std::getenv("FLYNN_PYTHON")) return env;
  if (fs::exists("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

bool matplotlib_available() {
  const std::string cmd = shell_quote(plot_python()) + " -c 'import matplotlib' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

void run_matplotlib(const std::string& script, const std::vector<std::string>& args) {
  const fs::path py = temp_file(".py"), err = temp_file(".err");
  {
    std::ofstream f(py);
    f << "import matplotlib\nmatplotlib.use('Agg')\n" << script;
  }
  std::string cmd = shell_quote(plot_python()) + " " + shell_quote(py.string());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>" + shell_quote(err.string());
  const int status = std::system(cmd.c_str());
  std::ostringstream msg;
  msg << std::ifstream(err).rdbuf();
  std::error_code ec;
  fs::remove(py, ec);
  fs::remove(err, ec);
  if (status != 0)
    throw Error(fmt::format("plotting with {} failed: {}", plot_python(), msg.str()));
}

}  // namespace flynn::experiments
