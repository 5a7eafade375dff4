#include "federated/grpc_reachability.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "federated/openssl_util.hpp"
#include "federated/safety_switches.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/party.hpp"

namespace flynn::federated {

namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::pair<std::string, std::string> host_port(const std::string& server) {
  const auto colon = server.rfind(':');
  if (colon == std::string::npos) throw Error(fmt::format("--server '{}': expected HOST:PORT", server));
  std::string host = server.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return {host, server.substr(colon + 1)};
}

// A connected socket, or -1 with errno (ECONNREFUSED while nothing listens yet).
int connect_once(const std::string& host, const std::string& port, double timeout_s) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) {
    errno = EHOSTUNREACH;
    return -1;
  }
  int fd = -1, err = ECONNREFUSED;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    timeval tv{static_cast<time_t>(timeout_s), static_cast<suseconds_t>((timeout_s - static_cast<long>(timeout_s)) * 1e6)};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  errno = err;
  return fd;
}

int connect_with_retry(const JoinOptions& o, const std::function<void(const std::string&)>& log) {
  const auto [host, port] = host_port(o.server);
  const auto limit = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(o.deadline_seconds));
  double pause = 0.1;
  bool told = false;
  for (;;) {
    const double left = std::chrono::duration<double>(limit - Clock::now()).count();
    const int fd = connect_once(host, port, std::max(0.1, left));
    if (fd >= 0) return fd;
    const int err = errno;
    const bool not_up = err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH || err == ETIMEDOUT ||
                        err == EAGAIN || err == EINPROGRESS;
    if (!not_up || left <= pause)
      throw FederationError(fmt::format("could not connect to the coordinator at {} within {} s (--deadline): {}",
                                        o.server, o.deadline_seconds, std::strerror(err)));
    if (!told && log) log(fmt::format("the coordinator at {} is not up yet ({}); retrying until --deadline ({} s)",
                                      o.server, std::strerror(err), o.deadline_seconds));
    told = true;
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(pause * 2, 2.0);
  }
}

std::string verify_cause(long v, const std::string& name) {
  switch (v) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "unknown CA: the coordinator's certificate is not signed by this party's --ca (the federation's CA)";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return fmt::format("name mismatch: the coordinator's certificate is not issued for '{}' (the host of --server, "
                         "or --server-name)", name);
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the coordinator's certificate has expired";
    case X509_V_ERR_INVALID_PURPOSE:
      return "wrong extended key usage: the coordinator's certificate is not issued for serving (serverAuth); is it "
             "a party's?";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the coordinator's certificate is not valid yet (check the clocks)";
    default:
      return fmt::format("the coordinator's certificate failed verification: {}", X509_verify_cert_error_string(v));
  }
}

// What the coordinator's alert says about this party's certificate.
std::string alert_cause(const std::string& reason) {
  auto has = [&](const char* s) { return reason.find(s) != std::string::npos; };
  if (has("unknown ca")) return "the coordinator refused this party's certificate: unknown CA (not signed by the CA "
                                "the coordinator trusts; is --ca/--cert from this federation's kit?)";
  if (has("expired")) return "the coordinator refused this party's certificate: expired";
  if (has("revoked")) return "the coordinator refused this party's certificate: revoked";
  if (has("unsupported certificate") || has("bad certificate"))
    return "the coordinator refused this party's certificate (" + reason +
           "): is it a party's certificate (extendedKeyUsage clientAuth)?";
  if (has("eof"))
    return "the coordinator refused this party's certificate: it closed the connection in the TLS handshake (a "
           "certificate not signed by the CA the coordinator trusts, expired, or of another role; the coordinator's "
           "log names the cause)";
  return "the TLS handshake with the coordinator failed: " + reason;
}

using SslCtx = std::unique_ptr<SSL_CTX, ossl::Deleter<SSL_CTX, SSL_CTX_free>>;
using Ssl = std::unique_ptr<SSL, ossl::Deleter<SSL, SSL_free>>;

