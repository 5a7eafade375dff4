#include "grpc_transcript.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <fmt/format.h>

#include "core/io/byte_codec.hpp"
#include "federated/openssl_util.hpp"
#include "flynn/error.hpp"

namespace flynn::federated::grpcwire {

std::string transcript_digest(const pb::Welcome& welcome) {
  pb::Welcome copy = welcome;
  copy.clear_rank();
  std::string bytes(kTranscriptTag);
  bytes.push_back('\0');
  {
    google::protobuf::io::StringOutputStream out(&bytes);  // appends
    google::protobuf::io::CodedOutputStream coded(&out);
    // Deterministic: the same message gives the same bytes at every party (field order,
    // no map-order dependence), so equal Welcomes give equal digests.
    coded.SetSerializationDeterministic(true);
    if (!copy.SerializeToCodedStream(&coded)) throw Error("cannot serialise the welcome");
  }
  return ossl::sha256(bytes);
}

BlockScope scope_of(const pb::Welcome& welcome) { return {transcript_digest(welcome), welcome.federation_id()}; }

std::string block_message(const BlockScope& scope, const BlockPlace& place, std::string_view block) {
  io::ByteWriter w;
  w.bytes(kBlockTag);
  w.u8(0);
  w.str(scope.transcript);
  w.str(scope.federation_id);
  w.u32(static_cast<std::uint32_t>(place.sender));
  w.u64(place.seq);
  w.u32(static_cast<std::uint32_t>(place.op));
  w.str(place.purpose);
  w.bytes(ossl::sha256(block));
  return std::move(w.data());
}

BlockSigner::BlockSigner(const std::string& private_key_pem) : key_(private_key_pem) {}

std::string BlockSigner::sign(const BlockScope& scope, const BlockPlace& place, std::string_view block) const {
  return key_.sign(block_message(scope, place, block));
}

BlockVerifier::BlockVerifier(const std::vector<std::string>& certificates_by_rank) {
  keys_.reserve(certificates_by_rank.size());
  for (std::size_t r = 0; r < certificates_by_rank.size(); ++r) {
    try {
      keys_.emplace_back(certificates_by_rank[r]);
    } catch (const Error& e) {
      throw Error(fmt::format("rank {}: {}", r, e.what()));
    }
  }
}

bool BlockVerifier::verifies(const BlockScope& scope, const BlockPlace& place, std::string_view block,
                             std::string_view signature) const {
  if (place.sender < 0 || static_cast<std::size_t>(place.sender) >= keys_.size()) return false;
  return keys_[static_cast<std::size_t>(place.sender)].verifies(block_message(scope, place, block), signature);
}

namespace {
BlockPlace transcript_place(int signer) { return {signer, 1, pb::ALLGATHER, kTranscriptPurpose}; }
}  // namespace

std::string sign_transcript(const std::string& private_key_pem, const pb::Welcome& view) {
  try {
    return BlockSigner(private_key_pem).sign(scope_of(view), transcript_place(view.rank()), "");
  } catch (const Error& e) {
    throw Error(std::string("cannot sign the federation's transcript: ") + e.what());
  }
}

bool transcript_signed_by(const std::string& certificate_pem, const pb::Welcome& view, int signer,
                          std::string_view signature) {
  return VerifyingKey(certificate_pem)
      .verifies(block_message(scope_of(view), transcript_place(signer), ""), signature);
}

}  // namespace flynn::federated::grpcwire
