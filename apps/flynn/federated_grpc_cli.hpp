#pragma once
// Checks shared by `flynn federated serve` and `flynn federated join` (the gRPC
// federation): the output-path check, JSON of wire traffic (their DP flags are
// cmd_federated_common.hpp's DpOptions, shared with train and simulate). Only compiled
// into commands when flynn has gRPC.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "flynn/federated/dp.hpp"
#include "flynn/federated/grpc.hpp"

namespace flynn::cli {

/// Throws flynn::Error naming the problem when `path` cannot be written (missing or
/// read-only directory, or a directory at that path), so no process trains in vain.
void check_writable_output(const std::string& path, const char* flag);

/// {"sent": …, "received": …, "messages_sent": …, "messages_received": …}
nlohmann::json wire_json(const federated::WireTraffic& w);

}  // namespace flynn::cli