// A client context as the gRPC channel's: the CA, the party's certificate and key, ALPN h2.
SslCtx client_context(const PartyPems& pems) {
  SslCtx ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) throw Error("cannot make a TLS context: " + ossl::openssl_error());
  X509_STORE* store = SSL_CTX_get_cert_store(ctx.get());
  for (ossl::Cert& c : ossl::read_certificates(pems.ca)) X509_STORE_add_cert(store, c.get());
  std::vector<ossl::Cert> chain = ossl::read_certificates(pems.cert);
  if (chain.empty() || SSL_CTX_use_certificate(ctx.get(), chain.front().get()) != 1)
    throw Error("--cert: not a PEM certificate");
  ossl::Bio bio = ossl::memory(pems.key);
  ossl::Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key || SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1)
    throw Error("--key: not the unencrypted PEM private key of --cert");
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  static const unsigned char alpn[] = {2, 'h', '2'};
  SSL_CTX_set_alpn_protos(ctx.get(), alpn, sizeof alpn);
  return ctx;
}

void expect_name(SSL* ssl, const std::string& name) {
  unsigned char buf[16];
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (inet_pton(AF_INET, name.c_str(), buf) == 1 || inet_pton(AF_INET6, name.c_str(), buf) == 1)
    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  else
    SSL_set1_host(ssl, name.c_str());
  SSL_set_tlsext_host_name(ssl, name.c_str());
}

// Writing to a connection the coordinator closed raises SIGPIPE, which would end the
// process: blocked on this thread while it lasts, and a pending one consumed.
struct NoSigpipe {
  sigset_t pipe{}, old{};
  NoSigpipe() {
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
  }
  ~NoSigpipe() {
    sigset_t pending;
    sigpending(&pending);
    if (sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{0, 0};
      sigtimedwait(&pipe, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
};

// The handshake, then the HTTP/2 preface and an empty SETTINGS frame: under TLS 1.3 the
// coordinator's verdict on this party's certificate arrives only after the handshake, as an
// alert in place of the coordinator's own SETTINGS.
void handshake(SSL* ssl, const std::string& name, const JoinOptions& o) {
  errno = 0;
  if (SSL_connect(ssl) == 1) {
    static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
    char answer[64];
    if (SSL_write(ssl, preface, sizeof preface - 1) > 0 && SSL_read(ssl, answer, sizeof answer) > 0) return;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT)
    throw FederationError(fmt::format("could not connect to the coordinator at {} within {} s (--deadline): the TLS "
                                      "handshake did not complete",
                                      o.server, o.deadline_seconds));
  const long verdict = SSL_get_verify_result(ssl);
  if (verdict != X509_V_OK) throw FederationError(verify_cause(verdict, name));
  const unsigned long e = ERR_peek_error();
  const std::string reason = e ? ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "?" : "";
  ERR_clear_error();
  if (reason.empty())
    throw FederationError("the coordinator closed the connection during the TLS handshake (it may have refused "
                          "this party's certificate; its log says why)");
  throw FederationError(alert_cause(reason));
}


}  // namespace

void check_own_validity(const std::string& cert_pem) {
  const ossl::Cert c = ossl::first_certificate(cert_pem);
  if (!c) return;
  if (X509_cmp_current_time(X509_get0_notAfter(c.get())) < 0)
    throw FederationError("this party's certificate (--cert) has expired: ask the federation's CA for a new kit");
  if (X509_cmp_current_time(X509_get0_notBefore(c.get())) > 0)
    throw FederationError("this party's certificate (--cert) is not valid yet (check this machine's clock)");
}

void wait_for_coordinator(const JoinOptions& options, const PartyPems& pems,
                          const std::function<void(const std::string&)>& log) {
  check_own_validity(pems.cert);
  const SslCtx ctx = client_context(pems);
  Fd sock{connect_with_retry(options, log)};
  // Without the bounded waits (a test's control) the handshake is gRPC's alone, unbounded.
  if (!safety_check_on(SafetyCheck::BoundedShutdown)) return;
  Ssl ssl(SSL_new(ctx.get()));
  if (!ssl || SSL_set_fd(ssl.get(), sock.fd) != 1) throw Error("cannot start a TLS connection: " + ossl::openssl_error());
  const std::string name = options.server_name.empty() ? host_port(options.server).first : options.server_name;
  expect_name(ssl.get(), name);
  const NoSigpipe no_sigpipe;
  handshake(ssl.get(), name, options);
  SSL_shutdown(ssl.get());
}

}  // namespace flynn::federated
