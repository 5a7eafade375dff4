#include "flynn/federated/budget_ledger.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "core/io/byte_codec.hpp"
#include "federated/openssl_util.hpp"

namespace flynn::federated {

namespace {

constexpr const char* kRecordsKeyPrefix = "records-sha256:";

// Holds an exclusive flock on the ledger for its lifetime.
class LockedFile {
 public:
  explicit LockedFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd_ < 0)
      throw Error(fmt::format("cannot open the DP budget ledger {}: {}", path, std::strerror(errno)));
    if (::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      throw Error(fmt::format("cannot lock the DP budget ledger {}: {}", path, std::strerror(errno)));
    }
  }
  ~LockedFile() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  void append(const std::string& text) {
    if (::write(fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size()) || ::fsync(fd_) != 0)
      throw Error(fmt::format("cannot write the DP budget ledger {}: {}", path_, std::strerror(errno)));
  }

 private:
  std::string path_;
  int fd_ = -1;
};

std::vector<LedgerEntry> parse(const std::string& path) {
  std::vector<LedgerEntry> out;
  std::ifstream f(path);
  if (!f) return out;
  std::string line;
  for (std::size_t n = 1; std::getline(f, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, '\t');) cells.push_back(c);
    if (cells.size() < 6)
      throw Error(fmt::format("{}:{}: a ledger line needs at least 6 tab-separated fields", path, n));
    LedgerEntry e;
    e.fingerprint = cells[0];
    e.time = cells[1];
    try {
      std::size_t used = 0;
      e.epsilon = std::stod(cells[2], &used);
      if (used != cells[2].size() || !std::isfinite(e.epsilon) || e.epsilon < 0) throw Error("");
      e.T = static_cast<std::uint32_t>(std::stoul(cells[4]));
      e.parties = static_cast<std::uint32_t>(std::stoul(cells[5]));
    } catch (const std::exception&) {
      throw Error(fmt::format("{}:{}: malformed ledger line (epsilon, T or parties)", path, n));
    }
    e.unit = cells[3];
    if (cells.size() > 6) e.note = cells[6];
    out.push_back(std::move(e));
  }
  return out;
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string records_fingerprint(const Dataset& data) {
  if (data.has_labels && data.labels.size() != data.n_rows)
    throw Error(fmt::format("{}: {} labels for {} rows", data.source, data.labels.size(), data.n_rows));
  const std::size_t d = data.n_features;
  ossl::Sha256 sha;
  // One row: u32 label length, the label's bytes, then d little-endian float32 patterns.
  std::vector<unsigned char> buf;
  std::vector<std::string> rows(data.n_rows);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    const std::string_view label = data.has_labels ? std::string_view(data.classes.name(data.labels[r]))
                                                   : std::string_view();
    buf.resize(4 + label.size() + 4 * d);
    unsigned char* out = buf.data();
    const auto put32 = [&out](std::uint32_t v) {
      for (int i = 0; i < 4; ++i) *out++ = static_cast<unsigned char>(v >> (8 * i));
    };
    put32(static_cast<std::uint32_t>(label.size()));
    std::memcpy(out, label.data(), label.size());
    out += label.size();
    const float* x = data.row(r);
    for (std::size_t j = 0; j < d; ++j) {
      std::uint32_t bits = std::bit_cast<std::uint32_t>(x[j]);
      if (std::isnan(x[j])) bits = 0x7fc00000u;  // every NaN (missing cell) alike
      if (bits == 0x80000000u) bits = 0;         // -0 as +0 (the loaders store +0 already)
      put32(bits);
    }
    rows[r] = sha.update(std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size())).finish();
  }
  // A multiset: sorted, so that the order of the rows does not matter.
  std::sort(rows.begin(), rows.end());
  io::ByteWriter head;
  head.str("flynn records 1");
  head.u64(d);
  head.u64(data.n_rows);
  sha.update(head.data());
  for (const std::string& row : rows) sha.update(row);
  return kRecordsKeyPrefix + ossl::hex(sha.finish());
}

std::string file_fingerprint(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read {} to fingerprint it", path));
  ossl::Sha256 sha;
  std::vector<char> buf(1 << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (f.gcount() > 0) sha.update(std::string_view(buf.data(), static_cast<std::size_t>(f.gcount())));
  }
  return ossl::hex(sha.finish());
}

BudgetLedger::BudgetLedger(std::string path, std::string fingerprint, double budget,
                           std::vector<std::string> legacy_fingerprints)
    : path_(std::move(path)), fingerprint_(std::move(fingerprint)), budget_(budget),
      legacy_(std::move(legacy_fingerprints)) {
  if (!(std::isfinite(budget) && budget > 0))
    throw Error(fmt::format("--dp-budget {}: must be a positive number", budget));
  if (path_.empty()) throw Error("no DP budget ledger file given");
}

std::vector<LedgerEntry> BudgetLedger::entries() const { return parse(path_); }

double BudgetLedger::spent() const {
  double total = 0;
  for (const LedgerEntry& e : entries())
    if (e.fingerprint == fingerprint_ ||
        std::find(legacy_.begin(), legacy_.end(), e.fingerprint) != legacy_.end())
      total += e.epsilon;
  return total;
}

void BudgetLedger::charge(const PrivacyAccount& account, DpUnit unit, const std::string& note) {
  LockedFile file(path_);  // read and append under one lock
  const double spent_before = spent();
  const double cost = account.per_party;
  // A relative tolerance so that e.g. ten releases of 0.1 fit a budget of 1.
  if (spent_before + cost > budget_ * (1 + 1e-9))
    // No fingerprint in the message: the refusal is told to every party and the
    // coordinator, and even a digest of the rows is for this party only.
    throw Error(fmt::format(
        "DP budget exceeded for this data: {:.6g} already spent, this release needs {:.6g}, "
        "the budget (--dp-budget) is {:.6g}; ledger {}",
        spent_before, cost, budget_, path_));
  std::string clean_note = note;
  for (char& c : clean_note)
    if (c == '\t' || c == '\n') c = ' ';
  file.append(fmt::format("{}\t{}\t{:.17g}\t{}\t{}\t{}\t{}\n", fingerprint_, now_utc(), cost,
                          dp_unit_name(unit), account.T, account.parties, clean_note));
}

}  // namespace flynn::federated
