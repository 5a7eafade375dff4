#pragma once
// Test harness for gRPC federations of real processes on 127.0.0.1: a child process
// running build/flynn, a bounded wait for text in a log file, a throw-away PKI made with
// the openssl CLI, and a Federation (shards, certificates, `flynn federated serve` and
// `join` command lines). Used by tests/federated_grpc_test.cpp,
// tests/federated_malicious_coordinator_test.cpp (through tests/lying_coordinator.hpp) and
// tests/federated_coordinator_limits_test.cpp.
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace flynn::test {

/// A child process running build/flynn with stdout/stderr redirected to files; killed
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

/// Waits until `path` contains `needle`; returns the file's text ("" on timeout).
std::string wait_for_text(const std::string& path, const std::string& needle, double seconds);

/// A CA ("ca.pem", "ca.key") and, for each name, a certificate "<name>.pem" with key
/// "<name>.key" signed by it (subject CN = name; EC P-256: quick to make), in `dir`.
/// "server" gets extendedKeyUsage serverAuth (the coordinator), every other clientAuth.
void make_pki(const std::string& dir, const std::vector<std::string>& names);

/// A CRL of the CA in `dir` (made by make_pki) revoking "<name>.pem" for each of `revoked`,
/// written to `out` (`extra`: more `openssl ca -gencrl` options). Fails the test when the
/// openssl CLI does.
void make_crl(const std::string& dir, const std::vector<std::string>& revoked, const std::string& out,
              const std::string& extra = "");

/// "party00", "party01", …: the CNs of the test parties (sorted = by number).
std::string party_name(int p);

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

}  // namespace flynn::test
