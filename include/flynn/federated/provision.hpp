#pragma once
// Provisioning a federation (`flynn federated provision`, `revoke`): a CA and one kit per
// site, so that `flynn federated serve --kit DIR` and `join --kit DIR --data FILE` need no
// other TLS or address flag (docs/guide/federated.md, "Provisioning").
//
// Layout of `provision --out DIR`:
//   DIR/ca/           the CA: ca.pem, ca.key (0600), crl.pem, sites.json (each site's role
//                     and certificate serial, and which are revoked). Stays with the
//                     organisation that provisions; never sent to a site.
//   DIR/coordinator/  the coordinator's kit (its name is --coordinator-name)
//   DIR/<party>/      one kit per party
// A kit (mode 0700): ca.pem, cert.pem, key.pem (0600), crl.pem, kit.json (kit_file_name:
// the role, the site's name, the coordinator's address, the parties, the policy) and
// README.txt. The coordinator's certificate has extendedKeyUsage serverAuth and the
// coordinator host as subjectAltName; a party's has clientAuth; each is issued for its CN.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace flynn::federated {

/// The name of a kit's configuration file.
inline constexpr const char* kit_file_name = "kit.json";

/// What `flynn federated provision` is given.
struct ProvisionRequest {
  std::string out;                             ///< DIR: where the CA and the kits go
  std::string coordinator;                     ///< HOST:PORT the parties connect to
  std::string coordinator_name = "coordinator";  ///< the coordinator's CN and kit folder
  std::vector<std::string> parties;            ///< party CNs, one kit each
  int days = 365;                              ///< validity of the certificates and the CRL
  int min_parties = 3;                         ///< the parties' --min-parties, in their kits
  std::string labels;                          ///< the coordinator's --labels ("" = give at serve)
};

/// What provision wrote: the kit folders, coordinator first.
struct ProvisionOutcome {
  std::string ca_dir;
  std::vector<std::string> kits;
  bool ca_created = false;  ///< false: DIR/ca existed and issued the new kits
};

/// Writes the kits of `request` (and the CA, unless DIR/ca holds one, which then issues
/// them). Refuses, before writing anything, an existing kit folder (kits are never
/// overwritten: revoke and choose another name), a bad address or name, fewer parties than
/// min_parties. Every kit appears whole or not at all (written beside, then renamed into
/// place without replacing anything). Throws flynn::Error naming the problem.
ProvisionOutcome provision(const ProvisionRequest& request);

/// Revokes the certificate of site `name` provisioned under `dir`: DIR/ca/crl.pem is
/// re-issued listing it, and copied into every kit under DIR (the copies to send to the
/// sites). Returns the sites' kit folders updated. Throws flynn::Error for an unknown name.
std::vector<std::string> revoke(const std::string& dir, const std::string& name, int crl_days = 365);

/// A kit as read from its kit.json (paths made absolute from the kit folder).
struct SiteKit {
  std::string dir;
  std::string role;         ///< "coordinator" or "party"
  std::string name;         ///< this site's CN
  std::string coordinator;  ///< HOST:PORT
  std::string server_name;  ///< the host of `coordinator`
  std::vector<std::string> parties;
  int min_parties = 3;
  std::string labels;
  std::string ca, cert, key, crl;  ///< files of the kit
};

/// Reads the kit in folder `dir`; throws flynn::Error naming the folder and the problem
/// (not a kit, a file missing, a field of the wrong type, a kit.json over
/// kMaxSiteFileBytes).
SiteKit read_kit(const std::string& dir);

/// The most bytes of a kit.json or a project file that are read.
inline constexpr std::size_t kMaxSiteFileBytes = std::size_t{1} << 20;

/// A kit.json's text as a SiteKit (its file names joined to `dir`; nothing checked on
/// disk). Throws flynn::Error naming `dir` and the problem.
SiteKit parse_kit_config(std::string_view text, const std::string& dir);

/// A federation's project file (`flynn federated provision --project FILE`), JSON:
///   {"coordinator": "HOST:PORT", "parties": ["a", "b", "c"],
///    "coordinator_name": "coordinator", "days": 365, "min_parties": 3, "labels": "L1,L2",
///    "out": "DIR"}
/// "coordinator" and "parties" are required, the rest optional (the flags' defaults); an
/// unknown key, a value of the wrong type or out of range is refused naming `source` and
/// the key.
ProvisionRequest parse_provision_project(std::string_view text, const std::string& source);
/// The same, read from the file `path` (at most kMaxSiteFileBytes).
ProvisionRequest read_provision_project(const std::string& path);

}  // namespace flynn::federated
