// A lying coordinator against honest parties (issue 18). The coordinator is built for the
// tests: an in-process gRPC server implementing proto/federation.proto's Coordinator
// service with the federation's real server certificate (so TLS and --server-name checks
// pass: it is the coordinator the parties meant to reach), scripted per case to lie in the
// Welcome, and recording every message it receives. The honest parties are real
// `flynn federated join` processes with the DEFAULT policy (only --deadline is set, so a
// bug cannot hold a test for the default 600 s).
//
// Each case asserts that every honest party exits non-zero with the reason on stderr,
// writes no model, and that the coordinator received nothing but Joins, the parties'
// transcript signatures (collective #1, each checked to be exactly a valid signature of
// the Welcome that party was sent) and Failures: no agreement hello, no row totals,
// feature sums, counts or model. A control case (the same coordinator, honest) shows that
// parties do send their hello to it, so the assertion can fail.
#include <gtest/gtest.h>

#include "cli_federation.hpp"
#include "cli_support.hpp"
#include "flynn/build_config.hpp"

#if FLYNN_HAVE_GRPC

#include <openssl/rand.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "flynn/federated/grpc.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/secure_aggregation.hpp"
#include "grpc_transcript.hpp"
#include "grpc_wire.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;
namespace pb = federated::grpcwire::pb;
using Clock = std::chrono::steady_clock;
using test::Federation;
using test::party_name;
using test::Process;
using Stream = grpc::ServerReaderWriter<pb::CoordinatorMessage, pb::PartyMessage>;

// What the scripted coordinator does once the parties it waits for have joined.
struct Script {
  int parties = 3;  ///< Joins to wait for
  /// The Welcome each party gets (`welcomes` by sorted name: the honest ones, editable).
  std::function<void(std::vector<pb::Welcome>&)> lie;
  /// Send an Abort instead of Welcomes (the first session of the replay case).
  bool abort_instead_of_welcome = false;
  /// After sending the Welcomes, read nothing more and answer nothing.
  bool stop_reading = false;
  /// After relaying the transcript all-gather, read nothing more (the write-deadline case).
  bool stop_reading_after_transcript = false;
  /// The transcript signature the coordinator makes itself for a name in a party's
  /// Welcome that no party holds (a sybil whose certificate it has), given that Welcome.
  std::function<std::string(const std::string& name, const pb::Welcome& view)> forge;
};

// One received message.
struct Received {
  std::string from;  ///< the sender's CN (from its TLS certificate)
  pb::PartyMessage message;
};

