#include "federated/grpc_party_sums.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "federated/safety_switches.hpp"
#include "flynn/federated/party.hpp"

namespace flynn::federated {

void AgreedSums::agree(std::string configuration_digest, std::vector<SumShape> sums) {
  if (agreed_) throw FederationError("the party protocol agreed twice on its configuration");
  agreed_ = true;
  digest_ = std::move(configuration_digest);
  sums_ = std::move(sums);
}

void AgreedSums::check(std::string_view purpose, std::size_t word_bytes, std::size_t values) const {
  if (!agreed_)
    throw FederationError(fmt::format(
        "this party was asked to sum {} before every party's configuration was checked equal to its own: "
        "refusing to send masked data before the agreement", purpose.empty() ? "a vector" : purpose));
  const SumShape asked{std::string(purpose), word_bytes, values};
  if (std::find(sums_.begin(), sums_.end(), asked) == sums_.end())
    throw FederationError(fmt::format(
        "this party was asked to sum {} {}-byte values for '{}', which the agreed configuration does not "
        "imply: refusing", values, word_bytes, purpose));
}

std::size_t AgreedSums::largest_bytes() const {
  std::size_t most = 0;
  for (const SumShape& s : sums_) most = std::max(most, s.values * s.word_bytes);
  return most;
}

SumMasks::SumMasks(int rank, const X25519KeyPair& keys, const std::vector<std::string>& public_keys,
                   std::string federation_id)
    : masker_(rank, keys, public_keys, federation_id), federation_id_(std::move(federation_id)) {}

SumMasks::~SumMasks() = default;  // a pending precomputation is waited for

// What the sum's pads are bound to. Without the binding (a test's control) the label is
// the sum's ordinal alone, as before protocol 3: then the k-th sums of two parties share
// their pads whatever they hold.
std::string SumMasks::label(const std::string& configuration, std::uint64_t seq, std::size_t word_bytes,
                            std::size_t values, std::string_view purpose) {
  if (!safety_check_on(SafetyCheck::MaskBinding)) return fmt::format("sum {}", sums_masked_ + 1);
  return encode(SumLabel{federation_id_, configuration, seq, static_cast<std::uint32_t>(word_bytes), values, purpose});
}

void SumMasks::prepare(const std::string& configuration, std::uint64_t seq, std::size_t values,
                       std::size_t word_bytes, std::string_view purpose) {
  if (word_bytes != 4 && word_bytes != 8) return;
  prepared_.emplace();
  prepared_->label = label(configuration, seq, word_bytes, values, purpose);
  prepared_->word_bytes = word_bytes;
  const PairwiseMasker* m = &masker_;
  // The mask is what masking a zero vector adds.
  if (word_bytes == 4)
    prepared_->mask32 = std::async(std::launch::async, [m, values, l = prepared_->label] {
      std::vector<std::uint32_t> z(values, 0);
      m->mask(std::span<std::uint32_t>(z), l);
      return z;
    });
  else
    prepared_->mask64 = std::async(std::launch::async, [m, values, l = prepared_->label] {
      std::vector<std::uint64_t> z(values, 0);
      m->mask(std::span<std::uint64_t>(z), l);
      return z;
    });
}

template <class T>
double SumMasks::apply(std::span<T> values, const std::string& configuration, std::uint64_t seq,
                       std::string_view purpose) {
  const auto t = std::chrono::steady_clock::now();
  const std::string l = label(configuration, seq, sizeof(T), values.size(), purpose);
  ++sums_masked_;
  std::optional<std::vector<T>> ready;
  if (prepared_ && prepared_->label == l && prepared_->word_bytes == sizeof(T)) {
    if constexpr (sizeof(T) == 4) ready = prepared_->mask32.get();
    else ready = prepared_->mask64.get();
  }
  prepared_.reset();  // waits for an unused precomputation
  if (ready && ready->size() == values.size())
    for (std::size_t i = 0; i < values.size(); ++i) values[i] += (*ready)[i];
  else
    masker_.mask(values, l);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double SumMasks::mask(std::span<std::uint32_t> values, const std::string& configuration, std::uint64_t seq,
                      std::string_view purpose) {
  return apply(values, configuration, seq, purpose);
}

double SumMasks::mask(std::span<std::uint64_t> values, const std::string& configuration, std::uint64_t seq,
                      std::string_view purpose) {
  return apply(values, configuration, seq, purpose);
}

}  // namespace flynn::federated
