#include "lying_coordinator.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "flynn/federated/dp_settings.hpp"
#include "flynn/federated/grpc_commands.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/settings_table.hpp"
#include "grpc_transcript.hpp"
#include "test_support.hpp"

namespace flynn::test {

namespace fs = std::filesystem;
using Stream = grpc::ServerReaderWriter<grpc::ByteBuffer, pb::PartyMessage>;

struct LyingCoordinator::Slot {
  std::string name;
  pb::Join join;
  Stream* stream = nullptr;
  std::mutex write_mutex;
  bool closed = false;  // its handler returned: writing would misuse the call
  bool abort_sent = false;
  bool result_sent = false;  // of the transcript
};

namespace {

std::string bytes_of(const pb::CoordinatorMessage& m) { return m.SerializeAsString(); }

std::string abort_bytes(const std::string& why) {
  pb::CoordinatorMessage m;
  m.mutable_abort()->set_reason(why);
  return bytes_of(m);
}

// Every return of a handler with a slot: waits for a write in flight from another thread.
grpc::Status close(LyingCoordinator::Slot& s, grpc::Status status) {
  std::lock_guard<std::mutex> lock(s.write_mutex);
  s.closed = true;
  return status;
}

}  // namespace

LyingCoordinator::LyingCoordinator(const Federation& f, Script script) : script_(std::move(script)) {
  // The method's handler as protoc writes it for a service, with raw bytes to write: a case
  // may need bytes no honest coordinator sends.
  static const std::string method = "/" + std::string(pb::Coordinator::service_full_name()) + "/Federate";
  AddMethod(new grpc::internal::RpcServiceMethod(
      method.c_str(), grpc::internal::RpcMethod::BIDI_STREAMING,
      new grpc::internal::BidiStreamingHandler<LyingCoordinator, pb::PartyMessage, grpc::ByteBuffer>(
          [](LyingCoordinator* self, grpc::ServerContext* ctx, Stream* stream) { return self->Federate(ctx, stream); },
          this)));
  settings_.labels = LabelSet::parse_list(f.labels);
  settings_.hyper.m = 256;
  settings_.hyper.rho = 8;
  settings_.hyper.seed = 7;
  if (script_.settings) script_.settings(settings_);
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = read_text(f.pki + "/ca.pem");
  ssl.pem_key_cert_pairs.push_back({read_text(f.pki + "/server.key"), read_text(f.pki + "/server.pem")});
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(ssl), &port_);
  builder.RegisterService(this);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(-1);
  server_ = builder.BuildAndStart();
}

LyingCoordinator::~LyingCoordinator() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    cv_.notify_all();
  }
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
}

std::vector<Received> LyingCoordinator::received() {
  std::lock_guard<std::mutex> lock(mutex_);
  return received_;
}

std::map<std::string, pb::Welcome> LyingCoordinator::welcomes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return sent_;
}

std::map<std::string, pb::Join> LyingCoordinator::joins() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, pb::Join> out;
  for (const auto& [name, slot] : slots_) out[name] = slot->join;
  return out;
}

std::map<std::string, Clock::time_point> LyingCoordinator::last_sent() {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_sent_;
}

void LyingCoordinator::send(Slot& s, const std::string& bytes) {
  {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer buffer(&slice, 1);
    std::lock_guard<std::mutex> lock(s.write_mutex);
    if (s.closed) return;
    s.stream->Write(buffer);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  last_sent_[s.name] = Clock::now();
}

void LyingCoordinator::send_abort_once(Slot& s, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(s.write_mutex);
    if (s.abort_sent || s.closed) return;
    s.abort_sent = true;
    grpc::Slice slice(abort_bytes(why));
    grpc::ByteBuffer buffer(&slice, 1);
    s.stream->Write(buffer);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  last_sent_[s.name] = Clock::now();
}

// Tells every party the federation stopped (like the real coordinator on a Failure): the
// reason as given, raw.
void LyingCoordinator::abort_all(const std::string& why) {
  std::vector<std::shared_ptr<Slot>> targets;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (over_) return;
    over_ = true;
    abort_reason_ = why;
    for (auto& [name, s] : slots_) targets.push_back(s);
    cv_.notify_all();
  }
  for (auto& s : targets) send_abort_once(*s, why);
}

