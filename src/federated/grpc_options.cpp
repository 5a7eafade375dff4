// The option values of `flynn federated serve` and `join` that need more than a type.
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/grpc.hpp"

namespace flynn::federated {

std::size_t max_message_bytes_from_mib(double mib) {
  if (!(mib >= 1 && mib <= 2047)) throw Error(fmt::format("--max-message-mb {}: must be in [1, 2047]", mib));
  return static_cast<std::size_t>(mib * (1 << 20));
}

std::vector<std::string> parse_name_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string n; std::getline(ss, n, ',');) {
    const auto b = n.find_first_not_of(' '), e = n.find_last_not_of(' ');
    if (b == std::string::npos) throw Error(fmt::format("--allow '{}': an empty name", list));
    out.push_back(n.substr(b, e - b + 1));
  }
  return out;
}

}  // namespace flynn::federated