class LyingCoordinator final : public pb::Coordinator::Service {
 public:
  LyingCoordinator(const Federation& f, Script script) : script_(std::move(script)) {
    settings_.labels = LabelSet::parse_list(f.labels);
    settings_.hyper.m = 256;
    settings_.hyper.rho = 8;
    settings_.hyper.seed = 7;
    grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = test::read_text(f.pki + "/ca.pem");
    ssl.pem_key_cert_pairs.push_back({test::read_text(f.pki + "/server.key"),
                                      test::read_text(f.pki + "/server.pem")});
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port_);
    builder.RegisterService(this);
    builder.SetMaxReceiveMessageSize(64 << 20);
    server_ = builder.BuildAndStart();
  }
  ~LyingCoordinator() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      cv_.notify_all();
    }
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }

  int port() const { return port_; }

  /// Everything received so far, in arrival order.
  std::vector<Received> received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }
  /// The Welcome sent to each party, by CN.
  std::map<std::string, pb::Welcome> welcomes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sent_;
  }
  /// The Join of each party, by CN.
  std::map<std::string, pb::Join> joins() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, pb::Join> out;
    for (const auto& [name, slot] : slots_) out[name] = slot->join;
    return out;
  }

  /// The honest Welcome for the joined parties, rank `rank` (what a faithful coordinator
  /// would send): sorted CNs, their keys, certificates and signatures, a fresh session id.
  pb::Welcome honest(int rank) const { return honest_with_rank(honest_, rank); }

 private:
  struct Slot {
    std::string name;
    pb::Join join;
    Stream* stream = nullptr;
    std::mutex write_mutex;
    bool closed = false;  // its handler returned: writing would misuse the call
    bool abort_sent = false;
    bool result_sent = false;
  };

  static pb::Welcome honest_with_rank(pb::Welcome w, int rank) {
    w.set_rank(rank);
    return w;
  }

  void send(Slot& s, const pb::CoordinatorMessage& m) {
    std::lock_guard<std::mutex> lock(s.write_mutex);
    if (!s.closed) s.stream->Write(m);
  }

  // Every return of a handler with a slot: waits for a write in flight from another thread.
  static grpc::Status close(Slot& s, grpc::Status status) {
    std::lock_guard<std::mutex> lock(s.write_mutex);
    s.closed = true;
    return status;
  }

  // Tells every party the federation stopped (like the real coordinator on a Failure).
  void abort_all(const std::string& why) {
    std::vector<std::shared_ptr<Slot>> targets;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (over_) return;
      over_ = true;
      abort_reason_ = why;
      for (auto& [name, s] : slots_) targets.push_back(s);
      cv_.notify_all();
    }
    for (auto& s : targets) send_abort(*s);
  }

  // The Abort, once per party: by abort_all, or by the party's own handler when it wakes
  // up first (so that it never closes the call before its party got the reason).
  void send_abort(Slot& s) {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      why = abort_reason_;
    }
    pb::CoordinatorMessage m;
    m.mutable_abort()->set_reason(why);
    std::lock_guard<std::mutex> lock(s.write_mutex);
    if (s.closed || s.abort_sent) return;
    s.abort_sent = true;
    s.stream->Write(m);
  }

  // Called with the mutex held once every party joined: the (possibly lying) Welcomes.
  void start() {
    std::vector<std::string> names;
    for (const auto& [name, s] : slots_) names.push_back(name);  // std::map: sorted
    pb::Welcome w;
    w.set_parties(static_cast<int>(names.size()));
    std::string session(16, '\0');
    RAND_bytes(reinterpret_cast<unsigned char*>(session.data()), 16);
    w.set_session_id(session);
    w.set_secure_aggregation(true);
    w.set_deadline_seconds(30);
    *w.mutable_settings() = federated::grpcwire::to_proto(settings_);
    for (const std::string& n : names) {
      const pb::Join& j = slots_[n]->join;
      w.add_names(n);
      w.add_public_keys(j.public_key());
      w.add_certificates(j.certificate());
      w.add_key_signatures(j.key_signature());
    }
    honest_ = w;
    std::vector<pb::Welcome> out;
    for (std::size_t r = 0; r < names.size(); ++r) out.push_back(honest_with_rank(w, static_cast<int>(r)));
    if (script_.lie) script_.lie(out);
    for (std::size_t r = 0; r < names.size(); ++r) sent_[names[r]] = out[r];
    started_ = true;
    cv_.notify_all();
  }

  // Relays collective #1 to every party whose Welcome's names have all contributed: the
  // blocks of ITS list, in its order (a liar relays faithfully what it can).
  std::vector<std::pair<std::shared_ptr<Slot>, pb::CoordinatorMessage>> ready_results() {
    std::vector<std::pair<std::shared_ptr<Slot>, pb::CoordinatorMessage>> out;
    for (auto& [name, s] : slots_) {
      if (s->result_sent) continue;
      const pb::Welcome& w = sent_[name];
      pb::CoordinatorMessage m;
      m.mutable_result()->set_seq(1);
      bool complete = true;
      for (const std::string& n : w.names()) {
        const auto it = transcript_.find(n);
        if (it != transcript_.end()) {
          m.mutable_result()->add_blocks(it->second);
        } else if (script_.forge && slots_.count(n) == 0) {
          m.mutable_result()->add_blocks(script_.forge(n, w));
        } else {
          complete = false;
          break;
        }
      }
      if (!complete) continue;
      s->result_sent = true;
      out.emplace_back(s, std::move(m));
    }
    return out;
  }

  grpc::Status Session(grpc::ServerContext* context, Stream* stream) override {
    std::string name;
    const auto cns = context->auth_context()->FindPropertyValues("x509_common_name");
    if (!cns.empty()) name.assign(cns.front().data(), cns.front().size());
    pb::PartyMessage first;
    if (!stream->Read(&first)) return {grpc::StatusCode::CANCELLED, "no join"};
    auto me = std::make_shared<Slot>();
    me->name = name;
    me->join = first.join();
    me->stream = stream;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      received_.push_back({name, first});
      slots_[name] = me;
      if (static_cast<int>(slots_.size()) == script_.parties && !script_.abort_instead_of_welcome) start();
      const bool all = static_cast<int>(slots_.size()) == script_.parties;
      if (all && script_.abort_instead_of_welcome) {
        lock.unlock();
        abort_all("the coordinator restarts the federation");
        lock.lock();
      }
      cv_.wait(lock, [&] { return started_ || over_ || stopping_; });
      if (!started_) {
        lock.unlock();
        send_abort(*me);
        return close(*me, {grpc::StatusCode::ABORTED, "stopped"});
      }
    }
    pb::CoordinatorMessage welcome;
    *welcome.mutable_welcome() = sent_.at(name);  // not modified after start()
    send(*me, welcome);
    if (script_.stop_reading) return park(*me, context);
    pb::PartyMessage m;
    while (stream->Read(&m)) {
      std::vector<std::pair<std::shared_ptr<Slot>, pb::CoordinatorMessage>> results;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        received_.push_back({name, m});
        if (m.has_contribution() && m.contribution().seq() == 1) {
          transcript_[name] = m.contribution().payload();
          results = ready_results();
        }
      }
      for (auto& [slot, r] : results) send(*slot, r);
      if (m.has_failure()) abort_all(fmt::format("party '{}' stopped: {}", name, m.failure().reason()));
      else if (m.has_contribution() && m.contribution().seq() > 1)
        abort_all("the test's coordinator stops at the agreement step");
      else if (!m.has_contribution()) abort_all("the test's coordinator got an unexpected message");
      // Each handler stops after its own party's transcript signature (whichever handler
      // completed a party's all-gather has relayed it above).
      if (script_.stop_reading_after_transcript && m.has_contribution()) return park(*me, context);
      m.Clear();
    }
    return close(*me, grpc::Status::OK);
  }

  // Stops reading: holds the stream open until the test ends or the party gives up.
  grpc::Status park(Slot& me, grpc::ServerContext* context) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!stopping_ && !context->IsCancelled()) cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
    return close(me, {grpc::StatusCode::CANCELLED, "the coordinator stopped reading"});
  }

  Script script_;
  federated::SharedSettings settings_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
  std::map<std::string, pb::Welcome> sent_;
  std::map<std::string, std::string> transcript_;
  std::vector<Received> received_;
  pb::Welcome honest_;
  std::string abort_reason_;
  bool started_ = false, over_ = false, stopping_ = false;
};

