#pragma once
// The coordinator's TCP listener (internal to the gRPC backend): it accepts the
// connections itself and hands each one to the gRPC server (an external connection
// acceptor), holding a connection to limits until the party on it has joined.
//
// Why not let gRPC listen: gRPC 1.51's HTTP/2 transport buffers a whole message before it
// checks the receive limit, so a 100 MB Join costs 100 MB whatever the limit, and a
// connection that never completes its TLS handshake or never opens a stream never reaches
// the application at all. The gate sees every connection from its first byte:
//   * until its stream's Join has been accepted (release()), a connection may receive at
//     most `pre_join_bytes` (TLS handshake, HTTP/2 preface and the Join: a few KiB for an
//     honest party) and live at most `join_timeout` seconds; beyond either it is closed.
//     Bytes are read from the kernel's TCP_INFO (tcpi_bytes_received) every 25 ms, so a
//     fast sender is cut within about a megabyte of the limit;
//   * at most `max_waiting` connections wait at once; more are closed at accept.
// Before closing a connection the gate calls `on_cut`, so the coordinator can end the
// stream on it with the reason first (the refused party then prints it): the connection
// is shut down 0.5 s later (0.1 s when it sent too much).
//
// One thread, no thread per connection. Each waiting connection costs two descriptors
// (gRPC's and the gate's duplicate, kept only to read TCP_INFO and shut the socket down).
#include <grpcpp/server_builder.h>
#include <poll.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace flynn::federated {

struct GateLimits {
  std::size_t pre_join_bytes = 64 << 10;
  double join_timeout_seconds = 10;
  std::size_t max_waiting = 2048;
};

/// Counters of the gate, for the coordinator's report.
struct GateCounts {
  std::uint64_t accepted = 0;         ///< connections handed to gRPC
  std::uint64_t refused_full = 0;     ///< closed at accept: max_waiting reached
  std::uint64_t cut_bytes = 0;        ///< closed: too many bytes before the Join
  std::uint64_t cut_timeout = 0;      ///< closed: no accepted Join within the timeout
  std::uint64_t cut_refused = 0;      ///< closed after its stream was refused
  std::size_t waiting = 0;            ///< connections waiting for their Join now
  std::size_t max_waiting_seen = 0;   ///< the most that waited at once
};

/// The key of a connection: its peer's address and port as "1.2.3.4:5" or "[::1]:5"
/// (IPv4-mapped IPv6 addresses written as IPv4), from gRPC's peer string
/// ("ipv4:1.2.3.4:5", "ipv6:[::1]:5"). Empty when unparseable.
std::string connection_key_from_grpc_peer(const std::string& peer);

class ConnectionGate {
 public:
  using Clock = std::chrono::steady_clock;
  /// Binds and listens on `listen` (HOST:PORT; port 0: any). Throws flynn::Error naming
  /// the address when it cannot. Nothing is accepted before start().
  ConnectionGate(const std::string& listen, GateLimits limits,
                 std::function<void(const std::string&)> log);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  int port() const { return port_; }

  /// Starts accepting; connections go to `acceptor` (from the server's builder, the
  /// server already started). `on_cut(key, reason)` is called (on the gate's thread,
  /// without locks held) shortly before a waiting connection is closed.
  void start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
             std::function<void(const std::string& key, const std::string& reason)> on_cut);
  /// Stops accepting and closes the gate's descriptors (gRPC keeps its own).
  void stop();

  /// The party on this connection joined: no more limits on it.
  void release(const std::string& key);
  /// Closes the connection (if it is still waiting) after `grace_seconds`, so that what
  /// the coordinator wrote on it (a refusal) still leaves.
  void close_soon(const std::string& key, double grace_seconds = 0.5);

  GateCounts counts() const;

 private:
  struct Connection {
    int fd = -1;  // the gate's duplicate of the socket
    int grpc_fd = -1;  // the descriptor handed to gRPC, and its socket's identity (fstat):
    dev_t dev = 0;     // when gRPC closes it (a handshake it refused), the gate's duplicate
    ino_t inode = 0;   // would keep the connection open; the gate then closes it too
    Clock::time_point accepted;
    bool released = false;
    bool cutting = false;  // on_cut called, closing at cut_at
    Clock::time_point cut_at;
  };
  void loop();
  // What one pass of the loop does with a connection: forget it (closing the socket if
  // `shut`), start cutting it (`cut_because` names why), or leave it waiting.
  struct Review {
    bool forget = false;
    bool shut = false;
    std::string cut_because;
  };
  Review review(Connection& c, Clock::time_point now);
  void forget_hung_up(const std::vector<pollfd>& fds, const std::vector<std::string>& keys);
  void accept_all(Clock::time_point now);
  void drop(const std::string& key, Connection& c, bool shut);

  GateLimits limits_;
  std::function<void(const std::string&)> log_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor_;
  std::function<void(const std::string&, const std::string&)> on_cut_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;  // guards connections_ and counts_
  std::unordered_map<std::string, Connection> connections_;
  GateCounts counts_;
};

}  // namespace flynn::federated
