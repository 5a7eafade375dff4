// flynn federated trial: a whole cross-organisation federation on 127.0.0.1 in one command
// — provisioned kits, one `serve` and N `join` processes of this binary (mutual TLS, secure
// aggregation) on the user's table split N ways — then `train` on the whole table, and the
// models compared byte for byte.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/build_config.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/provision.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct TrialOptions {
  int parties = 3;
  std::string data, out, labels;
  double deadline = 60;
  std::uint64_t seed = 0;  ///< 0: drawn
  std::uint64_t central_seed = 0;  ///< tests only: another seed for central training (0: the same)
};

// One process of this binary, its stdout and stderr in files.
struct Child {
  std::string name, out, err;
  pid_t pid = -1;
  int status = -1;
};

Child spawn(const std::string& name, const std::vector<std::string>& args, const std::string& dir) {
  Child c{name, dir + "/" + name + ".out", dir + "/" + name + ".err"};
  std::vector<char*> argv;
  std::string self = fs::read_symlink("/proc/self/exe").string();
  argv.push_back(self.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  c.pid = ::fork();
  if (c.pid < 0) throw Error(fmt::format("cannot start the {} process: {}", name, std::strerror(errno)));
  if (c.pid == 0) {
    const int o = ::open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(127);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return c;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Waits for every child until `limit`; then kills those still running (a trial never hangs).
void wait_all(std::vector<Child>& children, Clock::time_point limit) {
  for (Child& c : children) {
    while (c.status == -1) {
      int st = 0;
      const pid_t r = ::waitpid(c.pid, &st, WNOHANG);
      if (r == c.pid) {
        c.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      } else if (Clock::now() > limit) {
        ::kill(c.pid, SIGKILL);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
}

// The port the coordinator bound ("listening on … (port N)" on its stderr), or 0.
int wait_for_port(const Child& serve, Clock::time_point limit) {
  while (Clock::now() < limit) {
    const std::string err = text_of(serve.err);
    const auto at = err.find("(port ");
    if (at != std::string::npos) return std::atoi(err.c_str() + at + 6);
    int st = 0;
    if (::waitpid(serve.pid, &st, WNOHANG) == serve.pid) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// The table's lines split into `parties` contiguous shards (each with the header, when the
// file has one), so the shards in rank order are the table in its order.
std::vector<std::string> split_table(const std::string& path, std::size_t rows, int parties) {
  std::istringstream in(io::read_file(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line + "\n");
  if (lines.size() != rows && lines.size() != rows + 1)
    throw Error(fmt::format("--data {}: the trial splits a CSV table with one row per line ({} rows, {} lines)",
                            path, rows, lines.size()));
  const std::string header = lines.size() == rows + 1 ? lines.front() : "";
  const std::size_t first = header.empty() ? 0 : 1;
  std::vector<std::string> shards(static_cast<std::size_t>(parties), header);
  for (std::size_t r = 0; r < rows; ++r) shards[r * static_cast<std::size_t>(parties) / rows] += lines[first + r];
  return shards;
}

std::string party_name(int p) { return fmt::format("party{:02d}", p + 1); }

std::string labels_of(const Dataset& data) {
  std::string out;
  for (std::size_t c = 0; c < data.classes.size(); ++c) out += (c ? "," : "") + data.classes.name(c);
  return out;
}

// Provisions the kits and writes the shards under `dir`; returns the label list.
std::string prepare(const TrialOptions& o, const std::string& dir) {
  const Dataset data = io::load_dataset(o.data);
  if (data.n_rows < static_cast<std::size_t>(o.parties))
    throw Error(fmt::format("--data {}: {} rows for {} parties", o.data, data.n_rows, o.parties));
  const std::vector<std::string> shards = split_table(o.data, data.n_rows, o.parties);
  federated::ProvisionRequest r;
  r.out = dir + "/kits";
  r.coordinator = "127.0.0.1:1";  // the coordinator listens on a free port; parties get --server
  for (int p = 0; p < o.parties; ++p) r.parties.push_back(party_name(p));
  r.min_parties = std::min(o.parties, 3);
  federated::provision(r);
  for (int p = 0; p < o.parties; ++p) {
    std::ofstream(fmt::format("{}/{}.csv", dir, party_name(p))) << shards[static_cast<std::size_t>(p)];
  }
  return o.labels.empty() ? labels_of(data) : o.labels;
}

// The report: what each process did, and whether the models equal central training's.
bool report(const std::vector<Child>& parties, const Child& serve, const Child& central, const std::string& dir,
            double seconds) {
  auto said = [](const Child& c) {
    std::string lines = text_of(c.out) + text_of(c.err), out;
    std::istringstream in(lines);
    for (std::string l; std::getline(in, l);) out += "    " + l + "\n";
    return out;
  };
  std::cout << fmt::format("coordinator (exit {}):\n{}", serve.status, said(serve));
  for (const Child& c : parties) std::cout << fmt::format("{} (exit {}):\n{}", c.name, c.status, said(c));
  const std::string want = text_of(dir + "/central.model");
  bool equal = central.status == 0 && serve.status == 0 && !want.empty();
  for (const Child& c : parties) equal = equal && c.status == 0 && text_of(dir + "/" + c.name + ".model") == want;
  std::cout << fmt::format("central training (exit {}): {} bytes\n", central.status, want.size());
  std::cout << fmt::format("{} parties, {:.1f} s: the federation's model {} central training's{}\n", parties.size(),
                           seconds, equal ? "equals" : "DIFFERS from",
                           equal ? " byte for byte" : " (see each process's output above)");
  return equal;
}

bool run_trial(const TrialOptions& o, const std::string& dir) {
  const auto t0 = Clock::now();
  const auto limit = t0 + std::chrono::milliseconds(static_cast<long>(o.deadline * 1000));
  const std::string labels = prepare(o, dir);
  const std::string deadline = fmt::format("{}", o.deadline);
  // One seed for the federation and central training (else party 0 draws one).
  const std::string seed = fmt::format("{}", o.seed ? o.seed : (std::uint64_t{std::random_device{}()} << 20) + 1);
  Child serve = spawn("coordinator",
                      {"federated", "serve", "--kit", dir + "/kits/coordinator", "--listen", "127.0.0.1:0",
                       "--labels", labels, "--deadline", deadline, "--seed", seed},
                      dir);
  const int port = wait_for_port(serve, limit);
  std::vector<Child> children;
  for (int p = 0; port > 0 && p < o.parties; ++p) {
    const std::string n = party_name(p);
    children.push_back(spawn(n,
                             {"federated", "join", "--kit", dir + "/kits/" + n, "--server",
                              fmt::format("127.0.0.1:{}", port), "--data", dir + "/" + n + ".csv", "--model",
                              dir + "/" + n + ".model", "--deadline", deadline, "--quiet"},
                             dir));
  }
  Child central = spawn("central", {"train", "--data", o.data, "--labels", labels, "--model", dir + "/central.model",
                                    "--seed", o.central_seed ? fmt::format("{}", o.central_seed) : seed, "--quiet"},
                        dir);
  children.push_back(serve);
  children.push_back(central);
  wait_all(children, limit);
  central = children.back();
  children.pop_back();
  serve = children.back();
  children.pop_back();
  return report(children, serve, central, dir, std::chrono::duration<double>(Clock::now() - t0).count());
}

void trial_command(const TrialOptions& o) {
  if (o.parties < 2 || o.parties > 32) throw Error(fmt::format("--parties {}: from 2 to 32", o.parties));
  std::string dir = o.out;
  if (dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "flynn-trial-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw Error(fmt::format("cannot make a temporary folder: {}", std::strerror(errno)));
    dir = pattern;
  } else if (fs::exists(dir) && !fs::is_empty(dir)) {
    throw Error(fmt::format("--out {}: exists and is not empty (the trial writes kits and tables there)", dir));
  } else {
    fs::create_directories(dir);
  }
  bool ok = false;
  try {
    ok = run_trial(o, dir);
  } catch (...) {
    if (o.out.empty()) fs::remove_all(dir);
    throw;
  }
  if (o.out.empty()) fs::remove_all(dir);
  else std::cout << fmt::format("kits, tables, outputs and models: {}\n", dir);
  if (!ok) throw Error("the trial federation did not produce central training's model");
}

void add_trial(CLI::App& app) {
  auto o = std::make_shared<TrialOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "trial",
      "Try a whole federation on this machine: provision kits, start a coordinator and N parties (separate "
      "processes, mutual TLS, secure aggregation on 127.0.0.1) on the table split N ways, and check the model "
      "equals central training's");
  cmd->add_option("--parties", o->parties, "Number of parties (2 to 32; default 3); the table is cut into N "
                                           "contiguous shards");
  cmd->add_option("--data", o->data, "A labelled CSV table, one row per line (.gz too); label in the last column")
      ->required();
  cmd->add_option("--out", o->out,
                  "Keep the kits, shards, each process's output and the models here (default: a temporary "
                  "folder, removed)");
  cmd->add_option("--labels", o->labels, "The label list L1,L2,... (default: the table's classes)");
  cmd->add_option("--seed", o->seed, "Seed of the lifting matrix, for the federation and central training alike "
                                     "(default: drawn)");
  // The control of the comparison's test: central training with another seed must differ.
  cmd->add_option("--central-seed", o->central_seed, "Central training's seed instead of --seed (to see the "
                                                     "comparison fail)")
      ->group("");
  cmd->add_option("--deadline", o->deadline, "Seconds the whole trial may take; processes still running then are "
                                             "stopped (default 60)")
      ->check(CLI::Range(1.0, 3600.0));
  cmd->callback([o] { trial_command(*o); });
}

const RegisterCommand registered(63, add_trial);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