// ---- the parties ------------------------------------------------------------------------

// `flynn federated join` for party p, default policy.
std::unique_ptr<Process> honest_party(const Federation& f, int port, int p) {
  return f.join(port, p, party_name(p), f.dir.file(fmt::format("p{}.model", p)), {"--deadline", "20"});
}

// The case's assertions on `parties` honest parties and what the coordinator received.
void expect_stopped_before_any_data(const Federation& f, LyingCoordinator& c,
                                    std::vector<std::unique_ptr<Process>>& joins,
                                    const std::string& reason, double bound_seconds = 60) {
  // bound_seconds is a hang guard (wait() gives -1 when the party is still running), far
  // beyond the parties' own deadlines: it never decides a healthy run.
  for (std::size_t p = 0; p < joins.size(); ++p) {
    const int code = joins[p]->wait(bound_seconds);
    const std::string err = joins[p]->err();
    EXPECT_NE(code, 0) << "party " << p << " accepted the lie: " << err;
    EXPECT_NE(code, -1) << "party " << p << " did not exit within " << bound_seconds << " s";
    EXPECT_NE(err.find("flynn: error:"), std::string::npos) << err;
    EXPECT_NE(err.find(reason), std::string::npos) << "party " << p << ": " << err;
    EXPECT_FALSE(fs::exists(f.dir.file(fmt::format("p{}.model", p)))) << "party " << p;
  }
  const auto welcomes = c.welcomes();
  std::size_t joins_seen = 0;
  for (const Received& r : c.received()) {
    const pb::PartyMessage& m = r.message;
    if (m.has_join()) {
      ++joins_seen;
    } else if (m.has_failure()) {
      // The reason only: the refusal text, never a data block.
      EXPECT_LT(m.failure().reason().size(), 1000u) << r.from;
    } else if (m.has_contribution()) {
      const pb::Contribution& k = m.contribution();
      EXPECT_EQ(k.seq(), 1u) << r.from << " sent collective #" << k.seq() << ": data left the party";
      EXPECT_EQ(k.op(), pb::ALLGATHER) << r.from;
      // Exactly this party's signature of what it was told, nothing else.
      const auto w = welcomes.find(r.from);
      ASSERT_NE(w, welcomes.end()) << r.from;
      const std::string cert = test::read_text(f.cert(r.from) + ".pem");
      EXPECT_TRUE(federated::grpcwire::transcript_signed_by(
          cert, federated::grpcwire::transcript_digest(w->second), k.payload()))
          << r.from << " sent " << k.payload().size() << " bytes that are not its transcript signature";
    } else {
      ADD_FAILURE() << r.from << " sent a message that is neither a join, a transcript signature "
                    << "nor a failure (finish: " << m.has_finish() << ")";
    }
  }
  EXPECT_EQ(joins_seen, joins.size());
}

