// The gRPC federation end to end with real processes on 127.0.0.1: `flynn federated
// serve` and τ × `flynn federated join`, certificates made with the openssl CLI at test
// time. Parity with `flynn train` on the pooled rows (3 and 8 parties, IID and non-IID,
// with and without secure aggregation), refusals (another CA, an unlisted name, plaintext),
// a party killed mid-round, a party with a different config, a DP run with the ledger.
#include <gtest/gtest.h>

#include "cli_federation.hpp"
#include "cli_support.hpp"
#include "flynn/build_config.hpp"

#if FLYNN_HAVE_GRPC

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flynn/federated/grpc.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/secure_aggregation.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/io/loaders.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

using test::Federation;
using test::make_pki;
using test::party_name;
using test::Process;
using test::wait_for_text;

bool exists(const std::string& path) { return fs::exists(path); }

// Every party and the coordinator write the model of `flynn train` on the pooled rows.
void expect_parity(int parties, const std::string& split, const std::string& secure) {
  Federation f(parties, split);
  int port = 0;
  auto server = f.serve(parties, {"--model", f.dir.file("server.model"), "--json",
                                  "--secure-aggregation", secure, "--deadline", "60"}, &port);
  ASSERT_GT(port, 0) << server->err();
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < parties; ++p) {
    std::vector<std::string> extra;
    if (p == 0) extra.push_back("--json");
    // Each party refuses a federation without secure aggregation unless it says otherwise.
    if (secure == "off") extra.push_back("--allow-no-secure-aggregation");
    joins.push_back(f.join(port, p, party_name(p), f.dir.file(fmt::format("p{}.model", p)), extra));
  }
  for (int p = 0; p < parties; ++p) ASSERT_EQ(joins[p]->wait(120), 0) << joins[p]->err();
  ASSERT_EQ(server->wait(30), 0) << server->err();

  const auto central = test::run_cli(fmt::format("train --data {} --labels {} --m 256 --rho 8 --seed 7 "
                                                 "--model {} --quiet",
                                                 f.pooled, f.labels, f.dir.file("central.model")));
  ASSERT_EQ(central.exit_code, 0) << central.err;
  const std::string expected = test::read_text(f.dir.file("central.model"));
  for (int p = 0; p < parties; ++p)
    EXPECT_EQ(test::read_text(f.dir.file(fmt::format("p{}.model", p))), expected) << "party " << p;
  EXPECT_EQ(test::read_text(f.dir.file("server.model")), expected);

  const auto s = nlohmann::json::parse(server->out());
  EXPECT_EQ(s["parties"].size(), static_cast<std::size_t>(parties));
  EXPECT_EQ(s["secure_aggregation"], secure == "on");
  const auto j = nlohmann::json::parse(joins[0]->out());
  EXPECT_EQ(j["rank"], 0);
  EXPECT_EQ(j["name"], party_name(0));
  EXPECT_EQ(j["secure_aggregation"], secure == "on");
  EXPECT_GT(j["wire_bytes"]["sent"].get<std::uint64_t>(), 256u * 3 * 4);  // the counts, at least
  // Under secure aggregation nobody learns another party's row count.
  for (const auto& p : j["parties_detail"]) EXPECT_EQ(p.contains("rows"), secure == "off");
}

TEST(FederatedGrpc, ThreePartiesIidMatchCentralTraining) { expect_parity(3, "iid", "on"); }
// by-class: each party holds whole classes only (τ = 3: one class each; τ = 8: every class
// dealt among several parties, each holding one).
TEST(FederatedGrpc, ThreePartiesNonIidMatchCentralTraining) { expect_parity(3, "by-class", "on"); }
TEST(FederatedGrpc, EightPartiesIidMatchCentralTraining) { expect_parity(8, "iid", "on"); }
TEST(FederatedGrpc, EightPartiesNonIidMatchCentralTraining) { expect_parity(8, "by-class", "on"); }
TEST(FederatedGrpc, WithoutSecureAggregationMatchesToo) { expect_parity(3, "dirichlet:0.5", "off"); }

