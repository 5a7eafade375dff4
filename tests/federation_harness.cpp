#include "federation_harness.hpp"

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
#include <gtest/gtest.h>

#include "flynn/federated/split.hpp"

namespace flynn::test {

namespace fs = std::filesystem;
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
    std::string exe = FLYNN_CLI_PATH;
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

std::string wait_for_text(const std::string& path, const std::string& needle, double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    std::ifstream f(path);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (text.find(needle) != std::string::npos) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

// ---- certificates -------------------------------------------------------------------------

void make_pki(const std::string& dir, const std::vector<std::string>& names) {
  fs::create_directories(dir);
  // Extended key usage: serverAuth for the coordinator ("server"), clientAuth for parties.
  write_text(dir + "/server.cnf", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  write_text(dir + "/ext.cnf", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=clientAuth\n");
  std::string script = fmt::format(
      "set -e; cd '{}'; "
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=ca "
      "-keyout ca.key -out ca.pem -days 2 2>/dev/null; ",
      dir);
  for (const std::string& n : names)
    script += fmt::format(
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN={0} "
        "-keyout {0}.key -out {0}.csr 2>/dev/null; "
        "openssl x509 -req -in {0}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out {0}.pem "
        "-days 2 -extfile {1}.cnf 2>/dev/null; ",
        n, n == "server" ? "server" : "ext");
  const auto r = run_shell(script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

void make_crl(const std::string& dir, const std::vector<std::string>& revoked, const std::string& out,
              const std::string& extra) {
  write_text(dir + "/crl-ca.cnf",
             "[ ca ]\ndefault_ca = fed\n[ fed ]\ndatabase = crl-index.txt\ncrlnumber = "
             "crl-number\ndefault_md = sha256\ndefault_crl_days = 2\n");
  std::string script = fmt::format(
      "set -e; cd '{}'; rm -f crl-index.txt*; : > crl-index.txt; echo 01 > crl-number; ", dir);
  for (const std::string& n : revoked)
    script += fmt::format("openssl ca -config crl-ca.cnf -keyfile ca.key -cert ca.pem -revoke {}.pem "
                          "2>/dev/null; ", n);
  script += fmt::format("openssl ca -config crl-ca.cnf -keyfile ca.key -cert ca.pem -gencrl {} -out {} "
                        "2>/dev/null", extra, out);
  const auto r = run_shell(script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

std::string party_name(int p) { return fmt::format("party{:02d}", p); }

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

}  // namespace flynn::test
