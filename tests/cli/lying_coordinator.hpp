#pragma once
// A lying coordinator for the tests (tests/cli/grpc_malicious_coordinator_test.cpp): an
// in-process gRPC server implementing proto/federation.proto's Coordinator service with
// the federation's real server certificate (so TLS and --server-name checks pass: it is the
// coordinator the parties meant to reach), scripted per case, writing raw bytes where a
// case needs bytes no honest coordinator writes, and recording every message it receives.
// Plus the honest parties' runs (real `flynn federated join` processes, or the same party
// code in this process for the controls, which turn one safety check off) and the verdict
// every case is held to.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "federation.grpc.pb.h"
#include "cli_federation.hpp"
#include "flynn/federated/settings.hpp"
#include "wire_messages.hpp"

namespace flynn::test {

namespace pb = federated::grpcwire::pb;
using Clock = std::chrono::steady_clock;

/// What the scripted coordinator does from collective #2 on (collective #1, the transcript,
/// is always relayed as faithfully as each party's Welcome allows).
enum class Relay {
  StopAtAgreement,  ///< abort when a party reaches collective #2 (the default)
  Honest,           ///< relay every collective and answer the Finishes (see Script::end)
  Mirror,           ///< answer each party's all-gather with its own block in every slot,
                    ///< its sums with Script::fake_sum (forged agreement, then record)
};

struct Script {
  int parties = 3;  ///< Joins to wait for
  /// Edits the Welcome each party gets (`welcomes` by sorted name: the honest ones).
  std::function<void(std::vector<pb::Welcome>&)> lie;
  /// Overrides the coordinator's settings (m, DP, …) before the Welcomes are made.
  std::function<void(federated::SharedSettings&)> settings;
  /// Sends an Abort instead of Welcomes (the first federation of the replay case).
  bool abort_instead_of_welcome = false;
  /// Sends these bytes as the answer to every Join, then keeps the stream open unread.
  std::optional<std::string> raw_answer;
  /// Sends an Abort with this reason right after the Welcome.
  std::optional<std::string> abort_after_welcome;
  /// After sending the Welcomes, reads nothing more and answers nothing.
  bool stop_reading = false;
  /// After relaying the transcript all-gather, reads nothing more (the write-deadline case).
  bool stop_reading_after_transcript = false;
  /// The transcript signature the coordinator makes itself for a name in a party's
  /// Welcome that no party holds (a sybil whose certificate it has), given that Welcome.
  std::function<std::string(const std::string& name, const pb::Welcome& view)> forge;
  Relay relay = Relay::StopAtAgreement;
  /// Mirror relay: the answer to a sum for `purpose` of `bytes` bytes (a plausible fake that
  /// keeps the party going); "" keeps the sum unanswered.
  std::function<std::string(const std::string& purpose, std::size_t bytes)> fake_sum;
  /// Honest relay: edits a Result before it goes to party `to` (by CN).
  std::function<void(const std::string& to, pb::Result&, const std::string& purpose)> edit_result;
  /// Honest relay: aborts with `abort_reason` when the first contribution for this
  /// purpose arrives ("" = never; "finish": when every party finished, instead of Done).
  std::string abort_at;
  std::string abort_reason = "the test's coordinator aborts at the end";
};

/// One message received.
struct Received {
  std::string from;  ///< the sender's CN (from its TLS certificate)
  pb::PartyMessage message;
};

class LyingCoordinator final : public grpc::Service {
 public:
  LyingCoordinator(const Federation& f, Script script);
  ~LyingCoordinator() override;
  LyingCoordinator(const LyingCoordinator&) = delete;
  LyingCoordinator& operator=(const LyingCoordinator&) = delete;

  int port() const { return port_; }
  /// Everything received so far, in arrival order.
  std::vector<Received> received();
  /// The Welcome sent to each party, by CN.
  std::map<std::string, pb::Welcome> welcomes();
  /// The Join of each party, by CN.
  std::map<std::string, pb::Join> joins();
  /// When the coordinator last wrote to each party (by CN).
  std::map<std::string, Clock::time_point> last_sent();

  struct Slot;

