#include "federated/grpc_collective_step.hpp"

#include <fmt/format.h>

#include "federated/relayed_text.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/grpc.hpp"

namespace flynn::federated {

using namespace grpcwire;

CollectiveStep::CollectiveStep(int parties, std::size_t max_message_bytes, std::function<std::string(int)> who)
    : parties_(parties),
      max_message_(max_message_bytes),
      who_(std::move(who)),
      payloads_(static_cast<std::size_t>(parties)),
      signatures_(static_cast<std::size_t>(parties)) {}

std::string CollectiveStep::describe() const {
  return fmt::format("#{} ({}, {})", seq_, op_name(op_), inert_text(purpose_, kMaxPurposeBytes));
}

// Why party `rank`'s contribution cannot be taken ("" when it can).
std::string CollectiveStep::refuse(int rank, const pb::Contribution& c) const {
  const std::string who = who_(rank);
  if (c.seq() != seq_) return fmt::format("{} sent collective #{} while #{} is in progress", who, c.seq(), seq_);
  if (payloads_[static_cast<std::size_t>(rank)]) return fmt::format("{} contributed twice to collective #{}", who, seq_);
  if (c.purpose().size() > kMaxPurposeBytes)
    return fmt::format("{} named a purpose of {} bytes (at most {})", who, c.purpose().size(), kMaxPurposeBytes);
  if (arrived_ > 0 && (c.op() != op_ || c.purpose() != purpose_ || (op_ == pb::BROADCAST && c.root() != root_)))
    return fmt::format("{} called a {} for '{}' where the others called a {} for '{}': the parties run different "
                       "flynn versions or configurations", who, op_name(c.op()), inert_text(c.purpose(), kMaxPurposeBytes),
                       op_name(op_), inert_text(purpose_, kMaxPurposeBytes));
  const std::size_t word = word_bytes(c.op());
  if (word == 0 && c.op() != pb::ALLGATHER && c.op() != pb::BROADCAST)
    return fmt::format("{} sent a collective of an unknown operation ({})", who, static_cast<int>(c.op()));
  if (c.op() == pb::BROADCAST && (c.root() < 0 || c.root() >= parties_))
    return fmt::format("{} broadcast from rank {}, which does not exist", who, c.root());
  if (word != 0) {
    if (c.payload().size() % word != 0)
      return fmt::format("{} sent {} bytes to a {}: not whole words", who, c.payload().size(), op_name(c.op()));
    if (arrived_ > 0 && c.payload().size() != sum_bytes_)
      return fmt::format("{} sent {} bytes to collective {}, the others {}", who, c.payload().size(), describe(),
                         sum_bytes_);
    return "";
  }
  const bool sends = c.op() == pb::ALLGATHER || c.root() == rank;
  if (!sends) return c.payload().empty() && c.signature().empty() ? "" : fmt::format("{} broadcast as a receiver", who);
  if (c.signature().size() > kMaxKeySignatureBytes)
    return fmt::format("{} signed its block with {} bytes (at most {})", who, c.signature().size(), kMaxKeySignatureBytes);
  // The Result carries every block: together they must fit the transport's cap.
  const std::size_t budget = max_message_ > kFramingBytes ? max_message_ - kFramingBytes : 0;
  if (gathered_ + c.payload().size() + c.signature().size() + 16 * static_cast<std::size_t>(parties_) > budget)
    return fmt::format("{} sent a block of {} bytes: the collective's result would exceed --max-message-mb", who,
                       c.payload().size());
  return "";
}

CollectiveStep::Outcome CollectiveStep::take(int rank, pb::Contribution& c) {
  Outcome out;
  out.error = refuse(rank, c);
  if (!out.error.empty()) return out;
  if (arrived_ == 0) {
    op_ = c.op();
    root_ = c.root();
    purpose_ = c.purpose();
    sum_bytes_ = c.payload().size();
    gathered_ = 0;
    first_arrival_ = Clock::now();
  }
  gathered_ += c.payload().size() + c.signature().size();
  payloads_[static_cast<std::size_t>(rank)] = std::move(*c.mutable_payload());
  signatures_[static_cast<std::size_t>(rank)] = std::move(*c.mutable_signature());
  if (++arrived_ < parties_) return out;
  out.result = combine();
  ++seq_;
  arrived_ = 0;
  for (auto& p : payloads_) p.reset();
  for (auto& s : signatures_) s.reset();
  return out;
}

// The Result of the complete collective. Sums are added up word by word into one vector
// (no copy of any party's payload), modulo 2^32 / 2^64 as the masks require.
std::shared_ptr<const pb::CoordinatorMessage> CollectiveStep::combine() {
  auto m = std::make_shared<pb::CoordinatorMessage>();
  pb::Result* r = m->mutable_result();
  r->set_seq(seq_);
  if (op_ == pb::ALLGATHER || op_ == pb::BROADCAST) {
    for (int p = 0; p < parties_; ++p) {
      if (op_ == pb::BROADCAST && p != root_) continue;
      r->add_blocks(std::move(*payloads_[static_cast<std::size_t>(p)]));
      r->add_signatures(std::move(*signatures_[static_cast<std::size_t>(p)]));
    }
    return m;
  }
  const std::size_t word = word_bytes(op_);
  const std::size_t count = sum_bytes_ / word;
  largest_sum_ = std::max(largest_sum_, sum_bytes_);
  if (word == 4) {
    std::vector<std::uint32_t> sum(count, 0);
    for (auto& p : payloads_) add_words<std::uint32_t>(*p, sum), p.reset();
    r->add_blocks(encode_words<std::uint32_t>(sum));
  } else {
    std::vector<std::uint64_t> sum(count, 0);
    for (auto& p : payloads_) add_words<std::uint64_t>(*p, sum), p.reset();
    r->add_blocks(encode_words<std::uint64_t>(sum));
  }
  return m;
}

}  // namespace flynn::federated