// Two good parties and one bad one: the federation never starts; every process exits
// non-zero within the deadline; no model anywhere.
void expect_refused(const std::string& why, const std::function<std::unique_ptr<Process>(Federation&, int)>& bad,
                    const std::vector<std::string>& serve_extra, const std::string& reason) {
  SCOPED_TRACE(why);
  Federation f(3, "iid");
  int port = 0;
  std::vector<std::string> extra = {"--model", f.dir.file("server.model"), "--deadline", "4"};
  extra.insert(extra.end(), serve_extra.begin(), serve_extra.end());
  auto server = f.serve(3, extra, &port);
  ASSERT_GT(port, 0) << server->err();
  auto a = f.join(port, 0, party_name(0), f.dir.file("p0.model"));
  auto b = f.join(port, 1, party_name(1), f.dir.file("p1.model"));
  auto c = bad(f, port);
  // A failure exit code (> 0; -1 is "still running after 60 s", a hang guard far beyond
  // the 4 s deadline, not a timing bound).
  EXPECT_GT(a->wait(60), 0) << a->err();
  EXPECT_GT(b->wait(60), 0) << b->err();
  EXPECT_GT(server->wait(60), 0) << server->err();
  if (c) {
    EXPECT_GT(c->wait(60), 0) << c->err();
  }
  for (const auto& file : {"server.model", "p0.model", "p1.model", "p2.model"})
    EXPECT_FALSE(exists(f.dir.file(file))) << file;
  EXPECT_NE(server->err().find("only 2 of 3 parties joined"), std::string::npos) << server->err();
  EXPECT_NE(a->err().find("only 2 of 3 parties joined"), std::string::npos) << a->err();
  if (!reason.empty()) {
    EXPECT_NE(server->err().find(reason), std::string::npos) << server->err();
    if (c) {
      EXPECT_NE(c->err().find(reason), std::string::npos) << c->err();
    }
  }
}

TEST(FederatedGrpc, CertificateFromAnotherCaIsRefused) {
  expect_refused("another CA", [](Federation& f, int port) {
    f.other_pki = f.dir.file("other");
    make_pki(f.other_pki, {party_name(2)});
    auto p = f.join(port, 2, party_name(2), f.dir.file("p2.model"), {}, f.other_pki);
    EXPECT_NE(p->wait(30), 0);
    EXPECT_NE(p->err().find("unknown CA: the coordinator's certificate is not signed"), std::string::npos) << p->err();
    return p;
  }, {}, "");
}

TEST(FederatedGrpc, UnlistedNameIsRefused) {
  expect_refused("unlisted", [](Federation& f, int port) {
    return f.join(port, 2, "mallory", f.dir.file("p2.model"));
  }, {"--allow", party_name(0) + "," + party_name(1) + "," + party_name(2)},
  "'mallory' is not on the coordinator's allow-list");
}

TEST(FederatedGrpc, PlaintextConnectionIsRefused) {
  expect_refused("plaintext", [](Federation&, int port) -> std::unique_ptr<Process> {
    // An HTTP/2 client without TLS: the connection preface and an empty SETTINGS frame.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const std::string preface = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                                std::string("\x00\x00\x00\x04\x00\x00\x00\x00\x00", 9);
    EXPECT_EQ(::send(fd, preface.data(), preface.size(), MSG_NOSIGNAL), static_cast<ssize_t>(preface.size()));
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string got;
    char buf[512];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, n);
    ::close(fd);
    // The server hung up without speaking HTTP/2 (a SETTINGS frame has type 4 at byte 3).
    EXPECT_FALSE(got.size() >= 9 && got[3] == 4) << "the server answered plaintext HTTP/2";
    return nullptr;
  }, {}, "");
}

