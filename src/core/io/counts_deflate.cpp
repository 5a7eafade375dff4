#include "core/io/counts_deflate.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace flynn::io::detail {

namespace {

constexpr std::uint32_t kAdlerBase = 65521;

// Fixed Huffman code of RFC 1951 §3.2.6, bit-reversed: deflate sends Huffman codes
// most-significant bit first into a least-significant-bit-first stream.
struct FixedCode {
  std::array<std::uint16_t, 288> bits{};
  std::array<std::uint8_t, 288> length{};
  FixedCode() {
    for (int sym = 0; sym < 288; ++sym) {
      int code, len;
      if (sym < 144) { code = 0x30 + sym; len = 8; }
      else if (sym < 256) { code = 0x190 + (sym - 144); len = 9; }
      else if (sym < 280) { code = sym - 256; len = 7; }
      else { code = 0xC0 + (sym - 280); len = 8; }
      int rev = 0;
      for (int i = 0; i < len; ++i) rev |= ((code >> i) & 1) << (len - 1 - i);
      bits[sym] = static_cast<std::uint16_t>(rev);
      length[sym] = static_cast<std::uint8_t>(len);
    }
  }
};

// Match lengths 3..258: their length symbol (257..285) and extra bits.
struct LengthCode {
  std::array<std::uint16_t, 259> symbol{};
  std::array<std::uint8_t, 259> extra_bits{};
  std::array<std::uint16_t, 259> extra{};
  LengthCode() {
    static constexpr std::uint16_t kBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                                15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                                67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr std::uint8_t kExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (int i = 0; i < 29; ++i) {
      const int last = i == 28 ? 258 : (i == 27 ? 257 : kBase[i + 1] - 1);
      for (int len = kBase[i]; len <= last; ++len) {
        symbol[len] = static_cast<std::uint16_t>(257 + i);
        extra_bits[len] = kExtra[i];
        extra[len] = static_cast<std::uint16_t>(len - kBase[i]);
      }
    }
  }
};

class Encoder {
 public:
  explicit Encoder(std::string& out) : out_(out) {}

  void bits(std::uint64_t value, int n) {
    buffer_ |= value << count_;
    count_ += n;
    while (count_ >= 8) {
      out_.push_back(static_cast<char>(buffer_ & 0xFF));
      buffer_ >>= 8;
      count_ -= 8;
    }
  }
  void symbol(int sym) { bits(code().bits[sym], code().length[sym]); }
  void flush_to_byte() {
    if (count_ > 0) bits(0, 8 - count_);
  }

  // `n` copies of byte `x`: a literal, then matches at distance 1 (distance code 0: five
  // zero bits), then the one or two bytes too short for a match as literals.
  void run(unsigned char x, std::uint64_t n) {
    raw_length_ += n;
    adler_run(x, n);
    symbol(x);
    --n;
    while (n >= 3) {
      const auto len = static_cast<int>(std::min<std::uint64_t>(n, 258));
      symbol(lengths().symbol[len]);
      if (lengths().extra_bits[len]) bits(lengths().extra[len], lengths().extra_bits[len]);
      bits(0, 5);
      n -= static_cast<std::uint64_t>(len);
    }
    for (; n > 0; --n) symbol(x);
  }

  std::uint64_t raw_length() const { return raw_length_; }
  std::uint32_t adler() const { return static_cast<std::uint32_t>((b_ << 16) | a_); }

 private:
  static const FixedCode& code() {
    static const FixedCode c;
    return c;
  }
  static const LengthCode& lengths() {
    static const LengthCode l;
    return l;
  }
  // Adler-32 over n bytes of value x in O(1): a grows by n·x, b by n·a + x·n(n+1)/2.
  void adler_run(unsigned char x, std::uint64_t n) {
    const unsigned __int128 N = n;
    const unsigned __int128 tri = N * (N + 1) / 2;
    const unsigned __int128 b = b_ + N * a_ + tri * x;
    const unsigned __int128 a = a_ + N * x;
    a_ = static_cast<std::uint64_t>(a % kAdlerBase);
    b_ = static_cast<std::uint64_t>(b % kAdlerBase);
  }

  std::string& out_;
  std::uint64_t buffer_ = 0;
  int count_ = 0;
  std::uint64_t raw_length_ = 0;
  std::uint64_t a_ = 1, b_ = 0;
};

}  // namespace

std::string deflate_counts(const ClassCounts& counts, std::uint64_t& raw_length) {
  std::string out;
  out.reserve(1024 + counts.values().size() / 64);
  out.push_back(static_cast<char>(0x78));  // CMF: deflate, 32 KiB window
  out.push_back(static_cast<char>(0x01));  // FLG: fastest-level hint, (CMF·256+FLG) % 31 == 0
  Encoder e(out);
  e.bits(1, 1);  // BFINAL: the only block
  e.bits(1, 2);  // BTYPE 01: fixed Huffman codes
  int run_byte = -1;
  std::uint64_t run_length = 0;
  auto push = [&](unsigned char byte) {
    if (byte == run_byte) {
      ++run_length;
      return;
    }
    if (run_length) e.run(static_cast<unsigned char>(run_byte), run_length);
    run_byte = byte;
    run_length = 1;
  };
  const std::vector<std::uint32_t>& values = counts.values();
  const std::size_t n = values.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t v = values[i];
    if (v == 0 && run_byte == 0) {
      // The common case, a zero extending a run of zeros: count the run in a tight loop.
      std::size_t j = i + 1;
      while (j < n && values[j] == 0) ++j;
      run_length += j - i;
      i = j - 1;
      continue;
    }
    while (v >= 0x80) {
      push(static_cast<unsigned char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    push(static_cast<unsigned char>(v));
  }
  if (run_length) e.run(static_cast<unsigned char>(run_byte), run_length);
  e.bits(0, 7);  // end of block: symbol 256, seven zero bits
  e.flush_to_byte();
  const std::uint32_t adler = e.adler();
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((adler >> shift) & 0xFF));
  raw_length = e.raw_length();
  return out;
}

}  // namespace flynn::io::detail
