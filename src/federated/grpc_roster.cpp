#include "federated/grpc_roster.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "federated/relayed_text.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace {
std::string shown_name(const std::string& name) { return name.empty() ? "(no name)" : inert_text(name, 100); }
}  // namespace

std::string who(const Slot& s) {
  return s.rank >= 0 ? fmt::format("party '{}' (rank {})", shown_name(s.name), s.rank)
                     : fmt::format("party '{}'", shown_name(s.name));
}

std::optional<Refusal> identity_refusal(const Slot& s, const std::vector<std::string>& allow,
                                        const RevocationList* crl) {
  if (s.name.empty())
    return Refusal{grpc::StatusCode::UNAUTHENTICATED, "the client certificate has no subject CN: a party's identity is its CN"};
  if (!allow.empty() && std::find(allow.begin(), allow.end(), s.name) == allow.end())
    return Refusal{grpc::StatusCode::PERMISSION_DENIED,
                   fmt::format("'{}' is not on the coordinator's allow-list (--allow)", shown_name(s.name))};
  const std::string party = fmt::format("party '{}'", shown_name(s.name));
  try {
    check_extended_key_usage(s.tls_cert, TlsRole::Client, party);
  } catch (const Error& e) {
    return Refusal{grpc::StatusCode::PERMISSION_DENIED, e.what()};
  }
  try {
    if (crl) crl->check(s.tls_cert, party);
  } catch (const Error& e) {
    return Refusal{grpc::StatusCode::PERMISSION_DENIED, e.what(), true};
  }
  return std::nullopt;
}

Roster::Roster(int parties, bool any_name) : parties_(parties), any_name_(any_name) {}

std::optional<Refusal> Roster::admit(const std::shared_ptr<Slot>& s) {
  const auto same = [&](const std::shared_ptr<Slot>& o) { return o->name == s->name; };
  if (started_)
    return Refusal{grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("the federation already has its {} parties", parties_)};
  if (std::any_of(joined_.begin(), joined_.end(), same))
    return Refusal{grpc::StatusCode::ALREADY_EXISTS, fmt::format("a party named '{}' has already joined", shown_name(s->name))};
  if (std::count_if(waiting_.begin(), waiting_.end(), same) >= kMaxWaitingStreamsPerName)
    return Refusal{grpc::StatusCode::RESOURCE_EXHAUSTED,
                   fmt::format("{} streams of '{}' are already waiting for their Join", kMaxWaitingStreamsPerName,
                               shown_name(s->name))};
  if (any_name_ && waiting_.size() >= kMaxWaitingStreams)
    return Refusal{grpc::StatusCode::RESOURCE_EXHAUSTED,
                   fmt::format("{} streams are already waiting for their Join (the most without --allow)", waiting_.size())};
  waiting_.push_back(s);
  return std::nullopt;
}

std::optional<Refusal> Roster::join(const std::shared_ptr<Slot>& s, grpcwire::pb::Join& j) {
  if (started_)
    return Refusal{grpc::StatusCode::RESOURCE_EXHAUSTED, fmt::format("the federation already has its {} parties", parties_)};
  if (std::any_of(joined_.begin(), joined_.end(), [&](const auto& o) { return o->name == s->name; }))
    return Refusal{grpc::StatusCode::ALREADY_EXISTS, fmt::format("a party named '{}' has already joined", shown_name(s->name))};
  s->public_key = std::move(*j.mutable_public_key());
  s->certificate = std::move(*j.mutable_certificate());
  s->key_signature = std::move(*j.mutable_key_signature());
  s->joined = true;
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), s), waiting_.end());
  joined_.push_back(s);
  return std::nullopt;
}

std::uint64_t Roster::refuse(const std::shared_ptr<Slot>& s, const std::string& why) {
  s->gone = true;
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), s), waiting_.end());
  if (refused_.size() < kRefusalsLogged) refused_.push_back(fmt::format("'{}': {}", shown_name(s->name), why));
  return ++refused_total_;
}

void Roster::leave(const std::shared_ptr<Slot>& s) {
  waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), s), waiting_.end());
  joined_.erase(std::remove(joined_.begin(), joined_.end(), s), joined_.end());
}

std::vector<std::pair<std::shared_ptr<Slot>, SharedMessage>> Roster::welcome(grpcwire::pb::Welcome w) {
  std::sort(joined_.begin(), joined_.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
  w.set_parties(static_cast<int>(joined_.size()));
  for (std::size_t r = 0; r < joined_.size(); ++r) {
    Slot& s = *joined_[r];
    s.rank = static_cast<int>(r);
    w.add_names(s.name);
    w.add_public_keys(s.public_key);
    w.add_certificates(s.certificate);
    w.add_key_signatures(s.key_signature);
  }
  started_ = true;
  std::vector<std::pair<std::shared_ptr<Slot>, SharedMessage>> out;
  for (const auto& s : joined_) {
    auto m = std::make_shared<grpcwire::pb::CoordinatorMessage>();
    *m->mutable_welcome() = w;
    m->mutable_welcome()->set_rank(s->rank);
    out.emplace_back(s, std::move(m));
  }
  return out;
}

std::string Roster::missing_text(double deadline) const {
  std::string names;
  for (const auto& s : joined_) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", shown_name(s->name));
  std::string refusals;
  for (const auto& r : refused_) refusals += fmt::format("{}{}", refusals.empty() ? "" : "; ", r);
  if (refused_total_ > refused_.size()) refusals += fmt::format("; and {} more", refused_total_ - refused_.size());
  return fmt::format("only {} of {} parties joined within the deadline of {} s (joined: {}{})", joined_.size(),
                     parties_, deadline, names.empty() ? "none" : names,
                     refusals.empty() ? "" : "; refused: " + refusals);
}

}  // namespace flynn::federated