 private:
  grpc::Status Federate(grpc::ServerContext* context, grpc::ServerReaderWriter<grpc::ByteBuffer, pb::PartyMessage>* stream);
  using Outgoing = std::vector<std::pair<std::shared_ptr<Slot>, std::string>>;
  void start();
  Outgoing transcript_results();
  Outgoing honest_step(const std::string& from, const pb::Contribution& c);
  Outgoing mirror_step(const std::string& name, const pb::Contribution& c);
  Outgoing on_finish(const std::string& name);
  void abort_all(const std::string& why);
  void send(Slot& s, const std::string& bytes);
  // Sends the Abort once per slot: whoever claims it (abort_all or the slot's handler) also
  // writes it before releasing the slot, so the handler cannot close the stream first.
  void send_abort_once(Slot& s, const std::string& why);
  grpc::Status park(Slot& me, grpc::ServerContext* context);

  Script script_;
  federated::SharedSettings settings_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
  std::map<std::string, pb::Welcome> sent_;
  std::map<std::string, std::string> transcript_;  // by CN: signature
  std::map<std::uint64_t, std::map<std::string, pb::Contribution>> pending_;
  std::map<std::string, Clock::time_point> last_sent_;
  std::vector<Received> received_;
  int finished_ = 0;
  std::string abort_reason_;
  bool started_ = false, over_ = false, stopping_ = false;
};

/// How one honest party ended.
struct PartyEnd {
  int code = -1;          ///< exit code (1 for a thrown error in process), -1: did not end
  std::string err;        ///< stderr, or the error text in process
  Clock::time_point ended;
  std::size_t peak_rss_kb = 0;  ///< VmHWM of a process, when sampled
};

/// Waits for every process at once (ending times are recorded as they happen), killing
/// those still running after `guard_seconds`; samples their peak RSS.
std::vector<PartyEnd> wait_all(std::vector<std::unique_ptr<Process>>& parties, double guard_seconds);

/// A party's flags beyond the shard and the model (both as `federated federated join`
/// takes them, and for the in-process run).
struct PartyFlags {
  PartyFlags(double deadline_seconds = 20, bool with_dp = false) : deadline(deadline_seconds), dp(with_dp) {}
  double deadline;
  bool dp;  ///< --dp-epsilon 1 --dp-T 1
  std::string crl;
};

/// `flynn federated join` for party p (default policy plus `flags`).
std::unique_ptr<Process> join_process(const Federation& f, int port, int p, const PartyFlags& flags = {});

/// The same party in this process (federated::join_federation on a thread): for the
/// controls, which turn a safety check off in this process only.
class InProcessParties {
 public:
  /// One party per element of `flags` (party p with flags[p]).
  InProcessParties(const Federation& f, int port, const std::vector<PartyFlags>& flags);
  /// Waits at most `seconds` for every party; a party still running has code -1.
  std::vector<PartyEnd> wait(double seconds);
  /// Waits for the rest (call once whatever held them is gone).
  ~InProcessParties();

 private:
  std::vector<std::future<PartyEnd>> runs_;
};

/// What a case holds every honest party and the coordinator to.
struct Expectation {
  std::string reason;          ///< in every party's error text
  double deadline = 20;        ///< the parties' --deadline: each ends within it + 5 s
  std::uint64_t last_collective = 1;  ///< the last collective a party may contribute to
  /// The case runs the federation to its end (every collective relayed honestly): the
  /// parties' sums reach the coordinator, masked as in any federation; only the end is a lie.
  bool whole_federation = false;
  bool processes = true;       ///< real processes: "flynn: error:" on stderr
};

/// Every way the run broke the expectation ("" entries never); empty when it held:
/// every party exited non-zero within deadline + 5 s of the coordinator's last word to it
/// naming the reason, no model file nor a staged one is left, and the coordinator received
/// only Joins, exactly each party's transcript signature (collective #1), agreement blocks
/// up to `last_collective` (all-gathers only: no sum, nothing masked), and Failures — or,
/// for a whole federation, no model file in any Finish.
std::vector<std::string> violations(const Federation& f, LyingCoordinator& c, const std::vector<PartyEnd>& ends,
                                    const Expectation& e, Clock::time_point started);

/// The model files and staged files (".flynn-tmp") left in the federation's folder.
std::vector<std::string> files_left(const Federation& f);

}  // namespace flynn::test
