#include "cli_federation.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli_support.hpp"
#include "flynn/federated/split.hpp"

namespace flynn::test {

using Clock = std::chrono::steady_clock;

// ---- processes --------------------------------------------------------------------------

Process::Process(const std::vector<std::string>& args, const std::string& out, const std::string& err)
    : out_(out), err_(err) {
  pid_ = ::fork();
  if (pid_ == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> argv;
    std::string exe = cli_path();
    argv.push_back(exe.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
}

Process::~Process() {
  if (pid_ > 0 && !done_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::optional<int> Process::poll() {
  if (done_) return code_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  done_ = true;
  code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return code_;
}

int Process::wait(double seconds) {
  if (done_) return code_;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    if (const auto code = poll()) return *code;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  done_ = true;
  code_ = -1;
  return code_;
}

void Process::kill_now() { ::kill(pid_, SIGKILL); }
std::string Process::out() const { return read_text(out_); }
std::string Process::err() const { return read_text(err_); }

// ---- a federation ------------------------------------------------------------------------

Federation::Federation(int parties, const std::string& split, std::size_t per_class) {
  pki = dir.file("pki");
  std::vector<std::string> names = {"server"};
  for (int p = 0; p < parties; ++p) names.push_back(party_name(p));
  names.push_back("mallory");  // a valid certificate whose name is not on --allow lists
  make_pki(pki, names);
  const Dataset data = blobs(3, per_class, 5, 11);
  labels = "c0,c1,c2";
  const auto rows = federated::split_rows(data.labels, data.classes.size(), parties,
                                          federated::SplitSpec::parse(split), 3);
  std::ofstream all(dir.file("pooled.csv"));
  for (int p = 0; p < parties; ++p) {
    shards.push_back(dir.file(fmt::format("shard{}.csv", p)));
    std::ofstream f(shards.back());
    for (std::size_t r : rows[p]) {
      std::string line;
      for (std::size_t j = 0; j < data.n_features; ++j) line += fmt::format("{},", data.row(r)[j]);
      line += data.classes.name(data.labels[r]) + "\n";
      f << line;
      all << line;
    }
  }
  pooled = dir.file("pooled.csv");
}

std::string Federation::cert(const std::string& name, const std::string& which) const {
  return (which.empty() ? pki : which) + "/" + name;
}

std::unique_ptr<Process> Federation::serve(int parties, const std::vector<std::string>& extra, int* port) {
  std::vector<std::string> args = {"federated", "serve", "--listen", "127.0.0.1:0", "--parties",
                                   std::to_string(parties), "--ca", pki + "/ca.pem", "--cert",
                                   pki + "/server.pem", "--key", pki + "/server.key", "--labels",
                                   labels, "--m", "256", "--rho", "8", "--seed", "7"};
  args.insert(args.end(), extra.begin(), extra.end());
  // Fresh log files for every coordinator, so a second one is never read as the first.
  ++serves;
  serve_err = dir.file(fmt::format("serve{}.err", serves));
  auto p = std::make_unique<Process>(args, dir.file(fmt::format("serve{}.out", serves)), serve_err);
  const std::string text = wait_for_text(serve_err, "(port ", 20);
  const auto at = text.find("(port ");
  *port = at == std::string::npos ? 0 : std::stoi(text.substr(at + 6));
  return p;
}

std::unique_ptr<Process> Federation::join(int port, int p, const std::string& name, const std::string& model,
                                          const std::vector<std::string>& extra,
                                          const std::string& pki_dir) const {
  const std::string d = pki_dir.empty() ? pki : pki_dir;
  std::vector<std::string> args = {"federated", "join", "--server", fmt::format("127.0.0.1:{}", port),
                                   "--ca", d + "/ca.pem", "--cert", d + "/" + name + ".pem",
                                   "--key", d + "/" + name + ".key", "--data", shards[p],
                                   "--model", model, "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<Process>(args, dir.file(fmt::format("join{}.out", p)),
                                   dir.file(fmt::format("join{}.err", p)));
}

// ---- a whole CLI federation through the shell ----------------------------------------------

CliFederation run_cli_federation(const std::string& dir, const std::string& pki, const std::string& serve_flags,
                                 const std::vector<std::string>& join_flags, const std::string& tag) {
  const std::size_t n = join_flags.size();
  std::string script = fmt::format(
      "cd '{0}'; F='{1}'; "
      "( timeout 150 \"$F\" federated serve --listen 127.0.0.1:0 --parties {2} --ca {3}/ca.pem "
      "--cert {3}/server.pem --key {3}/server.key {4} > {5}.serve.out 2> {5}.serve.err; "
      "echo $? > {5}.serve.rc ) & "
      "port=; for i in $(seq 300); do "
      "port=$(sed -n 's/.*(port \\([0-9][0-9]*\\)).*/\\1/p' {5}.serve.err | head -n1); "
      "[ -n \"$port\" ] && break; sleep 0.1; done; ",
      dir, cli_path(), n, pki, serve_flags, tag);
  for (std::size_t p = 0; p < n; ++p)
    script += fmt::format(
        "( timeout 120 \"$F\" federated join --server 127.0.0.1:$port --ca {0}/ca.pem --cert "
        "{0}/party{1}.pem --key {0}/party{1}.key {2} > {3}.join{1}.out 2> {3}.join{1}.err; "
        "echo $? > {3}.join{1}.rc ) & ",
        pki, p, join_flags[p], tag);
  script += "wait";
  run_shell(script);
  auto text = [&](const std::string& name) {
    const std::string path = dir + "/" + name;
    return std::filesystem::exists(path) ? read_text(path) : std::string();
  };
  auto result = [&](const std::string& base) {
    CommandResult r;
    const std::string rc = text(base + ".rc");
    r.exit_code = rc.empty() ? -1 : std::stoi(rc);
    r.out = text(base + ".out");
    r.err = text(base + ".err");
    return r;
  };
  CliFederation f;
  f.serve = result(tag + ".serve");
  for (std::size_t p = 0; p < n; ++p) f.joins.push_back(result(fmt::format("{}.join{}", tag, p)));
  return f;
}

}  // namespace flynn::test
