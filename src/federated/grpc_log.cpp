// gRPC's own log lines: kept out of the user's terminal unless asked for (--verbose); a
// failed TLS handshake, which gRPC reports only there, becomes one line of the command's own.
#include <grpc/support/log.h>

#include <cstdio>
#include <mutex>

#include "flynn/federated/grpc_commands.hpp"

namespace flynn::federated {

namespace {

std::mutex sink_mutex;
bool sink_verbose = false;
std::function<void(const std::string&)>& tls_sink() {
  static std::function<void(const std::string&)> sink;
  return sink;
}

void route(gpr_log_func_args* args) {
  const std::string message = args->message ? args->message : "";
  std::lock_guard<std::mutex> lock(sink_mutex);
  if (sink_verbose) {
    std::fprintf(stderr, "grpc %s:%d: %s\n", args->file ? args->file : "?", args->line, message.c_str());
    return;
  }
  if (!tls_sink() || message.find("Handshake failed") == std::string::npos) return;
  // "Handshake failed with fatal error SSL_ERROR_SSL: error:0A000086:SSL routines::certificate verify failed."
  const auto last = message.rfind(':');
  std::string why = last == std::string::npos ? message : message.substr(last + 1);
  while (!why.empty() && (why.back() == '.' || why.back() == ' ')) why.pop_back();
  while (!why.empty() && why.front() == ' ') why.erase(0, 1);
  tls_sink()("refused a connection in the TLS handshake: " + why +
             (why.find("certificate verify failed") != std::string::npos
                  ? " (the party's certificate is not signed by --ca, has expired, or is not a certificate at all)"
                  : ""));
}

}  // namespace

void route_grpc_log(bool verbose, std::function<void(const std::string&)> tls_failures) {
  {
    std::lock_guard<std::mutex> lock(sink_mutex);
    sink_verbose = verbose;
    tls_sink() = std::move(tls_failures);
  }
  gpr_set_log_verbosity(verbose ? GPR_LOG_SEVERITY_DEBUG : GPR_LOG_SEVERITY_ERROR);
  gpr_set_log_function(route);
}

}  // namespace flynn::federated
