#pragma once
// Who takes part, at the coordinator (internal to the gRPC transport): the streams that
// wait for their Join, the parties that joined, the refusals, and — once τ parties joined
// — their ranks and Welcomes. Not thread-safe: the coordinator calls it under its lock.
//
// Admission, in order: when a stream opens, before anything is read, its identity (a CN,
// on --allow, a client certificate with clientAuth usage, not revoked by --crl:
// identity_refusal), then the roster's state (the federation not full or over, the CN not
// joined, at most kMaxWaitingStreamsPerName streams of one CN and, without --allow,
// kMaxWaitingStreams in all waiting); then its Join (check_join, grpc_join_check.hpp).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "federated/grpc_outbox.hpp"
#include "flynn/federated/peer_certificate.hpp"

namespace flynn::federated {

/// One party's stream as the federation sees it. What is fixed when it opens is read
/// without the coordinator's lock; the rest under it (the outbox has its own).
struct Slot {
  // Fixed at open.
  std::string name;        ///< certificate CN ("" when it has none)
  std::string tls_cert;    ///< the TLS peer's leaf certificate (PEM)
  std::string connection;  ///< the gate's key of its connection
  std::chrono::steady_clock::time_point opened;
  std::shared_ptr<Outbox> outbox;
  // From the Join.
  int rank = -1;
  std::string public_key, certificate, key_signature;  ///< relayed; the parties check them
  bool joined = false;
  bool gone = false;  ///< its stream ended (closed, cancelled, refused)
  WireTraffic received;
  std::optional<grpcwire::pb::Finish> finish;
};

/// "party 'x' (rank r)", the name escaped (a CN is the CA's text, not flynn's).
std::string who(const Slot& s);

/// A refusal: the status the stream ends with and why.
struct Refusal {
  grpc::StatusCode code;
  std::string why;
  /// The party cannot be admitted at all while this coordinator runs, whatever it retries:
  /// its certificate is revoked by the CRL loaded at start (never reloaded). Every other
  /// refusal may be cured by the party (another certificate, a restart, a later Join).
  bool permanent = false;
};

/// Why a stream whose TLS peer is `s` may not take part (nullopt: it may).
std::optional<Refusal> identity_refusal(const Slot& s, const std::vector<std::string>& allow,
                                        const RevocationList* crl);

class Roster {
 public:
  /// The first kRefusalsLogged refusals are kept one by one.
  static constexpr std::uint64_t kRefusalsLogged = 32;

  Roster(int parties, bool any_name);

  /// Why the opened stream `s` cannot wait for its Join now (nullopt: it waits).
  std::optional<Refusal> admit(const std::shared_ptr<Slot>& s);
  /// Its Join was checked: it joins, unless the federation started meanwhile or its CN
  /// joined. Takes the Join's key, certificate and signature.
  std::optional<Refusal> join(const std::shared_ptr<Slot>& s, grpcwire::pb::Join& j);
  /// Records the refusal of `s` (no longer waiting); returns the refusals so far.
  std::uint64_t refuse(const std::shared_ptr<Slot>& s, const std::string& why);
  /// `s` ended before the federation started: it may come back.
  void leave(const std::shared_ptr<Slot>& s);
  /// Whether τ parties joined.
  bool complete() const { return static_cast<int>(joined_.size()) == parties_; }
  /// Ranks by sorted CN, then `common` (everything but the per-party parts) completed for
  /// each party: the Welcome it gets.
  std::vector<std::pair<std::shared_ptr<Slot>, SharedMessage>> welcome(grpcwire::pb::Welcome common);

  const std::vector<std::shared_ptr<Slot>>& joined() const { return joined_; }
  const std::vector<std::shared_ptr<Slot>>& waiting() const { return waiting_; }
  const std::vector<std::string>& refused() const { return refused_; }
  std::uint64_t refused_total() const { return refused_total_; }
  /// "only 2 of 3 parties joined … (joined: …; refused: …)" for the deadline's abort.
  std::string missing_text(double deadline) const;

 private:
  const int parties_;
  const bool any_name_;  // no --allow: the waiting streams are capped in all
  bool started_ = false;
  std::vector<std::shared_ptr<Slot>> waiting_;  // opened, no Join accepted yet
  std::vector<std::shared_ptr<Slot>> joined_;   // join order; by rank once started
  std::vector<std::string> refused_;            // the first kRefusalsLogged
  std::uint64_t refused_total_ = 0;
};

}  // namespace flynn::federated
