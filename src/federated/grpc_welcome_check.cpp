#include "federated/grpc_welcome_check.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "federated/relayed_text.hpp"
#include "federated/safety_switches.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/party.hpp"

namespace flynn::federated {

using grpcwire::pb::Welcome;

namespace {

// Names from the Welcome are the coordinator's text: shown escaped.
std::string quoted_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + inert_text(n, 100) + "'";
  return out.empty() ? "none" : out;
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// τ is the number of names; every per-rank list must have one entry per name, and the
// names are the distinct CNs in sorted order.
void check_structure(const Welcome& w) {
  const int n = w.names_size();
  if (n < 1 || w.parties() != n || w.public_keys_size() != n || w.certificates_size() != n ||
      w.key_signatures_size() != n || w.rank() < 0 || w.rank() >= n)
    throw FederationError(fmt::format(
        "the coordinator's welcome is malformed ({} parties, {} names, {} keys, {} certificates, {} key "
        "signatures, rank {})", w.parties(), n, w.public_keys_size(), w.certificates_size(),
        w.key_signatures_size(), w.rank()));
  for (int r = 0; r < n; ++r) {
    if (w.names(r).empty()) throw FederationError(fmt::format("the coordinator's welcome gives rank {} no name", r));
    // Names are printed at every party: one that would act on a terminal (or is longer than
    // any real CN) is refused rather than shown.
    if (w.names(r).size() > 256 || (safety_check_on(SafetyCheck::InertText) && inert_text(w.names(r)) != w.names(r)))
      throw FederationError(fmt::format(
          "the coordinator's welcome gives rank {} a name with control or layout characters ('{}'): refusing", r,
          inert_text(w.names(r), 100)));
    if (r > 0 && !(w.names(r - 1) < w.names(r)))
      throw FederationError(fmt::format(
          "the coordinator's welcome lists the parties out of order or twice ('{}' at rank {} after '{}'): ranks "
          "are the distinct CNs in sorted order", inert_text(w.names(r), 100), r, inert_text(w.names(r - 1), 100)));
  }
  if (w.federation_id().size() != 16)
    throw FederationError(fmt::format("the coordinator's federation id has {} bytes, not 16", w.federation_id().size()));
  if (!(std::isfinite(w.deadline_seconds()) && w.deadline_seconds() > 0))
    throw FederationError(fmt::format("the coordinator's deadline {} s is not positive", w.deadline_seconds()));
}

void check_policy(const Welcome& w, const JoinOptions& o) {
  const int n = w.names_size();
  const std::vector<std::string> names(w.names().begin(), w.names().end());
  if (n < o.min_parties)
    throw FederationError(fmt::format(
        "the coordinator's welcome names {} part{} ({}); this party's policy requires at least {} (with fewer, "
        "the sums reveal too much of one party's data): refusing. Lower it with --min-parties",
        n, n == 1 ? "y" : "ies", quoted_names(names), o.min_parties));
  if (o.require_secure_aggregation && !w.secure_aggregation())
    throw FederationError(
        "the coordinator turned secure aggregation off; this party's policy requires it (the coordinator would "
        "see this party's exact counts, row totals and release): refusing. --allow-no-secure-aggregation "
        "accepts a federation without it");
  if (o.expect_parties.empty()) return;
  for (const std::string& name : names)
    if (std::find(o.expect_parties.begin(), o.expect_parties.end(), name) == o.expect_parties.end())
      throw FederationError(fmt::format(
          "the coordinator's welcome names '{}', which is not among the parties this party agreed to federate "
          "with (--expect-parties {}): refusing", inert_text(name, 100), comma_list(o.expect_parties)));
  for (const std::string& name : o.expect_parties)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw FederationError(fmt::format(
          "the coordinator's welcome does not name '{}', one of the parties this party agreed to federate with "
          "(--expect-parties {}; all must take part): refusing", name, comma_list(o.expect_parties)));
}

void check_own_entry(const Welcome& w, const OwnEntry& me) {
  const int r = w.rank();
  if (w.public_keys(r) != me.public_key || w.names(r) != me.name)
    throw FederationError(fmt::format(
        "the coordinator's welcome gives this party ('{}', rank {}) another key or name than it sent: refusing "
        "to mask (the coordinator may be substituting keys)", me.name, r));
  if (w.certificates(r) != me.certificate || w.key_signatures(r) != me.key_signature)
    throw FederationError(fmt::format(
        "the coordinator's welcome gives this party ('{}', rank {}) another certificate or key signature than "
        "it sent: refusing (the coordinator may be substituting keys)", me.name, r));
}

// Always, not only with secure aggregation: every signed block is checked with these
// certificates, so each must speak for the name at its rank.
void check_peers(const Welcome& w, const std::string& ca_pem, const RevocationList* crl) {
  for (int r = 0; r < w.names_size(); ++r) {
    if (r == w.rank()) continue;
    const std::string who = fmt::format("party '{}' (rank {})", inert_text(w.names(r), 100), r);
    try {
      if (w.public_keys(r).size() != 32) throw Error("its X25519 public key is not 32 bytes");
      verify_exchange_key(ca_pem, w.certificates(r), w.names(r), w.public_keys(r), w.key_signatures(r));
    } catch (const Error& e) {
      throw FederationError(fmt::format(
          "{}: {}; refusing to go on with its key (the coordinator may be substituting keys)", who, e.what()));
    }
    if (crl && safety_check_on(SafetyCheck::PeerRevocation)) {
      try {
        crl->check(w.certificates(r), who);
      } catch (const Error& e) {
        throw FederationError(fmt::format("{}: refusing to federate with a revoked party", e.what()));
      }
    }
  }
}

}  // namespace

void check_join_policy(const JoinOptions& o, const std::string& my_cn) {
  if (o.min_parties < 1) throw Error(fmt::format("--min-parties {}: must be at least 1", o.min_parties));
  if (o.expect_parties.empty()) return;
  std::vector<std::string> sorted = o.expect_parties;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].empty()) throw Error("--expect-parties: an empty name");
    if (i > 0 && sorted[i] == sorted[i - 1])
      throw Error(fmt::format("--expect-parties: '{}' is listed twice", sorted[i]));
  }
  if (std::find(sorted.begin(), sorted.end(), my_cn) == sorted.end())
    throw Error(fmt::format("--expect-parties {}: does not list this party's own name '{}' (its certificate's CN); "
                            "the list names every party of the federation", comma_list(o.expect_parties), my_cn));
  if (static_cast<int>(sorted.size()) < o.min_parties)
    throw Error(fmt::format("--expect-parties names {} parties, fewer than --min-parties {}", sorted.size(),
                            o.min_parties));
}

void check_welcome(const Welcome& w, const JoinOptions& o, const std::string& ca_pem, const OwnEntry& me,
                   const RevocationList* crl) {
  check_structure(w);
  check_policy(w, o);
  check_own_entry(w, me);
  check_peers(w, ca_pem, crl);
}

}  // namespace flynn::federated