std::vector<std::unique_ptr<Process>> start_parties(const Federation& f, int port, int n) {
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < n; ++p) joins.push_back(honest_party(f, port, p));
  return joins;
}

// ---- the cases ----------------------------------------------------------------------------

// Control: the same coordinator, honest, gets the agreement step's hello from every party
// (collective #2), so the "nothing beyond" assertion above has power.
TEST(MaliciousCoordinator, HonestScriptReachesTheAgreementStep) {
  Federation f(3, "iid");
  LyingCoordinator c(f, {});
  auto joins = start_parties(f, c.port(), 3);
  for (auto& j : joins) EXPECT_EQ(j->wait(60), 1) << j->err();
  std::size_t hellos = 0;
  for (const Received& r : c.received())
    hellos += r.message.has_contribution() && r.message.contribution().seq() == 2;
  EXPECT_GE(hellos, 1u) << "honest parties never passed the transcript check";
  for (auto& j : joins)
    EXPECT_NE(j->err().find("the test's coordinator stops at the agreement step"), std::string::npos) << j->err();
}

// Every party is told it is alone (τ = 1, secure aggregation "on"): with it, each would
// send its exact counts and model.
TEST(MaliciousCoordinator, AlonePartyRefuses) {
  Federation f(3, "iid");
  Script s;
  s.lie = [](std::vector<pb::Welcome>& ws) {
    for (pb::Welcome& w : ws) {
      const int me = w.rank();
      pb::Welcome alone = w;
      alone.set_rank(0);
      alone.set_parties(1);
      alone.clear_names();
      alone.clear_public_keys();
      alone.clear_certificates();
      alone.clear_key_signatures();
      alone.add_names(w.names(me));
      alone.add_public_keys(w.public_keys(me));
      alone.add_certificates(w.certificates(me));
      alone.add_key_signatures(w.key_signatures(me));
      w = alone;
    }
  };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "names 1 party");
  for (auto& j : joins) EXPECT_NE(j->err().find("--min-parties"), std::string::npos) << j->err();
}

