#include "grpc_transcript.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <openssl/evp.h>

#include "flynn/error.hpp"
#include "flynn/federated/key_binding.hpp"

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
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw Error("OpenSSL SHA-256 failed");
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string sign_transcript(const std::string& private_key_pem, std::string_view digest) {
  try {
    return sign_with_certificate_key(private_key_pem, digest);
  } catch (const Error& e) {
    throw Error(std::string("cannot sign the federation's transcript: ") + e.what());
  }
}

bool transcript_signed_by(const std::string& certificate_pem, std::string_view digest,
                          std::string_view signature) {
  return signed_by_certificate(certificate_pem, digest, signature);
}

}  // namespace flynn::federated::grpcwire
