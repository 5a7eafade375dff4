#include "grpc_peer_identity.hpp"

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/peer_certificate.hpp"

namespace flynn::federated {

void check_coordinator_identity(const grpc::ClientContext& context, const RevocationList* crl) {
  std::string pem;
  if (const auto auth = context.auth_context()) {
    const auto pems = auth->FindPropertyValues("x509_pem_cert");
    if (!pems.empty()) pem.assign(pems.front().data(), pems.front().size());
  }
  if (pem.empty())
    throw FederationError("the coordinator presented no certificate that this party could check");
  try {
    check_extended_key_usage(pem, TlsRole::Server, "the coordinator");
    if (crl) crl->check(pem, "the coordinator");
  } catch (const Error& e) {
    throw FederationError(fmt::format("{}: refusing to take part", e.what()));
  }
}

}  // namespace flynn::federated