// τ = 2: each party could subtract its own counts from the sum and learn the other's.
TEST(MaliciousCoordinator, TwoPartiesAreRefused) {
  Federation f(2, "iid");
  Script s;
  s.parties = 2;
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 2);
  expect_stopped_before_any_data(f, c, joins, "names 2 parties");
  for (auto& j : joins) EXPECT_NE(j->err().find("at least 3"), std::string::npos) << j->err();
}

TEST(MaliciousCoordinator, SecureAggregationOffIsRefused) {
  Federation f(3, "iid");
  Script s;
  s.lie = [](std::vector<pb::Welcome>& ws) {
    for (pb::Welcome& w : ws) w.set_secure_aggregation(false);
  };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "turned secure aggregation off");
  for (auto& j : joins)
    EXPECT_NE(j->err().find("--allow-no-secure-aggregation"), std::string::npos) << j->err();
}

// Secure aggregation off for one party only: that party refuses by policy, the others see
// its Failure relayed (or would catch the difference in the transcript).
TEST(MaliciousCoordinator, SecureAggregationOffForOnePartyIsCaught) {
  Federation f(3, "iid");
  Script s;
  s.lie = [](std::vector<pb::Welcome>& ws) { ws[1].set_secure_aggregation(false); };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "secure aggregation off");
}

// Four parties, each shown a different federation of three (itself and two others): any
// two parties who see each other were told different lists, so every transcript check
// fails.
TEST(MaliciousCoordinator, DifferentPartyListsAreCaught) {
  Federation f(4, "iid");
  Script s;
  s.parties = 4;
  s.lie = [](std::vector<pb::Welcome>& ws) {
    const pb::Welcome all = ws[0];
    for (int p = 0; p < 4; ++p) {
      const int left_out = 3 - p;  // party p is shown everyone but party 3 - p
      pb::Welcome w = all;
      w.clear_names();
      w.clear_public_keys();
      w.clear_certificates();
      w.clear_key_signatures();
      w.set_parties(3);
      for (int q = 0; q < 4; ++q) {
        if (q == left_out) continue;
        if (q == p) w.set_rank(w.names_size());
        w.add_names(all.names(q));
        w.add_public_keys(all.public_keys(q));
        w.add_certificates(all.certificates(q));
        w.add_key_signatures(all.key_signatures(q));
      }
      ws[p] = w;
    }
  };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 4);
  expect_stopped_before_any_data(f, c, joins, "told the parties different things");
}

// The coordinator hands parties 0 and 2 a key of its own in place of party 1's (which
// would let it derive their masks with party 1 and unmask them).
TEST(MaliciousCoordinator, SubstitutedKeyIsCaught) {
  Federation f(3, "iid");
  const federated::X25519KeyPair attacker;
  Script s;
  s.lie = [&](std::vector<pb::Welcome>& ws) {
    for (int p : {0, 2}) ws[p].set_public_keys(1, attacker.public_key());
  };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "substituting keys");
  EXPECT_NE(joins[0]->err().find("not the one its certificate's key signed"), std::string::npos)
      << joins[0]->err();
}

// The same with a binding that verifies: the coordinator holds another certificate of the
// federation's CA ("mallory") and signs its substituted key with it, passing that
// certificate off as party 1's.
TEST(MaliciousCoordinator, SubstitutedKeySignedByAnotherCertificateIsCaught) {
  Federation f(3, "iid");
  const federated::X25519KeyPair attacker;
  const std::string mallory_cert = test::read_text(f.cert("mallory") + ".pem");
  const std::string sig = federated::sign_exchange_key(test::read_text(f.cert("mallory") + ".key"),
                                                       party_name(1), attacker.public_key());
  Script s;
  s.lie = [&](std::vector<pb::Welcome>& ws) {
    for (int p : {0, 2}) {
      ws[p].set_public_keys(1, attacker.public_key());
      ws[p].set_certificates(1, mallory_cert);
      ws[p].set_key_signatures(1, sig);
    }
  };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "substituting keys");
  EXPECT_NE(joins[0]->err().find("its certificate names 'mallory', not 'party01'"), std::string::npos)
      << joins[0]->err();
}

