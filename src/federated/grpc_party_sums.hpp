#pragma once
// A gRPC party's sums (internal): which sums the agreed configuration allows, and the
// secure-aggregation masks that hide them, bound to what they hide (secure_aggregation.hpp).
//
//   * No sum before the agreement: until every party's fingerprint was checked to equal
//     this party's own (Communicator::on_agreement), a sum is refused — so no masked data
//     leaves a party before it knows that every party runs the same configuration.
//   * After it, only the sums the configuration implies: a sum of another purpose, width
//     or length is refused (the coordinator cannot make a party sum something the
//     agreed protocol does not).
//   * The masks of each sum are derived from its label: federation id, configuration
//     digest, sequence number, width, length and purpose. A sum announced ahead
//     (expect_allreduce) gets its mask computed on a background thread meanwhile.
#include <cstdint>
#include <future>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flynn/federated/communicator.hpp"
#include "flynn/federated/secure_aggregation.hpp"

namespace flynn::federated {

/// The sums an agreed configuration implies.
class AgreedSums {
 public:
  /// Records the agreement (once).
  void agree(std::string configuration_digest, std::vector<SumShape> sums);
  bool agreed() const { return agreed_; }
  const std::string& digest() const { return digest_; }
  /// Throws FederationError unless the agreement happened and (purpose, word_bytes,
  /// values) is one of its sums.
  void check(std::string_view purpose, std::size_t word_bytes, std::size_t values) const;
  /// Bytes of the largest agreed sum (0 before the agreement).
  std::size_t largest_bytes() const;

 private:
  bool agreed_ = false;
  std::string digest_;
  std::vector<SumShape> sums_;
};

/// One party's masks over a federation.
class SumMasks {
 public:
  SumMasks(int rank, const X25519KeyPair& keys, const std::vector<std::string>& public_keys,
           std::string federation_id);
  ~SumMasks();

  /// Starts computing the mask of the sum at `seq` on a background thread.
  void prepare(const std::string& configuration, std::uint64_t seq, std::size_t values, std::size_t word_bytes,
               std::string_view purpose);
  /// Adds this party's masks to `values`, the sum at `seq` (the prepared one when it
  /// matches). Returns the seconds it took.
  double mask(std::span<std::uint32_t> values, const std::string& configuration, std::uint64_t seq,
              std::string_view purpose);
  double mask(std::span<std::uint64_t> values, const std::string& configuration, std::uint64_t seq,
              std::string_view purpose);

 private:
  std::string label(const std::string& configuration, std::uint64_t seq, std::size_t word_bytes, std::size_t values,
                    std::string_view purpose);
  template <class T>
  double apply(std::span<T> values, const std::string& configuration, std::uint64_t seq, std::string_view purpose);

  PairwiseMasker masker_;
  std::string federation_id_;
  std::uint64_t sums_masked_ = 0;  // the unbound labels of a test's control count sums
  struct Prepared {
    std::string label;
    std::size_t word_bytes = 0;
    std::future<std::vector<std::uint32_t>> mask32;
    std::future<std::vector<std::uint64_t>> mask64;
  };
  std::optional<Prepared> prepared_;
};

}  // namespace flynn::federated
