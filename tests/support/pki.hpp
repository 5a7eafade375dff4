#pragma once
// Throw-away certificates for the federation tests, made with the openssl CLI at test time
// (a CA, "server" with extended key usage serverAuth, parties with clientAuth; EC P-256,
// quick to make; valid for 127.0.0.1 and localhost), and a bounded wait for a line in a
// log file.
#include <string>
#include <vector>

namespace flynn::test {

/// Waits until `path` contains `needle`; returns the file's text ("" on timeout).
std::string wait_for_text(const std::string& path, const std::string& needle, double seconds);

/// A CA ("ca.pem", "ca.key") and, for each name, a certificate "<name>.pem" with key
/// "<name>.key" signed by it (subject CN = name; EC P-256: quick to make), in `dir`.
/// "server" gets extendedKeyUsage serverAuth (the coordinator), every other clientAuth.
void make_pki(const std::string& dir, const std::vector<std::string>& names);

/// A CRL of the CA in `dir` (made by make_pki) revoking "<name>.pem" for each of `revoked`,
/// written to `out` (`extra`: more `openssl ca -gencrl` options). Fails the test when the
/// openssl CLI does.
void make_crl(const std::string& dir, const std::vector<std::string>& revoked, const std::string& out,
              const std::string& extra = "");

/// "party00", "party01", …: the CNs of the test parties (sorted = by number).
std::string party_name(int p);

/// make_pki for a coordinator "server" and `parties`.
void make_federation_pki(const std::string& dir, const std::vector<std::string>& parties);

}  // namespace flynn::test