// Called with the mutex held once every party joined: the (possibly lying) Welcomes.
void LyingCoordinator::start() {
  std::vector<std::string> names;
  for (const auto& [name, s] : slots_) names.push_back(name);  // std::map: sorted
  pb::Welcome w;
  w.set_parties(static_cast<int>(names.size()));
  std::string id(16, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(id.data()), 16);
  w.set_federation_id(id);
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
  std::vector<pb::Welcome> out;
  for (std::size_t r = 0; r < names.size(); ++r) {
    out.push_back(w);
    out.back().set_rank(static_cast<int>(r));
  }
  if (script_.lie) script_.lie(out);
  for (std::size_t r = 0; r < names.size(); ++r) sent_[names[r]] = out[r];
  started_ = true;
  cv_.notify_all();
}

// Collective #1 for every party whose Welcome's names have all contributed: the signatures
// of ITS list, in its order (a liar relays faithfully what it can). Mutex held.
LyingCoordinator::Outgoing LyingCoordinator::transcript_results() {
  Outgoing out;
  for (auto& [name, s] : slots_) {
    if (s->result_sent) continue;
    const pb::Welcome& w = sent_[name];
    pb::CoordinatorMessage m;
    pb::Result* r = m.mutable_result();
    r->set_seq(1);
    bool complete = true;
    for (const std::string& n : w.names()) {
      const auto it = transcript_.find(n);
      std::string sig;
      if (it != transcript_.end()) sig = it->second;
      else if (script_.forge && slots_.count(n) == 0) sig = script_.forge(n, w);
      else complete = false;
      if (!complete) break;
      r->add_blocks("");
      r->add_signatures(sig);
    }
    if (!complete) continue;
    s->result_sent = true;
    out.emplace_back(s, bytes_of(m));
  }
  return out;
}

// Relays a collective once every party contributed: all-gathers and broadcasts as they
// came (with their signatures), sums added up. Mutex held.
LyingCoordinator::Outgoing LyingCoordinator::honest_step(const std::string& from, const pb::Contribution& c) {
  auto& pending = pending_[c.seq()];
  pending[from] = c;
  if (static_cast<int>(pending.size()) < script_.parties) return {};
  pb::Result r;
  r.set_seq(c.seq());
  if (c.op() == pb::ALLGATHER || c.op() == pb::BROADCAST) {
    int rank = 0;
    for (const auto& [name, k] : pending) {  // sorted: by rank
      if (c.op() == pb::ALLGATHER || rank == c.root()) {
        r.add_blocks(k.payload());
        r.add_signatures(k.signature());
      }
      ++rank;
    }
  } else if (c.op() == pb::SUM32) {
    std::vector<std::uint32_t> sum(c.payload().size() / 4, 0);
    for (const auto& [name, k] : pending) federated::grpcwire::add_words<std::uint32_t>(k.payload(), sum);
    r.add_blocks(federated::grpcwire::encode_words<std::uint32_t>(sum));
  } else {
    std::vector<std::uint64_t> sum(c.payload().size() / 8, 0);
    for (const auto& [name, k] : pending) federated::grpcwire::add_words<std::uint64_t>(k.payload(), sum);
    r.add_blocks(federated::grpcwire::encode_words<std::uint64_t>(sum));
  }
  Outgoing out;
  for (auto& [name, s] : slots_) {
    pb::CoordinatorMessage m;
    *m.mutable_result() = r;
    if (script_.edit_result) script_.edit_result(name, *m.mutable_result(), c.purpose());
    out.emplace_back(s, bytes_of(m));
  }
  pending_.erase(c.seq());
  return out;
}

