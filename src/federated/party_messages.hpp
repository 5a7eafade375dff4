#pragma once
// The party protocol's own messages (the agreement block, the report, the DP release), as every
// transport carries them (MPI all-gathers, the gRPC coordinator's relays). Every party
// decodes every block the same way, so a malformed block makes all of them throw the same
// FederationError; fuzz/fuzz_federated_messages.cpp holds the decoders to that.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flynn/federated/communicator.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/party.hpp"
#include "core/io/byte_codec.hpp"

namespace flynn::federated::detail {

/// A reader of `party`'s block whose failures throw FederationError("party P sent a
/// malformed WHAT message").
io::ByteReader message_reader(std::string_view bytes, int party, const char* what);

/// The agreement ("hello") block: a party's readiness, its settings fingerprint, its seed
/// and its rows per class.
struct Hello {
  std::string error;  ///< "" = ready
  std::vector<std::pair<std::string, std::string>> fingerprint;
  bool seed_given = false;
  std::uint64_t seed = 0;
  bool has_rows = false;
  std::vector<std::uint64_t> rows_per_class;
};

/// Magic "FLYNNFED", kProtocolVersion, then the fields (strings length-prefixed).
std::string encode_hello(const Hello& h);
/// Throws FederationError naming `party` on anything encode_hello cannot have written
/// (and on another protocol version); sizes are checked against the bytes left before
/// anything is allocated.
Hello decode_hello(std::string_view bytes, int party);

/// The report block of compare_models: flags, rows, timings (zeros where withheld),
/// traffic, the model's CRC-32, size and SHA-256 (32 bytes). Fixed size whatever is
/// withheld.
std::string encode_report(const PartyReport& report);
/// Throws FederationError naming `party` on anything encode_report cannot have written.
PartyReport decode_report(std::string_view bytes, int party);

/// The longest reason a party sends the others (hello and status blocks); a longer one is
/// cut, saying how much. The receivers escape and cut it again for display.
inline constexpr std::size_t kMaxReasonBytes = 4096;
std::string bounded_reason(std::string_view reason);

/// A DP release: u32 count, then (u32 index, u32 value) pairs.
std::string encode_release(const std::vector<DpEntry>& entries);
/// Throws FederationError unless the block holds exactly T entries and nothing else.
std::vector<DpEntry> decode_release(std::string_view bytes, int party, std::uint32_t T);

}  // namespace flynn::federated::detail
