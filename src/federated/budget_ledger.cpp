#include "flynn/federated/budget_ledger.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

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

std::string file_fingerprint(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read {} to fingerprint it", path));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx);
    throw Error("OpenSSL SHA-256 failed");
  }
  std::vector<char> buf(1 << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (f.gcount() > 0) EVP_DigestUpdate(ctx, buf.data(), static_cast<std::size_t>(f.gcount()));
  }
  unsigned char md[32];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

BudgetLedger::BudgetLedger(std::string path, std::string fingerprint, double budget)
    : path_(std::move(path)), fingerprint_(std::move(fingerprint)), budget_(budget) {
  if (!(std::isfinite(budget) && budget > 0))
    throw Error(fmt::format("--dp-budget {}: must be a positive number", budget));
  if (path_.empty()) throw Error("no DP budget ledger file given");
}

std::vector<LedgerEntry> BudgetLedger::entries() const { return parse(path_); }

double BudgetLedger::spent() const {
  double total = 0;
  for (const LedgerEntry& e : entries())
    if (e.fingerprint == fingerprint_) total += e.epsilon;
  return total;
}

void BudgetLedger::charge(const PrivacyAccount& account, DpUnit unit, const std::string& note) {
  LockedFile file(path_);  // read and append under one lock
  const double spent_before = spent();
  const double cost = account.per_party;
  // A relative tolerance so that e.g. ten releases of 0.1 fit a budget of 1.
  if (spent_before + cost > budget_ * (1 + 1e-9))
    throw Error(fmt::format(
        "DP budget exceeded for this data (fingerprint {}…): {:.6g} already spent, this release "
        "needs {:.6g}, the budget (--dp-budget) is {:.6g}; ledger {}",
        fingerprint_.substr(0, 12), spent_before, cost, budget_, path_));
  std::string clean_note = note;
  for (char& c : clean_note)
    if (c == '\t' || c == '\n') c = ' ';
  file.append(fmt::format("{}\t{}\t{:.17g}\t{}\t{}\t{}\t{}\n", fingerprint_, now_utc(), cost,
                          dp_unit_name(unit), account.T, account.parties, clean_note));
}

}  // namespace flynn::federated