// A key binding replayed from an earlier session: the coordinator ran a first session (and
// aborted it right after the joins), keeping party 1's X25519 key and its valid signature;
// in the second it hands parties 0 and 2 that old key (say, one whose secret it has since
// learnt). The old binding still verifies — it names no session — but party 1 signed a
// transcript with its new key, which the others' transcripts do not contain.
TEST(MaliciousCoordinator, KeyBindingReplayedFromAnEarlierSessionIsCaught) {
  Federation f(3, "iid");
  Script first;
  first.abort_instead_of_welcome = true;
  pb::Join old;
  {
    LyingCoordinator c(f, first);
    auto joins = start_parties(f, c.port(), 3);
    expect_stopped_before_any_data(f, c, joins, "the coordinator restarts the federation");
    old = c.joins().at(party_name(1));
  }
  ASSERT_EQ(old.public_key().size(), 32u);
  // The binding alone is valid, so only the transcript can catch the replay.
  ASSERT_NO_THROW(federated::verify_exchange_key(test::read_text(f.pki + "/ca.pem"),
                                                 old.certificate(), party_name(1),
                                                 old.public_key(), old.key_signature()));
  Script second;
  second.lie = [&](std::vector<pb::Welcome>& ws) {
    for (int p : {0, 2}) {
      ws[p].set_public_keys(1, old.public_key());
      ws[p].set_key_signatures(1, old.key_signature());
    }
  };
  LyingCoordinator c(f, second);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "did not sign what the coordinator told this party");
}

// Settings that differ between parties: party 0 is told another m and another DP budget
// than the others (e.g. to make its release noisier or its model differ), all else equal.
TEST(MaliciousCoordinator, SettingsThatDifferBetweenPartiesAreCaught) {
  Federation f(3, "iid");
  Script s;
  s.lie = [](std::vector<pb::Welcome>& ws) {
    federated::SharedSettings told = federated::grpcwire::from_proto(ws[0].settings());
    told.dp = federated::DpParams{};
    told.dp->epsilon = 1;
    told.dp->T = 40;
    for (pb::Welcome& w : ws) *w.mutable_settings() = federated::grpcwire::to_proto(told);
    told.dp->epsilon = 8;
    *ws[0].mutable_settings() = federated::grpcwire::to_proto(told);
  };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "told the parties different things");
}

// τ differs between parties through a sybil: party 0 is told the federation has a fourth
// member, "mallory" (a certificate of the federation's CA the coordinator holds), so that
// its sums would be masked with a key the coordinator knows and, under --dp-unit paper, it
// would spend ε/4. Every check of party 0's own Welcome passes (mallory's certificate and
// binding are valid, τ = 4 ≥ 3), and the coordinator even signs party 0's transcript with
// mallory's key; but parties 1 and 2 signed the 3-party Welcome.
TEST(MaliciousCoordinator, ExtraPartyShownToOnePartyIsCaught) {
  Federation f(3, "iid");
  const federated::X25519KeyPair sybil;
  const std::string mallory_cert = test::read_text(f.cert("mallory") + ".pem");
  const std::string mallory_key = test::read_text(f.cert("mallory") + ".key");
  Script s;
  s.lie = [&](std::vector<pb::Welcome>& ws) {
    pb::Welcome w = ws[0];
    w.clear_names();
    w.clear_public_keys();
    w.clear_certificates();
    w.clear_key_signatures();
    // "mallory" sorts before "party00": rank 0; party 0 becomes rank 1.
    w.add_names("mallory");
    w.add_public_keys(sybil.public_key());
    w.add_certificates(mallory_cert);
    w.add_key_signatures(federated::sign_exchange_key(mallory_key, "mallory", sybil.public_key()));
    for (int q = 0; q < 3; ++q) {
      w.add_names(ws[0].names(q));
      w.add_public_keys(ws[0].public_keys(q));
      w.add_certificates(ws[0].certificates(q));
      w.add_key_signatures(ws[0].key_signatures(q));
    }
    w.set_parties(4);
    w.set_rank(1);
    ws[0] = w;
  };
  s.forge = [&](const std::string&, const pb::Welcome& view) {
    return federated::grpcwire::sign_transcript(mallory_key, federated::grpcwire::transcript_digest(view));
  };
  LyingCoordinator c(f, s);
  auto joins = start_parties(f, c.port(), 3);
  expect_stopped_before_any_data(f, c, joins, "told the parties different things");
  // Party 0 accepted the sybil's forged signature (it verifies) and caught the honest ones.
  EXPECT_NE(joins[0]->err().find("party 'party01' (rank 2) did not sign"), std::string::npos) << joins[0]->err();
}

