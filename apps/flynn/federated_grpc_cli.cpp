#include "federated_grpc_cli.hpp"
#include "flynn/build_config.hpp"

#if FLYNN_HAVE_GRPC

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::cli {

namespace fs = std::filesystem;

void check_writable_output(const std::string& path, const char* flag) {
  const fs::path parent = fs::path(path).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir))
    throw Error(fmt::format("{} {}: {} is not a directory", flag, path, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(fmt::format("{} {}: {} is not writable", flag, path, dir.string()));
  if (fs::is_directory(path)) throw Error(fmt::format("{} {}: it is a directory", flag, path));
}

nlohmann::json wire_json(const federated::WireTraffic& w) {
  return {{"sent", w.bytes_sent},
          {"received", w.bytes_received},
          {"messages_sent", w.messages_sent},
          {"messages_received", w.messages_received}};
}

}  // namespace flynn::cli

#endif  // FLYNN_HAVE_GRPC
