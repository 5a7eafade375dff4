#pragma once
// The collective in progress at the coordinator (internal to the gRPC transport; protobuf
// only, so a fuzz target drives it): one Contribution per party, checked as it arrives,
// then the Result every party gets.
//
// Checks on arrival (the first problem stops the federation, naming the party): the
// collective's number, one contribution per party, the same operation, root and purpose
// as the first contribution, a purpose of at most kMaxPurposeBytes, a sum of exactly the
// first contribution's size (a whole number of words), a signed block (all-gather, the
// root's broadcast) with a signature of at most kMaxKeySignatureBytes and a block small
// enough that the Result fits the transport's cap. The coordinator never checks a
// signature: the parties do (it could not vouch for one anyway).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "federated/wire_messages.hpp"

namespace flynn::federated {

/// The longest purpose a contribution may name.
inline constexpr std::size_t kMaxPurposeBytes = 64;

class CollectiveStep {
 public:
  using Clock = std::chrono::steady_clock;
  /// `who(rank)` names a party in messages; `max_message_bytes` is the transport's cap.
  CollectiveStep(int parties, std::size_t max_message_bytes, std::function<std::string(int)> who);

  /// What taking a contribution gave: an error (the federation stops with it), or, once
  /// every party contributed, the Result (and the step moves on to the next collective).
  struct Outcome {
    std::string error;
    std::shared_ptr<const grpcwire::pb::CoordinatorMessage> result;
  };
  /// Takes party `rank`'s contribution (its payload is moved out).
  Outcome take(int rank, grpcwire::pb::Contribution& c);

  std::uint64_t seq() const { return seq_; }
  bool in_progress() const { return arrived_ > 0; }
  /// When the collective in progress got its first contribution.
  Clock::time_point first_arrival() const { return first_arrival_; }
  /// Whether party `rank` contributed to the collective in progress.
  bool contributed(int rank) const { return payloads_[static_cast<std::size_t>(rank)].has_value(); }
  /// "#3 (all-reduce (64-bit), counts)".
  std::string describe() const;
  /// Bytes of the largest sum relayed so far.
  std::size_t largest_sum_bytes() const { return largest_sum_; }

 private:
  std::string refuse(int rank, const grpcwire::pb::Contribution& c) const;
  std::shared_ptr<const grpcwire::pb::CoordinatorMessage> combine();

  const int parties_;
  const std::size_t max_message_;
  const std::function<std::string(int)> who_;
  std::uint64_t seq_ = 1;
  grpcwire::pb::Op op_ = grpcwire::pb::OP_UNSPECIFIED;
  int root_ = 0;
  std::string purpose_;
  std::size_t sum_bytes_ = 0;  // of the first contribution to a sum
  std::size_t gathered_ = 0;   // bytes of the all-gather's blocks so far
  std::vector<std::optional<std::string>> payloads_, signatures_;
  int arrived_ = 0;
  Clock::time_point first_arrival_;
  std::size_t largest_sum_ = 0;
};

}  // namespace flynn::federated