// Forged agreement: each party's all-gather answered at once with its own block (and
// signature) in every slot, so every party sees its own fingerprint everywhere; sums kept.
LyingCoordinator::Outgoing LyingCoordinator::mirror_step(const std::string& name, const pb::Contribution& c) {
  pb::CoordinatorMessage m;
  pb::Result* r = m.mutable_result();
  r->set_seq(c.seq());
  if (c.op() != pb::ALLGATHER) {
    const std::string fake = script_.fake_sum ? script_.fake_sum(c.purpose(), c.payload().size()) : "";
    if (fake.empty()) return {};
    r->add_blocks(fake);
    return {{slots_[name], bytes_of(m)}};
  }
  for (int p = 0; p < script_.parties; ++p) {
    r->add_blocks(c.payload());
    r->add_signatures(c.signature());
  }
  return {{slots_[name], bytes_of(m)}};
}

LyingCoordinator::Outgoing LyingCoordinator::on_finish(const std::string& name) {
  (void)name;
  if (++finished_ < script_.parties) return {};
  pb::CoordinatorMessage done;
  done.mutable_done();
  Outgoing out;
  for (auto& [n, s] : slots_) out.emplace_back(s, script_.abort_at == "finish" ? abort_bytes(script_.abort_reason) : bytes_of(done));
  return out;
}

grpc::Status LyingCoordinator::park(Slot& me, grpc::ServerContext* context) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_ && !context->IsCancelled()) cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return close(me, {grpc::StatusCode::CANCELLED, "the coordinator stopped reading"});
}

grpc::Status LyingCoordinator::Federate(grpc::ServerContext* context, Stream* stream) {
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
    if (script_.raw_answer) {
      lock.unlock();
      send(*me, *script_.raw_answer);
      return park(*me, context);
    }
    const bool all = static_cast<int>(slots_.size()) == script_.parties;
    if (all && !script_.abort_instead_of_welcome) start();
    if (all && script_.abort_instead_of_welcome) {
      lock.unlock();
      abort_all("the coordinator restarts the federation");
      lock.lock();
    }
    cv_.wait(lock, [&] { return started_ || over_ || stopping_; });
    if (!started_) {
      const std::string why = abort_reason_;
      lock.unlock();
      send_abort_once(*me, why);  // returns once the Abort is written, by this thread or abort_all
      return close(*me, {grpc::StatusCode::ABORTED, "stopped"});
    }
  }
  pb::CoordinatorMessage welcome;
  *welcome.mutable_welcome() = sent_.at(name);  // not modified after start()
  send(*me, bytes_of(welcome));
  if (script_.abort_after_welcome) send(*me, abort_bytes(*script_.abort_after_welcome));
  if (script_.stop_reading) return park(*me, context);
  pb::PartyMessage m;
  while (stream->Read(&m)) {
    Outgoing out;
    std::string stop;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      received_.push_back({name, m});
      if (m.has_contribution()) {
        const pb::Contribution& c = m.contribution();
        if (c.seq() == 1) {
          transcript_[name] = c.signature();
          out = transcript_results();
        } else if (script_.relay == Relay::StopAtAgreement) {
          stop = "the test's coordinator stops at the agreement step";
        } else if (script_.relay == Relay::Mirror) {
          out = mirror_step(name, c);
        } else if (!script_.abort_at.empty() && c.purpose() == script_.abort_at) {
          stop = script_.abort_reason;
        } else {
          out = honest_step(name, c);
        }
      } else if (m.has_finish()) {
        out = on_finish(name);
      } else if (m.has_failure()) {
        stop = fmt::format("party '{}' stopped: {}", name, m.failure().reason());
      } else {
        stop = "the test's coordinator got an unexpected message";
      }
    }
    for (auto& [slot, bytes] : out) send(*slot, bytes);
    if (!stop.empty()) abort_all(stop);
    // Each handler stops after its own party's transcript signature (whichever handler
    // completed a party's all-gather has relayed it above).
    if (script_.stop_reading_after_transcript && m.has_contribution()) return park(*me, context);
    m.Clear();
  }
  return close(*me, grpc::Status::OK);
}

