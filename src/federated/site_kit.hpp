#pragma once
// The files of one site's kit (internal; provision.cpp): kit.json, README.txt and the PEM
// files, and the coordinator address they are written for.
#include <string>
#include <vector>

#include "federated/certificate_issuer.hpp"
#include "federated/kit_folder.hpp"

namespace flynn::federated {

/// HOST:PORT split ("[::1]:7000" gives "::1"); port -1 when missing or not a number.
struct HostPort {
  std::string host;
  int port = -1;
};
/// Throws flynn::Error naming --coordinator when `address` has no HOST: part.
HostPort split_coordinator_address(const std::string& address);

/// What every kit of one provision shares.
struct KitSpec {
  std::string coordinator;
  std::vector<std::string> parties;
  int min_parties = 3;
  std::string labels;
};

/// The files of the kit of site `name`.
std::vector<KitFile> kit_files(const KitSpec& spec, const std::string& name, bool coordinator,
                               const std::string& ca_pem, const IssuedPem& site, const std::string& crl_pem);

}  // namespace flynn::federated
