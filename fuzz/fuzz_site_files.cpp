// libFuzzer target: the small JSON files of provisioning — a kit's kit.json (read by every
// `serve --kit` / `join --kit`) and a project file (`provision --project`). The first byte
// picks which; either the text parses, or it is refused with flynn::Error. A parsed
// project names its coordinator and at least one party.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "flynn/error.hpp"
#include "flynn/federated/provision.hpp"

namespace fed = flynn::federated;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] & 1) {
      const fed::ProvisionRequest r = fed::parse_provision_project(text, "fuzz");
      if (r.coordinator.empty() && text.find("\"coordinator\"") == std::string_view::npos) std::abort();
      if (r.parties.empty()) std::abort();
    } else {
      const fed::SiteKit k = fed::parse_kit_config(text, "/fuzz");
      if (k.role != "party" && k.role != "coordinator") std::abort();
    }
  } catch (const flynn::Error&) {
  }
  return 0;
}
