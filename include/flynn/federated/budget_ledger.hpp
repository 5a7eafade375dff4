#pragma once
// A party's differential-privacy budget ledger: a text file, kept by the party, that
// records every DP release made from a data set and refuses a release that would take the
// data's total beyond the budget.
//
// The data is known by its records, not its file (records_fingerprint): the same rows
// reordered, reformatted ("1" / "1.0", spaces, quoting, another delimiter), recompressed
// or in another file format are the same data and share one budget. "The same data" is
// the same multiset of (label, feature vector) as training sees them — see
// records_fingerprint for what that does and does not cover.
//
// Charging: a release costs the ε the party itself spent, PrivacyAccount::per_party
// (ε/τ under --dp-unit paper, ε under --dp-unit record). Releases from the same data
// compose sequentially, so the ledger sums them. (Under the paper's unit the federation
// as a whole claims τ × that: see docs/guide/federated.md, "Privacy unit".)
//
// File format (one release per line, tab-separated, '#' lines are comments):
//   fingerprint  time (UTC, ISO 8601)  epsilon  unit  T  parties  note
// The fingerprint is "records-sha256:<64 hex>" (records_fingerprint). Ledgers written by
// flynn before it keyed releases by the SHA-256 of the data file's bytes (64 hex digits,
// file_fingerprint): they stay readable, and such an entry still counts against the data
// when the file is byte for byte the one it was made from (the legacy key BudgetLedger
// is given); new releases are always recorded under the records key.
// The file is locked (flock) while it is read and appended, so parties of several
// federations sharing one ledger cannot both spend the last of a budget.
#include <string>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/federated/dp.hpp"

namespace flynn::federated {

/// The key of a data set's releases: "records-sha256:" and the hex SHA-256 of the sorted
/// SHA-256 digests of its rows, each over the row's label name and its d feature values'
/// float32 bit patterns in model order (NaN, a missing cell, as one bit pattern; -0 as +0):
/// the multiset of rows as training sees them. So it does not depend on row order, number
/// spelling ("1", "1.0", "1e0"), spaces, quoting, the delimiter, a header line, gzip, or
/// the file format; read against a named public schema (--schema), not on the order of
/// the file's columns either. A duplicated row counts twice. Not the same data: another
/// label column, other feature columns or their order in a positional table, another
/// encoding of a text column (a category missing from one schema reads as an all-zero
/// block), rows added or removed. The ledger guards a data set against being released
/// again and again; it is not a per-person accountant across overlapping data sets.
std::string records_fingerprint(const Dataset& data);

/// Lowercase hex SHA-256 of the file's bytes: the key of ledgers written before
/// records_fingerprint (see the header comment). Throws flynn::Error when unreadable.
std::string file_fingerprint(const std::string& path);

/// One recorded release.
struct LedgerEntry {
  std::string fingerprint;  ///< data key (records_fingerprint, or a legacy file_fingerprint)
  std::string time;         ///< when it was recorded, UTC
  double epsilon = 0;       ///< ε charged to the data
  std::string unit;         ///< "paper" or "record"
  std::uint32_t T = 0;      ///< entries released
  std::uint32_t parties = 0;
  std::string note;         ///< free text (e.g. the coordinator's address)
};

class BudgetLedger {
 public:
  /// A ledger file (created on the first record) for the data with `fingerprint`
  /// (records_fingerprint), which may spend at most `budget` in total (> 0). Entries under
  /// `legacy_fingerprints` (file_fingerprint of the data's file) count against it too.
  BudgetLedger(std::string path, std::string fingerprint, double budget,
               std::vector<std::string> legacy_fingerprints = {});

  /// Every entry of the file (all fingerprints); throws flynn::Error naming the line of a
  /// malformed one.
  std::vector<LedgerEntry> entries() const;
  /// ε already charged to this ledger's data (its fingerprint and legacy fingerprints).
  double spent() const;
  double budget() const { return budget_; }

  /// Records a release spending `account.per_party`, or throws flynn::Error ("DP budget
  /// exceeded: …", naming spent, requested and budget) without recording anything.
  void charge(const PrivacyAccount& account, DpUnit unit, const std::string& note);

 private:
  std::string path_, fingerprint_;
  double budget_;
  std::vector<std::string> legacy_;
};

}  // namespace flynn::federated
