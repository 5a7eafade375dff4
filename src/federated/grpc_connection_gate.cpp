// The coordinator's TCP listener: see grpc_connection_gate.hpp.
#include "grpc_connection_gate.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/tcp.h>  // struct tcp_info with tcpi_bytes_received (glibc's lacks it)
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

constexpr auto kTick = std::chrono::milliseconds(25);

// "1.2.3.4:5" / "[::1]:5" from raw address bytes (IPv4-mapped IPv6 as IPv4).
std::string key_of(int family, const void* addr, unsigned port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (family == AF_INET6) {
    const auto* a6 = static_cast<const in6_addr*>(addr);
    if (IN6_IS_ADDR_V4MAPPED(a6)) {
      in_addr v4;
      std::memcpy(&v4, a6->s6_addr + 12, 4);
      inet_ntop(AF_INET, &v4, text, sizeof text);
      return fmt::format("{}:{}", text, port);
    }
    inet_ntop(AF_INET6, a6, text, sizeof text);
    return fmt::format("[{}]:{}", text, port);
  }
  inet_ntop(AF_INET, addr, text, sizeof text);
  return fmt::format("{}:{}", text, port);
}

std::string key_of(const sockaddr_storage& s) {
  if (s.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(s);
    return key_of(AF_INET6, &a.sin6_addr, ntohs(a.sin6_port));
  }
  const auto& a = reinterpret_cast<const sockaddr_in&>(s);
  return key_of(AF_INET, &a.sin_addr, ntohs(a.sin_port));
}

}  // namespace

std::string connection_key_from_grpc_peer(const std::string& peer) {
  // gRPC writes "ipv4:HOST:PORT" or "ipv6:[HOST]:PORT" (HOST possibly percent-encoded
  // with a zone, which loopback and global addresses never have).
  const auto colon = peer.find(':');
  if (colon == std::string::npos) return "";
  const std::string scheme = peer.substr(0, colon);
  std::string rest = peer.substr(colon + 1);
  const auto last = rest.rfind(':');
  if (last == std::string::npos) return "";
  std::string host = rest.substr(0, last);
  unsigned port = 0;
  try {
    port = static_cast<unsigned>(std::stoul(rest.substr(last + 1)));
  } catch (const std::exception&) {
    return "";
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (scheme == "ipv4") {
    in_addr a;
    if (inet_pton(AF_INET, host.c_str(), &a) != 1) return "";
    return key_of(AF_INET, &a, port);
  }
  if (scheme == "ipv6") {
    in6_addr a;
    if (inet_pton(AF_INET6, host.c_str(), &a) != 1) return "";
    return key_of(AF_INET6, &a, port);
  }
  return "";
}

ConnectionGate::ConnectionGate(const std::string& listen, GateLimits limits,
                               std::function<void(const std::string&)> log)
    : limits_(limits), log_(std::move(log)) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) throw Error(fmt::format("--listen '{}': expected HOST:PORT", listen));
  std::string host = listen.substr(0, colon);
  const std::string port = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0)
    throw Error(fmt::format("--listen '{}': cannot resolve the address ({})", listen, gai_strerror(rc)));
  std::string why;
  for (addrinfo* a = found; a && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1, zero = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // "[::]:P" also takes IPv4 connections.
    if (a->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0)
    throw Error(fmt::format("cannot listen on {} ({})", listen, why.empty() ? "no usable address" : why));
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
  // Every waiting connection holds two descriptors: raise the soft limit towards what the
  // cap needs, and lower the cap where the hard limit does not allow it.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    const rlim_t need = static_cast<rlim_t>(2 * limits_.max_waiting + 256);
    if (files.rlim_cur < need) {
      files.rlim_cur = std::min(need, files.rlim_max);
      ::setrlimit(RLIMIT_NOFILE, &files);
      ::getrlimit(RLIMIT_NOFILE, &files);
    }
    if (files.rlim_cur < need)
      limits_.max_waiting = files.rlim_cur > 512 ? static_cast<std::size_t>((files.rlim_cur - 256) / 2) : 128;
  }
}

ConnectionGate::~ConnectionGate() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void ConnectionGate::start(std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
                           std::function<void(const std::string&, const std::string&)> on_cut) {
  acceptor_ = std::move(acceptor);
  on_cut_ = std::move(on_cut);
  thread_ = std::thread([this] { loop(); });
}

void ConnectionGate::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, c] : connections_) ::close(c.fd);
  connections_.clear();
  counts_.waiting = 0;
}

void ConnectionGate::release(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = connections_.find(key);
  if (it != connections_.end()) it->second.released = true;  // the gate's thread closes its fd
}

void ConnectionGate::close_soon(const std::string& key, double grace_seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = connections_.find(key);
  if (it == connections_.end() || it->second.released || it->second.cutting) return;
  it->second.cutting = true;
  it->second.cut_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(grace_seconds));
  ++counts_.cut_refused;
}

GateCounts ConnectionGate::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

void ConnectionGate::drop(const std::string&, Connection& c, bool shut) {
  if (shut) ::shutdown(c.fd, SHUT_RDWR);  // acts on the socket, so gRPC's descriptor too
  ::close(c.fd);
  c.fd = -1;
}