// A coordinator that welcomes the parties and then stops reading (and answering): every
// party exits non-zero within its deadline plus a few seconds, having sent nothing but
// its join and transcript signature (which the coordinator never even read).
TEST(MaliciousCoordinator, CoordinatorThatStopsReadingCannotHoldTheParties) {
  Federation f(3, "iid");
  Script s;
  s.stop_reading = true;
  LyingCoordinator c(f, s);
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < 3; ++p)
    joins.push_back(f.join(c.port(), p, party_name(p), f.dir.file(fmt::format("p{}.model", p)),
                           {"--deadline", "4"}));
  // The parties' clock starts when they have the Welcome; 4 s + 5 s of margin + start-up.
  expect_stopped_before_any_data(f, c, joins, "no answer from the coordinator within 4 s", 4 + 5 + 10);
}

// Library level: the coordinator relays the transcript, then stops reading; a party's
// next write is larger than HTTP/2 flow control lets through unread, so it would block
// for ever without the write watchdog. It fails after its deadline instead.
TEST(MaliciousCoordinator, WriteToACoordinatorThatStopsReadingTimesOut) {
  Federation f(3, "iid");
  Script s;
  s.stop_reading_after_transcript = true;
  LyingCoordinator c(f, s);
  std::vector<std::future<std::string>> parties;
  for (int p = 0; p < 3; ++p)
    parties.push_back(std::async(std::launch::async, [&, p]() -> std::string {
      try {
        federated::JoinOptions j;
        j.server = fmt::format("127.0.0.1:{}", c.port());
        j.tls = {f.pki + "/ca.pem", f.cert(party_name(p)) + ".pem", f.cert(party_name(p)) + ".key"};
        j.deadline_seconds = 3;
        auto comm = federated::GrpcParty::join(j);
        // Party 0 writes more than flow control lets through unread; the others' small
        // blocks go through and they wait for an answer that never comes.
        comm->allgather(p == 0 ? std::string(std::size_t{16} << 20, 'x') : std::string("small"));
        return "the collective completed";
      } catch (const std::exception& e) {
        return e.what();
      }
    }));
  std::vector<std::string> errors;
  for (int p = 0; p < 3; ++p) {
    // Bounded wait: a blocked write would otherwise hang the test.
    ASSERT_EQ(parties[p].wait_for(std::chrono::seconds(60)), std::future_status::ready) << "party " << p;
    errors.push_back(parties[p].get());
  }
  EXPECT_NE(errors[0].find("did not accept this party's message within 3 s"), std::string::npos) << errors[0];
  for (int p : {1, 2})
    EXPECT_NE(errors[p].find("no answer from the coordinator within 3 s"), std::string::npos) << errors[p];
}

