#pragma once
// A party's differential-privacy budget ledger: a text file, kept by the party, that
// records every DP release made from a data set (keyed by the SHA-256 fingerprint of the
// data file) and refuses a release that would take the data's total beyond the budget.
//
// Charging: a release costs the ε the party itself spent, PrivacyAccount::per_party
// (ε/τ under --dp-unit paper, ε under --dp-unit record). Releases from the same data
// compose sequentially, so the ledger sums them. (Under the paper's unit the federation
// as a whole claims τ × that: see docs/federated.md, "Privacy unit".)
//
// File format (one release per line, tab-separated, '#' lines are comments):
//   fingerprint  time (UTC, ISO 8601)  epsilon  unit  T  parties  note
// The file is locked (flock) while it is read and appended, so parties of several
// federations sharing one ledger cannot both spend the last of a budget.
#include <string>
#include <vector>

#include "flynn/federated/dp.hpp"

namespace flynn::federated {

/// Lowercase hex SHA-256 of the file's bytes; throws flynn::Error when unreadable.
std::string file_fingerprint(const std::string& path);

/// One recorded release.
struct LedgerEntry {
  std::string fingerprint;  ///< data fingerprint (file_fingerprint)
  std::string time;         ///< when it was recorded, UTC
  double epsilon = 0;       ///< ε charged to the data
  std::string unit;         ///< "paper" or "record"
  std::uint32_t T = 0;      ///< entries released
  std::uint32_t parties = 0;
  std::string note;         ///< free text (e.g. the coordinator's address)
};

class BudgetLedger {
 public:
  /// A ledger file (created on the first record) for the data with `fingerprint`, which
  /// may spend at most `budget` in total (> 0).
  BudgetLedger(std::string path, std::string fingerprint, double budget);

  /// Every entry of the file (all fingerprints); throws flynn::Error naming the line of a
  /// malformed one.
  std::vector<LedgerEntry> entries() const;
  /// ε already charged to this ledger's fingerprint.
  double spent() const;
  double budget() const { return budget_; }

  /// Records a release spending `account.per_party`, or throws flynn::Error ("DP budget
  /// exceeded: …", naming spent, requested and budget) without recording anything.
  void charge(const PrivacyAccount& account, DpUnit unit, const std::string& note);

 private:
  std::string path_, fingerprint_;
  double budget_;
};

}  // namespace flynn::federated