// ---- the parties ----------------------------------------------------------------------------

namespace {

std::size_t peak_rss_kb(pid_t pid) {
  std::ifstream f(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoul(line.substr(6));
  return 0;
}

std::string model_path(const Federation& f, int p) { return f.dir.file(fmt::format("p{}.model", p)); }

}  // namespace

std::vector<PartyEnd> wait_all(std::vector<std::unique_ptr<Process>>& parties, double guard_seconds) {
  std::vector<PartyEnd> ends(parties.size());
  std::vector<bool> done(parties.size(), false);
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(guard_seconds));
  for (std::size_t left = parties.size(); left > 0 && Clock::now() < end;) {
    for (std::size_t p = 0; p < parties.size(); ++p) {
      if (done[p]) continue;
      ends[p].peak_rss_kb = std::max(ends[p].peak_rss_kb, peak_rss_kb(parties[p]->pid()));
      if (const auto code = parties[p]->poll()) {
        ends[p].code = *code;
        ends[p].ended = Clock::now();
        done[p] = true;
        --left;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::size_t p = 0; p < parties.size(); ++p) {
    if (!done[p]) {
      parties[p]->wait(0);  // kills it
      ends[p].code = -1;
      ends[p].ended = Clock::now();
    }
    ends[p].err = parties[p]->err();
  }
  return ends;
}

std::unique_ptr<Process> join_process(const Federation& f, int port, int p, const PartyFlags& flags) {
  std::vector<std::string> extra = {"--deadline", fmt::format("{}", flags.deadline)};
  if (flags.dp) extra.insert(extra.end(), {"--dp-epsilon", "1", "--dp-T", "1"});
  if (!flags.crl.empty()) extra.insert(extra.end(), {"--crl", flags.crl});
  return f.join(port, p, party_name(p), model_path(f, p), extra);
}

namespace {

// One party as `flynn federated join` runs it, in this process.
PartyEnd join_here(const Federation& f, int port, int p, const PartyFlags& flags) {
  PartyEnd end;
  try {
    federated::JoinRequest request;
    request.join.server = fmt::format("127.0.0.1:{}", port);
    request.join.tls = {f.pki + "/ca.pem", f.cert(party_name(p)) + ".pem", f.cert(party_name(p)) + ".key"};
    request.join.deadline_seconds = flags.deadline;
    request.join.crl = flags.crl;
    request.data = f.shards[static_cast<std::size_t>(p)];
    request.model = model_path(f, p);
    federated::JoiningParty party;
    party.files.data = request.data;
    party.files.model = request.model;
    party.files.load.impute = false;
    party.threads = 1;
    party.dp.resize(federated::dp_param_fields().size());
    if (flags.dp)
      for (std::size_t i = 0; i < party.dp.size(); ++i) {
        const auto& field = federated::dp_param_fields()[i];
        const std::string name = field.name;
        if (name == "dp_epsilon" || name == "dp_T") party.dp[i] = parse_setting(field.kind, "1", name);
      }
    federated::join_federation(request, std::move(party));
    end.code = 0;
  } catch (const std::exception& e) {
    end.code = 1;
    end.err = e.what();
  }
  end.ended = Clock::now();
  return end;
}

}  // namespace

InProcessParties::InProcessParties(const Federation& f, int port, const std::vector<PartyFlags>& flags) {
  for (std::size_t p = 0; p < flags.size(); ++p)
    runs_.push_back(std::async(std::launch::async, [&f, port, p, k = flags[p]] {
      return join_here(f, port, static_cast<int>(p), k);
    }));
}

std::vector<PartyEnd> InProcessParties::wait(double seconds) {
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<PartyEnd> ends;
  for (auto& r : runs_) {
    if (r.wait_until(end) == std::future_status::ready) {
      ends.push_back(r.get());
    } else {
      PartyEnd hung;
      hung.ended = Clock::now();
      ends.push_back(hung);
    }
  }
  return ends;
}

InProcessParties::~InProcessParties() {
  for (auto& r : runs_)
    if (r.valid()) r.wait();
}

// ---- the verdict ------------------------------------------------------------------------------

std::vector<std::string> files_left(const Federation& f) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(f.dir.path())) {
    const std::string n = entry.path().filename().string();
    if (n.find(".model") != std::string::npos) out.push_back(n);
  }
  return out;
}

