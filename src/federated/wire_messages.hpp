#pragma once
// The messages of proto/federation.proto as flynn reads and writes them (internal; needs
// the generated protobuf code only, not gRPC, so the fuzz targets link it without gRPC):
// parsing with bounds, the settings message, the little-endian vector codec of the sums,
// and the sizes every party and the coordinator hold messages to.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "federation.pb.h"
#include "flynn/federated/settings.hpp"

namespace google::protobuf::io {
class ZeroCopyInputStream;
}

namespace flynn::federated::grpcwire {

namespace pb = ::flynn::federation::v1;

/// The largest Welcome a party accepts: τ certificates (≤ 16 KiB each), key signatures
/// (≤ 2 KiB) and keys, and the settings. 16 MiB hold ~850 parties with the largest
/// certificates allowed, ~6000 with ordinary ones.
inline constexpr std::size_t kMaxWelcomeBytes = std::size_t{16} << 20;
/// The largest Abort or Done a party accepts (a reason is shown cut to 1 KiB anyway).
inline constexpr std::size_t kMaxAbortBytes = std::size_t{64} << 10;
/// How much larger than this party's own block another party's block of the same
/// collective may be: blocks of one collective have the same layout (the same fingerprint,
/// report, release size); they differ in the text of a failure, which is cut to 1 KiB.
inline constexpr std::size_t kBlockSlackBytes = std::size_t{16} << 10;
/// Before the agreement (the transcript, the hellos) blocks need not share a layout yet: a
/// misconfigured party's hello (another table's columns) may be larger than this party's.
/// Each may be this large, so that the agreement can name the difference.
inline constexpr std::size_t kMaxAgreementBlockBytes = std::size_t{1} << 20;
/// Framing of a Result or Contribution around its blocks (tags, lengths, seq, purpose).
inline constexpr std::size_t kFramingBytes = 256;
/// The deepest nesting a party or the coordinator parses (the protocol's messages nest 4
/// deep; protobuf's own limit is 100).
inline constexpr int kMaxNesting = 16;

/// Parses one message from `in` (at most kMaxNesting deep, every byte consumed); nullopt
/// when it does not parse.
std::optional<pb::CoordinatorMessage> parse_coordinator_message(google::protobuf::io::ZeroCopyInputStream& in);
std::optional<pb::CoordinatorMessage> parse_coordinator_message(std::string_view bytes);
std::optional<pb::PartyMessage> parse_party_message(std::string_view bytes);

/// Whether `m` or any message inside it holds fields this build does not know.
bool has_unknown_fields(const google::protobuf::Message& m);

/// "welcome", "result", "abort", "done" or "nothing".
const char* kind_name(const pb::CoordinatorMessage& m);

/// SharedSettings <-> its message: the labels and settings_to_text's pairs; from_proto is
/// as strict as settings_from_text (throws flynn::Error naming the setting).
pb::Settings to_proto(const SharedSettings& s);
SharedSettings from_proto(const pb::Settings& p);

/// Little-endian encoding of a vector of uint32/uint64 (the payload of SUM32/SUM64).
template <class T>
std::string encode_words(std::span<const T> values);
/// Decodes into `out` (sizes must match; throws flynn::Error otherwise).
template <class T>
void decode_words(std::string_view bytes, std::span<T> out);
/// Adds the little-endian words of `bytes` to `sum` element-wise, modulo 2^(8·sizeof T)
/// (sizes must match; throws flynn::Error otherwise). No copy of `bytes` is made.
template <class T>
void add_words(std::string_view bytes, std::span<T> sum);

/// Name of an operation for messages ("all-gather", …).
const char* op_name(pb::Op op);

/// Bytes per word of a sum (4 or 8), 0 for the other operations.
std::size_t word_bytes(pb::Op op);

}  // namespace flynn::federated::grpcwire
