// libFuzzer target: what the coordinator reads from the parties (proto/federation.proto's
// PartyMessage), the way it checks them: the input is a sequence of messages, each a u16
// length (little-endian) and that many bytes, parsed at most kMaxNesting deep. The first
// goes through the Join's checks (grpc_join_check.hpp) against the fixture's certificate as
// the TLS peer's; the others, from parties 0..2 in turn, through one collective step of a
// 3-party federation (grpc_collective_step.hpp: sequence, operation, purpose, sizes, the
// result's cap) — or, for a Failure, its reason made inert as the coordinator relays it.
// Nothing may crash, hang or allocate by a forged size; results hold exactly one block per
// party (all-gather) or one block (sums, broadcasts).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "federation_fixture.hpp"
#include "federated/grpc_collective_step.hpp"
#include "federated/grpc_join_check.hpp"
#include "federated/relayed_text.hpp"
#include "federated/wire_messages.hpp"
#include "flynn/error.hpp"

namespace fed = flynn::federated;
namespace pb = fed::grpcwire::pb;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fed::CollectiveStep step(3, std::size_t{1} << 20, [](int r) { return "party " + std::to_string(r); });
  std::size_t pos = 0;
  for (int n = 0; pos + 2 <= size && n < 64; ++n) {
    const std::size_t len = data[pos] | (std::size_t{data[pos + 1]} << 8);
    pos += 2;
    if (len > size - pos) break;
    const auto m = fed::grpcwire::parse_party_message(std::string_view(reinterpret_cast<const char*>(data + pos), len));
    pos += len;
    if (!m) continue;
    try {
      if (n == 0) {
        fed::check_join(*m, std::string(flynn::fuzzing::kCertificatePem));
        continue;
      }
      if (m->has_failure()) {
        for (const char c : fed::relayed_from("party 'x'", m->failure().reason()))
          if (static_cast<unsigned char>(c) < 0x20) std::abort();
        continue;
      }
      if (!m->has_contribution()) continue;
      pb::Contribution c = m->contribution();
      const auto out = step.take(n % 3, c);
      if (out.result) {
        const pb::Result& r = out.result->result();
        if (r.blocks_size() != 3 && r.blocks_size() != 1) std::abort();
      }
      if (!out.error.empty()) break;  // the coordinator stops the federation here
    } catch (const flynn::Error&) {
    }
  }
  return 0;
}