namespace {

// What the coordinator received that it should not have (see violations()).
void check_received(const Federation& f, LyingCoordinator& c, const Expectation& e, std::vector<std::string>& out) {
  const auto welcomes = c.welcomes();
  for (const Received& r : c.received()) {
    const pb::PartyMessage& m = r.message;
    if (m.has_join()) continue;
    if (m.has_failure()) {
      if (m.failure().reason().size() > 16384) out.push_back(r.from + " sent a failure of " + std::to_string(m.failure().reason().size()) + " bytes");
      continue;
    }
    if (m.has_finish()) {
      if (!e.whole_federation) out.push_back(r.from + " sent a finish: it accepted the federation");
      else if (!m.finish().model().empty()) out.push_back(r.from + " sent its model file");
      continue;
    }
    if (!m.has_contribution()) {
      out.push_back(r.from + " sent a message that is neither a join, a contribution, a finish nor a failure");
      continue;
    }
    const pb::Contribution& k = m.contribution();
    if (e.whole_federation) continue;
    if (k.seq() > e.last_collective || k.op() != pb::ALLGATHER) {
      out.push_back(fmt::format("{} sent collective #{} ({} bytes of {} for '{}'): data left the party", r.from, k.seq(),
                                k.payload().size(), federated::grpcwire::op_name(k.op()), k.purpose()));
      continue;
    }
    if (k.seq() != 1) continue;
    // Exactly this party's signature of what it was told, nothing else.
    const auto w = welcomes.find(r.from);
    if (w == welcomes.end()) {
      out.push_back(r.from + " contributed without a welcome");
      continue;
    }
    int rank = -1;
    for (int i = 0; i < w->second.names_size(); ++i)
      if (w->second.names(i) == r.from) rank = i;
    const std::string cert = read_text(f.cert(r.from) + ".pem");
    if (!k.payload().empty() || !federated::grpcwire::transcript_signed_by(cert, w->second, rank, k.signature()))
      out.push_back(fmt::format("{} sent {} + {} bytes that are not its transcript signature", r.from, k.payload().size(),
                                k.signature().size()));
  }
}

}  // namespace

std::vector<std::string> violations(const Federation& f, LyingCoordinator& c, const std::vector<PartyEnd>& ends,
                                    const Expectation& e, Clock::time_point started) {
  std::vector<std::string> out;
  const auto last = c.last_sent();
  for (std::size_t p = 0; p < ends.size(); ++p) {
    const PartyEnd& end = ends[p];
    const std::string who = party_name(static_cast<int>(p));
    if (end.code == -1) out.push_back(who + " did not end");
    if (end.code == 0) out.push_back(who + " exited 0: it accepted the lie");
    if (e.processes && end.err.find("flynn: error:") == std::string::npos) out.push_back(who + " printed no error");
    if (end.err.find(e.reason) == std::string::npos)
      out.push_back(fmt::format("{} does not name '{}': {}", who, e.reason, end.err.substr(0, 600)));
    const auto it = last.find(who);
    const Clock::time_point from = it == last.end() ? started : std::max(started, it->second);
    const double took = std::chrono::duration<double>(end.ended - from).count();
    if (end.code != -1 && took > e.deadline + 5)
      out.push_back(fmt::format("{} ended {:.1f} s after the coordinator's last word, more than its deadline {} s + 5 s",
                                who, took, e.deadline));
  }
  for (const std::string& left : files_left(f)) out.push_back("a file is left: " + left);
  check_received(f, c, e, out);
  return out;
}

}  // namespace flynn::test