void ConnectionGate::accept_all(Clock::time_point now) {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: the pending connection stays in the backlog; retry next tick.
        static std::atomic<int> warned{0};
        if (warned++ % 100 == 0 && log_) log_("out of file descriptors: new connections wait");
      }
      return;
    }
    const std::string key = key_of(peer);
    bool full = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (counts_.waiting >= limits_.max_waiting) {
        full = true;
        if (counts_.refused_full++ % 100 == 0 && log_)
          log_(fmt::format("{} connections are waiting for their Join (the most allowed): closing the "
                           "connection from {} ({} closed so far)",
                           counts_.waiting, key, counts_.refused_full));
      } else {
        const int mine = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (mine < 0) {
          full = true;
        } else {
          const auto old = connections_.find(key);
          if (old != connections_.end()) {  // a stale entry of a closed connection
            if (!old->second.released) --counts_.waiting;
            drop(key, old->second, false);
            connections_.erase(old);
          }
          Connection c;
          c.fd = mine;
          c.grpc_fd = fd;
          struct stat st {};
          if (::fstat(mine, &st) == 0) {
            c.dev = st.st_dev;
            c.inode = st.st_ino;
          }
          c.accepted = now;
          connections_.emplace(key, c);
          ++counts_.accepted;
          counts_.max_waiting_seen = std::max(counts_.max_waiting_seen, ++counts_.waiting);
        }
      }
    }
    if (full) {
      ::close(fd);
      continue;
    }
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters p;
    p.listener_fd = listen_fd_;
    p.fd = fd;  // gRPC owns it from here
    acceptor_->HandleNewConnection(&p);
  }
}

void ConnectionGate::loop() {
  std::vector<pollfd> fds;
  std::vector<std::string> keys;
  while (!stopping_) {
    fds.assign(1, pollfd{listen_fd_, POLLIN, 0});
    keys.assign(1, "");
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& [key, c] : connections_) {
        fds.push_back(pollfd{c.fd, POLLRDHUP, 0});
        keys.push_back(key);
      }
    }
    ::poll(fds.data(), fds.size(), static_cast<int>(kTick.count()));
    const auto now = Clock::now();
    if (fds[0].revents & POLLIN) accept_all(now);
    std::vector<std::pair<std::string, std::string>> cuts;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      forget_hung_up(fds, keys);
      for (auto it = connections_.begin(); it != connections_.end();) {
        const Review r = review(it->second, now);
        if (r.forget) {
          --counts_.waiting;
          drop(it->first, it->second, r.shut);
          it = connections_.erase(it);
          continue;
        }
        if (!r.cut_because.empty()) cuts.emplace_back(it->first, r.cut_because);
        ++it;
      }
    }
    for (const auto& [key, why] : cuts)
      if (on_cut_) on_cut_(key, why);
  }
}

void ConnectionGate::forget_hung_up(const std::vector<pollfd>& fds, const std::vector<std::string>& keys) {
  // Connections whose peer hung up or that gRPC shut down: forget them.
  for (std::size_t i = 1; i < fds.size(); ++i) {
    if (!(fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL))) continue;
    const auto it = connections_.find(keys[i]);
    if (it == connections_.end() || it->second.fd != fds[i].fd) continue;
    if (!it->second.released) --counts_.waiting;
    drop(it->first, it->second, false);
    connections_.erase(it);
  }
}

ConnectionGate::Review ConnectionGate::review(Connection& c, Clock::time_point now) {
  if (c.released) return {.forget = true, .shut = false, .cut_because = {}};
  if (c.cutting) return {.forget = now >= c.cut_at, .shut = true, .cut_because = {}};
  // gRPC closed its descriptor (it refused the TLS handshake): nobody reads the
  // connection any more, and the gate's duplicate alone would hold it open until the
  // join timeout, the refused party waiting that long to learn it was refused.
  struct stat st {};
  if (c.inode != 0 && (::fstat(c.grpc_fd, &st) != 0 || st.st_ino != c.inode || st.st_dev != c.dev))
    return {.forget = true, .shut = true, .cut_because = {}};
  tcp_info info{};
  socklen_t len = sizeof info;
  std::uint64_t received = 0;
  if (::getsockopt(c.fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
      len >= offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received)
    received = info.tcpi_bytes_received;
  Review r;
  // A fast sender is cut sooner: its refusal is best effort, its bytes are not free.
  auto grace = std::chrono::milliseconds(500);
  if (received > limits_.pre_join_bytes) {
    grace = std::chrono::milliseconds(100);
    r.cut_because = fmt::format("the connection sent {} bytes before its Join was accepted (at most {})", received,
                                limits_.pre_join_bytes);
    ++counts_.cut_bytes;
  } else if (std::chrono::duration<double>(now - c.accepted).count() > limits_.join_timeout_seconds) {
    r.cut_because =
        fmt::format("no Join was accepted on the connection within {} s (--join-timeout)", limits_.join_timeout_seconds);
    ++counts_.cut_timeout;
  }
  if (!r.cut_because.empty()) {
    c.cutting = true;
    c.cut_at = now + grace;
  }
  return r;
}

}  // namespace flynn::federated
