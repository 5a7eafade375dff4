#include "flynn/harness/plot.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/harness/layers.hpp"

#ifndef FLYNN_PLOT_SCRIPT_DIR
#define FLYNN_PLOT_SCRIPT_DIR ""
#endif
#ifndef FLYNN_PLOT_INSTALL_DIR
#define FLYNN_PLOT_INSTALL_DIR ""
#endif
#ifndef FLYNN_PLOT_INSTALL_RELDIR
#define FLYNN_PLOT_INSTALL_RELDIR ""
#endif

namespace flynn::harness {

namespace fs = std::filesystem;

namespace {

struct ChildResult {
  int status = -1;     // waitpid status
  std::string stderr_text;
};

// Runs argv[0] (PATH lookup) with stdout discarded and stderr collected through a pipe.
// fork + exec rather than std::system: arguments need no shell quoting, and the error text
// needs no temporary file.
ChildResult run_child(const std::vector<std::string>& argv) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    throw Error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::dup2(pipefd[1], STDERR_FILENO);
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, STDOUT_FILENO);
    ::execvp(cargv[0], cargv.data());
    static const char msg[] = "cannot execute the plot interpreter\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(pipefd[1]);
  ChildResult r;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n > 0) {
      r.stderr_text.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(pipefd[0]);
  while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
  }
  return r;
}

bool succeeded(const ChildResult& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

}  // namespace

std::string plot_python() {
  if (const char* env = std::getenv("FLYNN_PYTHON")) return env;
  if (fs::exists("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

bool matplotlib_available() {
  try {
    return succeeded(run_child({plot_python(), "-c", "import matplotlib"}));
  } catch (const Error&) {
    return false;
  }
}

std::string plot_script_dir(const std::string& script) {
  std::vector<std::string> places;
  if (const char* env = std::getenv("FLYNN_PLOT_DIR"); env && *env) places.emplace_back(env);
  places.emplace_back(FLYNN_PLOT_SCRIPT_DIR);
  places.emplace_back(FLYNN_PLOT_INSTALL_DIR);
  // The same folder relative to the running program (<prefix>/bin/flynn), for an install
  // tree moved or installed with --prefix after configuring.
  std::error_code exe_ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", exe_ec);
  if (!exe_ec && *FLYNN_PLOT_INSTALL_RELDIR)
    places.push_back((exe.parent_path().parent_path() / FLYNN_PLOT_INSTALL_RELDIR).string());
  std::string searched;
  for (const std::string& dir : places) {
    if (dir.empty()) continue;
    std::error_code ec;
    if (fs::is_regular_file(fs::path(dir) / script, ec)) return dir;
    searched += (searched.empty() ? "" : ", ") + dir;
  }
  throw Error(fmt::format("plot script {} not found (searched $FLYNN_PLOT_DIR and: {})", script, searched));
}

void run_plot_script(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {plot_python(), (fs::path(plot_script_dir(script)) / script).string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const ChildResult r = run_child(argv);
  if (!succeeded(r))
    throw Error(fmt::format("plotting with {} {} failed: {}", plot_python(), script, r.stderr_text));
}

}  // namespace flynn::harness