// --expect-parties: a consistent federation of other parties than the ones this party
// agreed to is refused, naming the stranger; one without an expected party too. One party
// holds the list in each run, so it is certain to read its Welcome (the others wait in the
// transcript all-gather) rather than an abort relayed from another party's refusal.
TEST(MaliciousCoordinator, ExpectedPartiesAreEnforced) {
  struct Case {
    int party;
    std::string list, reason;
  };
  const std::vector<Case> cases = {
      {0, "party00,party01,party03", "names 'party02', which is not among the parties this party agreed"},
      {1, "party00,party01,party02,party03", "does not name 'party03'"}};
  for (const Case& k : cases) {
    Federation f(3, "iid");
    LyingCoordinator c(f, {});
    std::vector<std::unique_ptr<Process>> joins;
    for (int p = 0; p < 3; ++p) {
      std::vector<std::string> flags = {"--deadline", "20"};
      if (p == k.party) flags.insert(flags.end(), {"--expect-parties", k.list});
      joins.push_back(f.join(c.port(), p, party_name(p), f.dir.file(fmt::format("p{}.model", p)), flags));
    }
    expect_stopped_before_any_data(f, c, joins, "");
    EXPECT_NE(joins[k.party]->err().find(k.reason), std::string::npos) << joins[k.party]->err();
  }
}

// ---- the policy flags themselves ------------------------------------------------------------

// A policy that no federation can satisfy fails at once, before connecting (nothing
// listens at the address given), naming the flag.
TEST(PartyPolicy, MisconfiguredPolicyFailsBeforeConnecting) {
  Federation f(1, "iid");
  const std::string base = fmt::format(
      "federated join --server 127.0.0.1:1 --ca {0}/ca.pem --cert {0}/party00.pem --key "
      "{0}/party00.key --data {1} --model {2} --quiet ",
      f.pki, f.shards[0], f.dir.file("p0.model"));
  test::expect_clean_error(test::run_cli(base + "--expect-parties party01,party02,party03"),
                           "does not list this party's own name 'party00'");
  test::expect_clean_error(test::run_cli(base + "--expect-parties party00,party01"),
                           "--expect-parties names 2 parties, fewer than --min-parties 3");
  test::expect_clean_error(test::run_cli(base + "--expect-parties party00,party01,party01"),
                           "'party01' is listed twice");
  test::expect_clean_error(test::run_cli(base + "--min-parties 0"), "--min-parties 0: must be at least 1");
  EXPECT_FALSE(fs::exists(f.dir.file("p0.model")));
}

// The weakening flags accept exactly what they name: a 2-party federation without secure
// aggregation through the real coordinator, with --min-parties 2 and
// --allow-no-secure-aggregation on both parties (and the model of central training).
TEST(PartyPolicy, WeakeningFlagsAcceptWhatTheyName) {
  Federation f(2, "iid");
  int port = 0;
  auto server = f.serve(2, {"--secure-aggregation", "off", "--deadline", "30"}, &port);
  ASSERT_GT(port, 0) << server->err();
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < 2; ++p)
    joins.push_back(f.join(port, p, party_name(p), f.dir.file(fmt::format("p{}.model", p)),
                           {"--min-parties", "2", "--allow-no-secure-aggregation", "--expect-parties",
                            "party00,party01"}));
  for (auto& j : joins) ASSERT_EQ(j->wait(60), 0) << j->err();
  ASSERT_EQ(server->wait(30), 0) << server->err();
  const auto central = test::run_cli(fmt::format("train --data {} --labels {} --m 256 --rho 8 --seed 7 "
                                                 "--model {} --quiet",
                                                 f.pooled, f.labels, f.dir.file("central.model")));
  ASSERT_EQ(central.exit_code, 0) << central.err;
  for (int p = 0; p < 2; ++p)
    EXPECT_EQ(test::read_text(f.dir.file(fmt::format("p{}.model", p))),
              test::read_text(f.dir.file("central.model")));
}

}  // namespace
}  // namespace flynn

#endif  // FLYNN_HAVE_GRPC
