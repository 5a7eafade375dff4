#pragma once
// Federations of real CLI processes on 127.0.0.1: a child process running the CLI, a
// Federation (shards, certificates, `flynn federated serve` and `join` command lines) and
// one whole serve-and-join run through the shell, every process bounded in time. The
// certificates are pki.hpp's. Used by the CLI's gRPC tests (tests/cli/grpc_*_test.cpp and
// others that federate over the CLI).
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pki.hpp"
#include "test_support.hpp"

namespace flynn::test {

/// A child process running the CLI (cli_support.hpp) with stdout/stderr redirected to files; killed
/// (SIGKILL) on destruction when it is still running.
class Process {
 public:
  Process(const std::vector<std::string>& args, const std::string& out, const std::string& err);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  /// Exit code, 128+signal, or -1 when it did not end within `seconds` (then killed).
  int wait(double seconds);
  /// Its exit code when it has ended, else nullopt (never waits).
  std::optional<int> poll();
  void kill_now();
  pid_t pid() const { return pid_; }
  std::string out() const;
  std::string err() const;

 private:
  pid_t pid_ = -1;
  bool done_ = false;
  int code_ = -1;
  std::string out_, err_;
};

/// τ parties' shards of 3-class blobs, a PKI with a certificate for the coordinator
/// ("server"), each party and "mallory" (a valid certificate whose name is on no list),
/// and the command lines of `flynn federated serve` / `join`.
struct Federation {
  TempDir dir;
  std::string pki, other_pki;
  std::vector<std::string> shards;  ///< one CSV per party
  std::string pooled;               ///< all rows, for `flynn train`
  std::string labels;
  int serves = 0;          ///< coordinators started so far
  std::string serve_err;   ///< the latest coordinator's stderr

  /// Shards split IID or by class (any federated::SplitSpec).
  Federation(int parties, const std::string& split, std::size_t per_class = 60);

  /// <pki dir>/<name> (append ".pem" / ".key").
  std::string cert(const std::string& name, const std::string& which = "") const;

  /// Starts `flynn federated serve` for τ = `parties` (m 256, rho 8, seed 7, the labels)
  /// with `extra` flags; *port is the port it prints (0 when it did not start in 20 s).
  std::unique_ptr<Process> serve(int parties, const std::vector<std::string>& extra, int* port);

  /// Starts `flynn federated join` as `name` with party p's shard, writing `model`.
  std::unique_ptr<Process> join(int port, int p, const std::string& name, const std::string& model,
                                const std::vector<std::string>& extra = {},
                                const std::string& pki_dir = "") const;
};

/// What one CLI federation left: the coordinator's and each party's exit code and output.
struct CliFederation {
  CommandResult serve;
  std::vector<CommandResult> joins;
};

/// Runs `flynn federated serve` (port 0, the PKI of make_federation_pki in `pki`, plus
/// `serve_flags`) and one `flynn federated join` per element of `join_flags` (party p uses
/// certificate "party<p>" and its flags: --data, --model, ...), in `dir`. Output files are
/// named after `tag`. Every process is bounded (120 s for parties, 150 s for the server).
CliFederation run_cli_federation(const std::string& dir, const std::string& pki, const std::string& serve_flags,
                                 const std::vector<std::string>& join_flags, const std::string& tag);

}  // namespace flynn::test