TEST(FederatedGrpc, PartyKilledMidRoundStopsEveryone) {
  Federation f(3, "iid");
  // Party 2 counts 60000 rows with a large m (every party asks for m = 16384, so they
  // agree), which takes seconds even on an idle machine: it is busy when it is killed while
  // the others wait for it in a collective.
  {
    const Dataset big = test::blobs(3, 20000, 5, 5);
    std::ofstream out(f.shards[2]);
    for (std::size_t r = 0; r < big.n_rows; ++r) {
      for (std::size_t j = 0; j < big.n_features; ++j) out << big.row(r)[j] << ",";
      out << big.classes.name(big.labels[r]) << "\n";
    }
  }
  int port = 0;
  auto server = f.serve(3, {"--model", f.dir.file("server.model"), "--deadline", "30"}, &port);
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < 3; ++p)
    joins.push_back(f.join(port, p, party_name(p), f.dir.file(fmt::format("p{}.model", p)),
                           {"--m", "16384", "--threads", "1"}));
  ASSERT_NE(wait_for_text(f.serve_err, "all 3 parties joined", 30), "") << server->err();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  joins[2]->kill_now();
  // wait(30) is a hang guard (-1 when still running), not a timing bound.
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(joins[p]->wait(30), 1) << joins[p]->err();
    EXPECT_NE(joins[p]->err().find("party 'party02' (rank 2) disconnected"), std::string::npos)
        << joins[p]->err();
  }
  EXPECT_EQ(server->wait(30), 1);
  EXPECT_NE(server->err().find("party 'party02' (rank 2) disconnected"), std::string::npos) << server->err();
  for (const auto& file : {"server.model", "p0.model", "p1.model", "p2.model"})
    EXPECT_FALSE(exists(f.dir.file(file))) << file;
}

TEST(FederatedGrpc, DifferentConfigStopsEveryoneNamingTheField) {
  Federation f(3, "iid");
  int port = 0;
  auto server = f.serve(3, {"--model", f.dir.file("server.model"), "--deadline", "30"}, &port);
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < 3; ++p)
    joins.push_back(f.join(port, p, party_name(p), f.dir.file(fmt::format("p{}.model", p)),
                           p == 1 ? std::vector<std::string>{"--gamma", "0.7"} : std::vector<std::string>{}));
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(joins[p]->wait(30), 1);
    EXPECT_NE(joins[p]->err().find("its gamma differs from party 0's"), std::string::npos) << joins[p]->err();
  }
  EXPECT_EQ(server->wait(30), 1);
  EXPECT_NE(server->err().find("its gamma differs from party 0's"), std::string::npos) << server->err();
  for (const auto& file : {"server.model", "p0.model", "p1.model", "p2.model"})
    EXPECT_FALSE(exists(f.dir.file(file))) << file;
}

