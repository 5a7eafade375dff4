#include "grpc_wire.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated::grpcwire {

std::string read_pem(const std::string& path, const char* what) {
  if (path.empty()) throw Error(fmt::format("no {} given", what));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read the {} {}: no such file or not readable", what, path));
  std::ostringstream s;
  s << f.rdbuf();
  const std::string pem = s.str();
  if (pem.find("-----BEGIN ") == std::string::npos)
    throw Error(fmt::format("the {} {} is not a PEM file (no -----BEGIN line)", what, path));
  return pem;
}

}  // namespace flynn::federated::grpcwire
