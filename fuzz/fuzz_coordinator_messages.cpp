// libFuzzer target: what a party reads from the coordinator (proto/federation.proto's
// CoordinatorMessage), the way the party reads it (src/federated/grpc_party_stream.cpp):
// parsed at most kMaxNesting deep with every byte consumed, checked for unknown fields,
// then by kind — a Welcome through every check of grpc_welcome_check.hpp (structure, the
// default policy, this party's own entry, every other party's certificate and key binding)
// and its transcript digest; a Result's blocks through the signed-block check; an Abort's
// reason made inert (relayed_text.hpp). Each must pass or throw flynn::Error, never crash,
// hang or allocate by a forged size; inert text holds no control character.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "federation_fixture.hpp"
#include "federated/grpc_transcript.hpp"
#include "federated/grpc_welcome_check.hpp"
#include "federated/relayed_text.hpp"
#include "federated/wire_messages.hpp"
#include "flynn/error.hpp"

namespace fed = flynn::federated;
namespace pb = fed::grpcwire::pb;

namespace {

void check_inert(const std::string& text) {
  for (const char c : text)
    if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7f) std::abort();
}

void welcome(const pb::Welcome& w) {
  static const fed::OwnEntry me{"party01", std::string(32, 'k'), std::string(flynn::fuzzing::kCertificatePem), "sig"};
  static const fed::JoinOptions policy;  // the default policy: τ ≥ 3, secure aggregation
  fed::grpcwire::transcript_digest(w);
  try {
    fed::check_welcome(w, policy, std::string(flynn::fuzzing::kCertificatePem), me, nullptr);
  } catch (const flynn::Error& e) {
    check_inert(e.what());
  }
}

void result(const pb::Result& r) {
  static const fed::grpcwire::BlockVerifier verifier(
      std::vector<std::string>(3, std::string(flynn::fuzzing::kCertificatePem)));
  const fed::grpcwire::BlockScope scope{std::string(32, 't'), std::string(16, 'f')};
  for (int i = 0; i < r.blocks_size() && i < r.signatures_size() && i < 8; ++i)
    if (verifier.verifies(scope, {i, r.seq(), pb::ALLGATHER, "agreement"}, r.blocks(i), r.signatures(i)))
      std::abort();  // nothing here was signed with the fixture's key
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto m = fed::grpcwire::parse_coordinator_message(bytes);
  if (!m) return 0;
  if (fed::grpcwire::has_unknown_fields(*m)) return 0;  // refused as the party refuses it
  try {
    if (m->has_welcome()) welcome(m->welcome());
    if (m->has_result()) result(m->result());
    if (m->has_abort()) check_inert(fed::relayed_from("the coordinator", m->abort().reason()));
  } catch (const flynn::Error&) {
  }
  return 0;
}
