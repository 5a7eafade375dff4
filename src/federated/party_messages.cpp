#include "federated/party_messages.hpp"

#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace flynn::federated::detail {

namespace {
constexpr char kHelloMagic[8] = {'F', 'L', 'Y', 'N', 'N', 'F', 'E', 'D'};

// The report block's first byte: which of its fields carry the party's values.
constexpr std::uint8_t kReportHasRows = 1, kReportHasTimings = 2;

void put_traffic(io::ByteWriter& w, const Traffic& t) {
  w.u64(t.bytes_sent);
  w.u64(t.bytes_received);
  w.u64(t.collectives);
}

Traffic get_traffic(io::ByteReader& r) {
  Traffic t;
  t.bytes_sent = r.u64();
  t.bytes_received = r.u64();
  t.collectives = r.u64();
  return t;
}

void put_timings(io::ByteWriter& w, const PartyTimings& t) {
  for (double v : {t.agree, t.setup, t.local, t.privatize, t.wait, t.aggregate, t.finalize,
                   t.training, t.total, t.compute_cpu})
    w.f64(v);
}

// Whether every timing is +0.0, as a withheld block writes them.
bool zero_bits(const PartyTimings& t) {
  for (double v : {t.agree, t.setup, t.local, t.privatize, t.wait, t.aggregate, t.finalize, t.training, t.total,
                   t.compute_cpu})
    if (std::bit_cast<std::uint64_t>(v) != 0) return false;
  return true;
}

PartyTimings get_timings(io::ByteReader& r) {
  PartyTimings t;
  for (double* v : {&t.agree, &t.setup, &t.local, &t.privatize, &t.wait, &t.aggregate,
                    &t.finalize, &t.training, &t.total, &t.compute_cpu})
    *v = r.f64();
  return t;
}

}  // namespace

// The report block: flags, rows, timings (zeros where withheld), traffic, the model's
// CRC-32, size and SHA-256. Fixed size whatever is withheld.
std::string encode_report(const PartyReport& rep) {
  io::ByteWriter w;
  w.u8((rep.rows ? kReportHasRows : 0) | (rep.timings ? kReportHasTimings : 0));
  w.u64(rep.rows.value_or(0));
  put_timings(w, rep.timings.value_or(PartyTimings{}));
  put_traffic(w, rep.control_traffic);
  put_traffic(w, rep.aggregate_traffic);
  w.u32(rep.model_crc32);
  w.u64(rep.model_bytes);
  w.bytes(rep.model_sha256);
  return std::move(w.data());
}

PartyReport decode_report(std::string_view block, int party) {
  io::ByteReader r = message_reader(block, party, "report");
  PartyReport rep;
  rep.rank = party;
  const std::uint8_t flags = r.u8();
  if (flags & ~(kReportHasRows | kReportHasTimings)) r.fail("");
  const std::uint64_t rows = r.u64();
  if (flags & kReportHasRows) rep.rows = rows;
  else if (rows != 0) r.fail("");  // a withheld field is zeros: nothing rides in it
  const PartyTimings timings = get_timings(r);
  if (flags & kReportHasTimings) rep.timings = timings;
  else if (!zero_bits(timings)) r.fail("");
  rep.control_traffic = get_traffic(r);
  rep.aggregate_traffic = get_traffic(r);
  rep.model_crc32 = r.u32();
  rep.model_bytes = r.u64();
  rep.model_sha256 = std::string(r.bytes(32));
  r.done();
  return rep;
}

std::string bounded_reason(std::string_view reason) {
  if (reason.size() <= kMaxReasonBytes) return std::string(reason);
  return std::string(reason.substr(0, kMaxReasonBytes)) + fmt::format("… ({} more bytes)", reason.size() - kMaxReasonBytes);
}

io::ByteReader message_reader(std::string_view bytes, int party, const char* what) {
  return io::ByteReader(bytes, [party, what](const std::string&) {
    throw FederationError(fmt::format("party {} sent a malformed {} message", party, what));
  });
}

std::string encode_hello(const Hello& h) {
  io::ByteWriter w;
  w.bytes(std::string_view(kHelloMagic, sizeof kHelloMagic));
  w.u32(kProtocolVersion);
  w.str(h.error);
  w.u32(static_cast<std::uint32_t>(h.fingerprint.size()));
  for (const auto& [field, value] : h.fingerprint) {
    w.str(field);
    w.str(value);
  }
  w.u8(h.seed_given ? 1 : 0);
  w.u64(h.seed);
  w.u8(h.has_rows ? 1 : 0);
  w.u32(static_cast<std::uint32_t>(h.rows_per_class.size()));
  for (std::uint64_t r : h.rows_per_class) w.u64(r);
  return std::move(w.data());
}

Hello decode_hello(std::string_view bytes, int party) {
  io::ByteReader r = message_reader(bytes, party, "agreement");
  if (bytes.size() < sizeof kHelloMagic ||
      std::memcmp(bytes.data(), kHelloMagic, sizeof kHelloMagic) != 0)
    r.fail("");
  r.bytes(sizeof kHelloMagic);
  const std::uint32_t version = r.u32();
  if (version != kProtocolVersion)
    throw FederationError(fmt::format(
        "party {} speaks federation protocol version {}, this flynn version {}: every party "
        "must run the same flynn release",
        party, version, kProtocolVersion));
  Hello h;
  h.error = r.str();
  const std::uint32_t fields = r.u32();
  if (fields > r.remaining() / 8) r.fail("");
  for (std::uint32_t i = 0; i < fields; ++i) {
    std::string field = r.str();
    std::string value = r.str();
    h.fingerprint.emplace_back(std::move(field), std::move(value));
  }
  // Flags are 0 or 1: anything else is not a block encode_hello wrote.
  auto flag = [&r] {
    const std::uint8_t v = r.u8();
    if (v > 1) r.fail("");
    return v == 1;
  };
  h.seed_given = flag();
  h.seed = r.u64();
  h.has_rows = flag();
  const std::uint32_t n_rows = r.u32();
  if (n_rows > r.remaining() / 8) r.fail("");
  h.rows_per_class.resize(n_rows);
  for (auto& v : h.rows_per_class) v = r.u64();
  r.done();
  return h;
}

std::string encode_release(const std::vector<DpEntry>& entries) {
  io::ByteWriter w;
  w.u32(static_cast<std::uint32_t>(entries.size()));
  for (const DpEntry& e : entries) {
    w.u32(e.index);
    w.u32(e.value);
  }
  return std::move(w.data());
}

std::vector<DpEntry> decode_release(std::string_view bytes, int party, std::uint32_t T) {
  io::ByteReader r = message_reader(bytes, party, "DP release");
  const std::uint32_t n = r.u32();
  // Every party must release exactly T entries: that is what the budget accounts for.
  if (n != T)
    throw FederationError(fmt::format("party {} released {} entries, expected T = {}", party, n, T));
  // Before allocating: the block must hold the n entries it announces (a forged count
  // would otherwise allocate by it; found by fuzz_federated_messages).
  if (n > r.remaining() / 8) r.fail("");
  std::vector<DpEntry> out(n);
  for (auto& e : out) {
    e.index = r.u32();
    e.value = r.u32();
  }
  r.done();
  return out;
}

}  // namespace flynn::federated::detail
