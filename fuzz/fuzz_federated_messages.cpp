// libFuzzer target: the federated layer's decoders of what other processes send. The
// first byte selects a message: the party protocol's agreement block, DP release and
// report (src/federated/party_messages.hpp, carried by every transport), an X25519 peer key
// for secure aggregation, and a signed key binding. Each must either decode or throw
// flynn::Error, never crash or allocate by a forged size; what decodes must encode back to
// the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "federated/party_messages.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/secure_aggregation.hpp"

namespace fed = flynn::federated;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (selector % 5) {
      case 0: {
        const fed::detail::Hello h = fed::detail::decode_hello(bytes, 1);
        if (fed::detail::encode_hello(h) != bytes) std::abort();
        break;
      }
      case 1: {
        // T from the block's own count field when there is one, so well-formed releases
        // of any length get through; a second byte of the selector bends it.
        const std::uint32_t T =
            bytes.size() >= 4 ? static_cast<std::uint32_t>(std::uint8_t(bytes[0])) |
                                    static_cast<std::uint32_t>(std::uint8_t(bytes[1])) << 8 |
                                    static_cast<std::uint32_t>(std::uint8_t(bytes[2])) << 16 |
                                    static_cast<std::uint32_t>(std::uint8_t(bytes[3])) << 24
                              : selector;
        const auto entries = fed::detail::decode_release(bytes, 2, T);
        if (fed::detail::encode_release(entries) != bytes) std::abort();
        break;
      }
      case 2: {
        static const fed::X25519KeyPair mine;
        const std::string secret = mine.shared_secret(bytes);
        if (secret.size() != fed::kX25519KeyBytes) std::abort();
        break;
      }
      case 3: {
        // A peer's key binding: the bytes split into a public key and a signature, checked
        // against a certificate that is not one: must be refused, never crash.
        const std::size_t half = bytes.size() / 2;
        fed::verify_exchange_key("not a CA", std::string(bytes.substr(0, half)), "party",
                                 bytes.substr(0, half), bytes.substr(half));
        std::abort();  // nothing here can verify
      }
      case 4: {
        const flynn::federated::PartyReport r = fed::detail::decode_report(bytes, 3);
        if (fed::detail::encode_report(r) != bytes) std::abort();
        break;
      }
    }
  } catch (const flynn::Error&) {
  }
  return 0;
}