// DP over secure aggregation (dense masked release), with every party's budget ledger and
// the coordinator's post-processing: the first run is recorded, a second run beyond the
// budget is refused everywhere.
TEST(FederatedGrpc, DpReleaseWithLedgerAndRecordUnit) {
  Federation f(3, "iid");
  auto run = [&](int round) {
    int port = 0;
    auto server = f.serve(3, {"--dp-epsilon", "2", "--dp-T", "40", "--dp-unit", "record",
                              "--dp-postprocess", "threshold", "--deadline", "30"}, &port);
    EXPECT_GT(port, 0);
    std::vector<std::unique_ptr<Process>> joins;
    for (int p = 0; p < 3; ++p)
      joins.push_back(f.join(port, p, party_name(p), f.dir.file(fmt::format("dp{}_{}.model", round, p)),
                             {"--dp-ledger", f.dir.file(fmt::format("ledger{}.tsv", p)), "--dp-budget",
                              "3", "--json"}));
    std::vector<int> codes;
    for (auto& j : joins) codes.push_back(j->wait(60));
    EXPECT_EQ(server->wait(30), codes[0]);
    return std::make_pair(codes, std::move(joins));
  };
  auto [codes1, joins1] = run(1);
  for (int p = 0; p < 3; ++p) ASSERT_EQ(codes1[p], 0) << joins1[p]->err();
  const auto j = nlohmann::json::parse(joins1[0]->out());
  EXPECT_NEAR(j["differential_privacy"]["epsilon_per_party"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(j["differential_privacy"]["epsilon_total"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(j["differential_privacy"]["ledger_spent"].get<double>(), 2.0, 1e-9);
  // The coordinator's post-processing reached the parties (Settings.dp_postprocess).
  EXPECT_EQ(j["differential_privacy"]["postprocess"], "threshold");
  EXPECT_EQ(test::read_text(f.dir.file("dp1_0.model")), test::read_text(f.dir.file("dp1_2.model")));

  auto [codes2, joins2] = run(2);
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(codes2[p], 1);
    EXPECT_NE(joins2[p]->err().find("DP budget exceeded"), std::string::npos) << joins2[p]->err();
    EXPECT_FALSE(exists(f.dir.file(fmt::format("dp2_{}.model", p))));
  }
  // The refused run recorded nothing: one line per ledger.
  std::ifstream ledger(f.dir.file("ledger0.tsv"));
  std::size_t lines = 0;
  for (std::string l; std::getline(ledger, l);) lines += !l.empty() && l[0] != '#';
  EXPECT_EQ(lines, 1u);
}

// ---- what the coordinator sees --------------------------------------------------------------

// Pearson's chi-square statistic of the byte values of `bytes` against the uniform law.
double byte_chi_square(const std::string& bytes) {
  std::vector<double> counts(256, 0);
  for (unsigned char b : bytes) ++counts[b];
  const double expected = static_cast<double>(bytes.size()) / 256;
  double chi = 0;
  for (double c : counts) chi += (c - expected) * (c - expected) / expected;
  return chi;
}

// One federation in this process (coordinator and parties on threads, over real gRPC on
// loopback; m = 512, ρ = 16, seed 3): `observe` sees every contribution the coordinator
// receives; each party trains on its shard and compares models, then runs `after` (its rank,
// communicator, model and rows) before it finishes. Every party must succeed.
using Observe = std::function<void(int, std::uint64_t, const std::string&, std::string_view)>;
using AfterTraining = std::function<void(std::size_t, federated::GrpcParty&, const federated::PartyResult&,
                                         const Dataset&)>;
void federation_in_process(Federation& f, bool secure, Observe observe, const AfterTraining& after = {}) {
  federated::CoordinatorOptions o;
  o.listen = "127.0.0.1:0";
  o.parties = static_cast<int>(f.shards.size());
  o.tls = {f.pki + "/ca.pem", f.pki + "/server.pem", f.pki + "/server.key"};
  o.deadline_seconds = 60;
  o.secure_aggregation = secure;
  o.settings.labels = LabelSet::parse_list(f.labels);
  o.settings.hyper.m = 512;
  o.settings.hyper.rho = 16;
  o.settings.hyper.seed = 3;
  o.observe = std::move(observe);
  federated::Coordinator coordinator(o);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(f.shards.size());
  for (std::size_t p = 0; p < f.shards.size(); ++p)
    threads.emplace_back([&, p] {
      try {
        federated::JoinOptions j;
        j.server = fmt::format("127.0.0.1:{}", coordinator.port());
        j.tls = {f.pki + "/ca.pem", f.cert(party_name(static_cast<int>(p))) + ".pem",
                 f.cert(party_name(static_cast<int>(p))) + ".key"};
        j.require_secure_aggregation = secure;  // the control runs are without, on purpose
        auto comm = federated::GrpcParty::join(j);
        const Dataset data = io::load_dataset(f.shards[p], {});
        federated::FederationSettings s;
        s.hyper = comm->settings().hyper;
        s.labels = comm->settings().labels;
        s.threads = 1;
        federated::PartyInput in;
        in.data = &data;
        auto result = federated::train_party(*comm, in, s);
        std::string file;
        federated::compare_models(*comm, result, file);
        if (after) after(p, *comm, result, data);
        comm->finish(file);
      } catch (const std::exception& e) {
        errors[p] = e.what();
      }
    });
  const auto outcome = coordinator.run();
  for (auto& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(outcome.parties.size(), f.shards.size());
}

// Every 32-bit all-reduce payload the coordinator receives: the parties' count vectors
// (masked or not), by rank.
std::vector<std::string> counts_seen_by_coordinator(Federation& f, bool secure) {
  std::mutex mutex;
  std::vector<std::string> seen(f.shards.size());
  federation_in_process(f, secure, [&](int rank, std::uint64_t, const std::string& op, std::string_view payload) {
    std::lock_guard<std::mutex> lock(mutex);
    if (op == "all-reduce (32-bit)") seen[rank] = std::string(payload);
  });
  return seen;
}

// Federated evaluation over gRPC, end to end: every party joins with --test (its own
// shard), and each learns the federation's accuracy and confusion matrix, equal to
// `flynn predict` with the federation's model on the pooled rows.
TEST(FederatedGrpc, FederatedEvaluationEqualsCentralEvaluation) {
  Federation f(3, "iid");
  int port = 0;
  auto server = f.serve(3, {"--deadline", "60"}, &port);
  ASSERT_GT(port, 0) << server->err();
  std::vector<std::unique_ptr<Process>> joins;
  for (int p = 0; p < 3; ++p)
    joins.push_back(f.join(port, p, party_name(p), f.dir.file(fmt::format("p{}.model", p)),
                           {"--json", "--test", f.shards[static_cast<std::size_t>(p)]}));
  for (auto& j : joins) ASSERT_EQ(j->wait(120), 0) << j->err();
  ASSERT_EQ(server->wait(30), 0) << server->err();
  const auto central = test::run_cli(fmt::format("predict --model {} --data {} --json -q", f.dir.file("p0.model"),
                                                 f.pooled));
  ASSERT_EQ(central.exit_code, 0) << central.err;
  const auto c = nlohmann::json::parse(central.out);
  nlohmann::json first;
  for (auto& j : joins) {
    const auto t = nlohmann::json::parse(j->out())["federation_test"];
    EXPECT_EQ(t["parties_with_test_rows"], 3);
    EXPECT_EQ(t["rows"], c["rows"]);
    EXPECT_DOUBLE_EQ(t["accuracy"].get<double>(), c["accuracy"].get<double>());
    if (first.is_null()) first = t;
    EXPECT_EQ(t, first);  // every party learns the same
  }
}

// A federation in this process with federated evaluation, each party's test rows its own
// shard: the last 64-bit sum each party sends is its confusion matrix (masked or not).
// Returns those payloads by rank, with each party's own matrix.
struct EvaluationSeen {
  std::vector<std::string> payload;             // the last 64-bit sum of each rank
  std::vector<std::vector<std::uint64_t>> own;  // each party's own matrix
};
EvaluationSeen evaluation_seen_by_coordinator(Federation& f, bool secure) {
  std::mutex mutex;
  EvaluationSeen seen;
  seen.payload.resize(f.shards.size());
  seen.own.resize(f.shards.size());
  std::vector<federated::FederatedEvaluation> results(f.shards.size());
  const auto observe = [&](int rank, std::uint64_t, const std::string& op, std::string_view payload) {
    std::lock_guard<std::mutex> lock(mutex);
    if (op == "all-reduce (64-bit)") seen.payload[rank] = std::string(payload);
  };
  federation_in_process(f, secure, observe,
                        [&](std::size_t p, federated::GrpcParty& comm, const federated::PartyResult& result,
                            const Dataset& data) {
                          // The party's own matrix (row: true class), to look for it below.
                          const LabelSet& labels = result.model.labels();
                          const std::size_t L = labels.size();
                          std::vector<std::uint64_t> own(L * L, 0);
                          const std::vector<std::uint32_t> predicted = result.model.predict(data);
                          for (std::size_t r = 0; r < data.n_rows; ++r) {
                            std::size_t truth = L;
                            for (std::size_t l = 0; l < L; ++l)
                              if (labels.name(l) == data.classes.name(data.labels[r])) truth = l;
                            ++own[truth * L + predicted[r]];
                          }
                          {
                            std::lock_guard<std::mutex> lock(mutex);
                            seen.own[p] = own;
                          }
                          results[p] = federated::evaluate_together(comm, result.model, &data);
                        });
  // Every party learned the sum of the three.
  std::vector<std::uint64_t> sum(seen.own[0].size(), 0);
  for (const auto& m : seen.own)
    for (std::size_t k = 0; k < m.size(); ++k) sum[k] += m[k];
  for (const auto& r : results) EXPECT_EQ(r.confusion, sum);
  return seen;
}

// A SUM64 payload's words (little-endian on the wire).
std::vector<std::uint64_t> little_endian_words(const std::string& payload) {
  std::vector<std::uint64_t> w(payload.size() / 8, 0);
  for (std::size_t i = 0; i < w.size(); ++i)
    for (int b = 7; b >= 0; --b) w[i] = (w[i] << 8) | static_cast<unsigned char>(payload[i * 8 + static_cast<std::size_t>(b)]);
  return w;
}

TEST(FederatedGrpc, CoordinatorSeesNoPartysOwnConfusionMatrix) {
  Federation f(3, "iid");
  const auto masked = evaluation_seen_by_coordinator(f, true);
  for (std::size_t p = 0; p < masked.payload.size(); ++p) {
    const std::vector<std::uint64_t>& own = masked.own[p];
    ASSERT_EQ(masked.payload[p].size(), own.size() * 8) << "party " << p;
    const std::vector<std::uint64_t> words = little_endian_words(masked.payload[p]);
    EXPECT_NE(words, own) << "party " << p;
    // Masked words are uniform: no word is a small count.
    for (std::uint64_t w : words) EXPECT_GT(w, std::uint64_t{1} << 20) << "party " << p;
  }
  // The test has power: without secure aggregation the coordinator reads each matrix.
  const auto clear = evaluation_seen_by_coordinator(f, false);
  for (std::size_t p = 0; p < clear.payload.size(); ++p) {
    const std::vector<std::uint64_t> words = little_endian_words(clear.payload[p]);
    EXPECT_EQ(words, clear.own[p]) << "party " << p;
  }
}

TEST(FederatedGrpc, CoordinatorSeesOnlyUniformlyRandomMaskedCounts) {
  Federation f(3, "iid");
  // 512 × 3 counts × 4 bytes = 6144 bytes per party; chi-square with 255 degrees of
  // freedom. The masks are fresh each run, so the bound is a quantile a uniform law passes
  // by chance: at the 99.9% quantile (330.5) three parties in two suites failed about one
  // CI run in 170 (seen once at 340.9); at 1 − 10⁻⁹ (414.5) a uniform law fails about one
  // in 10⁸, while the statistic of masked bytes follows chi-square(255) (120 runs: mean
  // 254.9, sd 22.1) and the unmasked counts below exceed it many times over.
  constexpr double kCritical = 414.5;
  const auto masked = counts_seen_by_coordinator(f, true);
  for (std::size_t p = 0; p < masked.size(); ++p) {
    ASSERT_EQ(masked[p].size(), 512u * 3 * 4);
    EXPECT_LT(byte_chi_square(masked[p]), kCritical) << "party " << p;
  }
  // The test has power: the same counts unmasked are far from uniform.
  const auto clear = counts_seen_by_coordinator(f, false);
  for (std::size_t p = 0; p < clear.size(); ++p)
    EXPECT_GT(byte_chi_square(clear[p]), 10 * kCritical) << "party " << p;
}

// ---- key binding: a coordinator cannot swap the parties' X25519 keys ------------------------

TEST(KeyBinding, SignatureBindsTheKeyToTheCertificatesName) {
  Federation f(3, "iid");
  const std::string ca = test::read_text(f.pki + "/ca.pem");
  const std::string cert = test::read_text(f.cert(party_name(1)) + ".pem");
  const std::string key = test::read_text(f.cert(party_name(1)) + ".key");
  const federated::X25519KeyPair x, other;
  EXPECT_EQ(federated::certificate_common_name(cert), party_name(1));
  const std::string sig = federated::sign_exchange_key(key, party_name(1), x.public_key());
  EXPECT_NO_THROW(federated::verify_exchange_key(ca, cert, party_name(1), x.public_key(), sig));
  const auto fails = [&](const std::string& c, const std::string& name, const std::string& k,
                         std::string s, const std::string& want) {
    try {
      federated::verify_exchange_key(ca, c, name, k, s);
      ADD_FAILURE() << "accepted: " << want;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  fails(cert, party_name(1), other.public_key(), sig, "not the one its certificate's key signed");
  std::string flipped = sig;
  flipped[flipped.size() / 2] ^= 1;
  fails(cert, party_name(1), x.public_key(), flipped, "not the one its certificate's key signed");
  // Another party's certificate cannot vouch for the name, nor sign for it.
  const std::string cert0 = test::read_text(f.cert(party_name(0)) + ".pem");
  fails(cert0, party_name(1), x.public_key(), sig, "its certificate names");
  fails(cert0, party_name(0), x.public_key(), sig, "not the one its certificate's key signed");
  // A certificate of another CA (e.g. the coordinator's own, self-made) is refused.
  f.other_pki = f.dir.file("other");
  make_pki(f.other_pki, {party_name(1)});
  const std::string foreign = test::read_text(f.cert(party_name(1), f.other_pki) + ".pem");
  const std::string foreign_sig = federated::sign_exchange_key(
      test::read_text(f.cert(party_name(1), f.other_pki) + ".key"), party_name(1), x.public_key());
  fails(foreign, party_name(1), x.public_key(), foreign_sig, "not issued by the federation's CA");
  fails("", party_name(1), x.public_key(), sig, "missing or unreadable");
}

// A malicious coordinator (in this process, over real gRPC on loopback) replaces party 1's
// X25519 key in the Welcome with a key of its own, which would let it derive the masks
// party 1 shares with the others: every party detects it before masking, the round aborts
// for everyone with the reason, and no party trains.
TEST(FederatedGrpc, SwappedKeyAbortsTheRound) {
  Federation f(3, "iid");
  federated::CoordinatorOptions o;
  o.listen = "127.0.0.1:0";
  o.parties = 3;
  o.tls = {f.pki + "/ca.pem", f.pki + "/server.pem", f.pki + "/server.key"};
  o.deadline_seconds = 30;
  o.settings.labels = LabelSet::parse_list(f.labels);
  o.settings.hyper.m = 512;
  o.settings.hyper.rho = 16;
  o.settings.hyper.seed = 3;
  const federated::X25519KeyPair attacker;
  o.tamper_public_keys = [&](std::vector<std::string>& keys) { keys[1] = attacker.public_key(); };
  federated::Coordinator coordinator(o);
  std::vector<std::string> errors(3);
  std::vector<int> trained(3, 0);
  std::vector<std::thread> threads;
  for (int p = 0; p < 3; ++p)
    threads.emplace_back([&, p] {
      try {
        federated::JoinOptions j;
        j.server = fmt::format("127.0.0.1:{}", coordinator.port());
        j.tls = {f.pki + "/ca.pem", f.cert(party_name(p)) + ".pem", f.cert(party_name(p)) + ".key"};
        j.deadline_seconds = 30;
        auto comm = federated::GrpcParty::join(j);
        trained[p] = 1;  // never reached: the welcome is refused
      } catch (const std::exception& e) {
        errors[p] = e.what();
      }
    });
  std::string coordinator_error;
  try {
    coordinator.run();
  } catch (const federated::FederationError& e) {
    coordinator_error = e.what();
  }
  for (auto& t : threads) t.join();
  EXPECT_NE(coordinator_error.find("substituting keys"), std::string::npos) << coordinator_error;
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(trained[p], 0) << p;
    EXPECT_NE(errors[p].find("substituting keys"), std::string::npos) << p << ": " << errors[p];
  }
  // Party 1 sees its own key replaced; the others see a key its certificate did not sign.
  EXPECT_NE(errors[1].find("another key or name than it sent"), std::string::npos) << errors[1];
  EXPECT_NE(errors[0].find("party '" + party_name(1) + "' (rank 1)"), std::string::npos) << errors[0];
}

}  // namespace
}  // namespace flynn

#endif  // FLYNN_HAVE_GRPC
