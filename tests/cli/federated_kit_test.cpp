// `flynn federated provision`, `revoke` and the kits of `serve --kit` / `join --kit`: the
// newcomer's path of docs/guide/federated.md run as processes on 127.0.0.1, the kits'
// certificates checked with the same checks the coordinator and the parties make, and a kit
// used by the wrong site refused naming the reason.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "flynn/error.hpp"
#include "flynn/federated/peer_certificate.hpp"
#include "flynn/federated/provision.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;

// Three parties' tables of one blob data set, and the pooled table (rows in party order).
struct Tables {
  test::TempDir dir;
  Tables() {
    const Dataset data = test::blobs(3, 30, 5, 41);
    std::ofstream pooled(dir.file("pooled.csv"));
    const std::string header = "f1,f2,f3,f4,f5,class\n";
    pooled << header;
    for (int p = 0; p < 3; ++p) {
      std::ofstream shard(dir.file(fmt::format("party{}.csv", p)));
      shard << header;
      for (std::size_t r = static_cast<std::size_t>(p) * 30; r < static_cast<std::size_t>(p + 1) * 30; ++r) {
        std::string line;
        for (std::size_t j = 0; j < data.n_features; ++j) line += fmt::format("{},", data.row(r)[j]);
        line += data.classes.name(data.labels[r]) + "\n";
        shard << line;
        pooled << line;
      }
    }
  }
};

std::string provision_cmd(const std::string& out, int port) {
  return fmt::format("federated provision --out {} --coordinator 127.0.0.1:{} --parties a,b,c", out, port);
}

TEST(FederationKits, ProvisionWritesOneKitPerSiteWithTheRightCertificates) {
  test::TempDir dir;
  const std::string out = dir.file("fed");
  const auto r = test::run_cli(provision_cmd(out, 7000));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* site : {"coordinator", "a", "b", "c"}) {
    const std::string kit = out + "/" + site;
    for (const char* f : {"ca.pem", "cert.pem", "key.pem", "crl.pem", "kit.json", "README.txt"})
      EXPECT_TRUE(fs::exists(kit + "/" + f)) << kit << "/" << f;
    struct stat st {};
    ASSERT_EQ(::stat((kit + "/key.pem").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << site;
    const federated::SiteKit k = federated::read_kit(kit);
    EXPECT_EQ(k.name, site);
    EXPECT_EQ(k.coordinator, "127.0.0.1:7000");
    EXPECT_EQ(k.parties, (std::vector<std::string>{"a", "b", "c"}));
    // The CRL is the CA's and current; the certificates carry their role's usage only.
    EXPECT_EQ(federated::RevocationList::load(k.crl, k.ca).size(), 0u);
    const std::string cert = test::read_text(k.cert);
    const bool server = std::string(site) == "coordinator";
    EXPECT_NO_THROW(federated::check_extended_key_usage(
        cert, server ? federated::TlsRole::Server : federated::TlsRole::Client, site));
    EXPECT_THROW(federated::check_extended_key_usage(
                     cert, server ? federated::TlsRole::Client : federated::TlsRole::Server, site),
                 Error);
  }
  struct stat st {};
  ASSERT_EQ(::stat((out + "/ca/ca.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto text = test::run_shell(fmt::format("openssl x509 -noout -text -in {}/coordinator/cert.pem", out));
  EXPECT_NE(text.out.find("IP Address:127.0.0.1"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("DNS:localhost"), std::string::npos) << text.out;
  const auto verify = test::run_shell(
      fmt::format("openssl verify -CAfile {0}/ca/ca.pem {0}/a/cert.pem {0}/coordinator/cert.pem", out));
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST(FederationKits, AnExistingKitIsNeverOverwrittenAndAFailureLeavesNothing) {
  test::TempDir dir;
  const std::string out = dir.file("fed");
  ASSERT_EQ(test::run_cli(provision_cmd(out, 7000)).exit_code, 0);
  const std::string key = test::read_text(out + "/a/key.pem");
  // The same names again: refused, nothing changed.
  test::expect_clean_error(test::run_cli(provision_cmd(out, 7000)), "never overwritten");
  EXPECT_EQ(test::read_text(out + "/a/key.pem"), key);
  // New parties with the existing CA: issued by it, the old kits untouched.
  const auto more = test::run_cli(
      fmt::format("federated provision --out {} --coordinator 127.0.0.1:7000 --parties d,e,f "
                  "--coordinator-name coordinator2", out));
  ASSERT_EQ(more.exit_code, 0) << more.err;
  EXPECT_NE(more.out.find("CA used"), std::string::npos) << more.out;
  EXPECT_EQ(test::read_text(out + "/d/ca.pem"), test::read_text(out + "/ca/ca.pem"));
  // A bad request writes nothing at all.
  test::expect_clean_error(
      test::run_cli(fmt::format("federated provision --out {} --coordinator 127.0.0.1 --parties x,y,z", dir.file("bad"))),
      "HOST:PORT");
  test::expect_clean_error(
      test::run_cli(fmt::format("federated provision --out {} --coordinator 127.0.0.1:1 --parties x,x,z", dir.file("bad"))),
      "named twice");
  test::expect_clean_error(
      test::run_cli(fmt::format("federated provision --out {} --coordinator 127.0.0.1:1 --parties x,y", dir.file("bad"))),
      "--min-parties");
  EXPECT_FALSE(fs::exists(dir.file("bad")));
}

// The guide's path: provision, serve --kit with --labels, three joins with --kit, --data
// and --model only; the models equal central training's byte for byte.
TEST(FederationKits, ProvisionServeAndThreeJoinsWithOneFlagEach) {
  Tables t;
  const std::string out = t.dir.file("fed");
  const int port = test::free_port();
  ASSERT_EQ(test::run_cli(provision_cmd(out, port)).exit_code, 0);
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 60 $F federated serve --kit fed/coordinator --labels c0,c1,c2 --seed 7 > serve.out 2> serve.err; echo $? > serve.rc ) & "
      "for p in 0 1 2; do n=$(echo a b c | cut -d' ' -f$((p+1))); "
      "( timeout 60 $F federated join --kit fed/$n --data party$p.csv --model $n.model > $n.out 2> $n.err; echo $? > $n.rc ) & done; "
      "wait; "
      "$F train --data pooled.csv --labels c0,c1,c2 --seed 7 --model central.model --quiet",
      t.dir.path().string(), FLYNN_CLI_PATH));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(test::read_text(t.dir.file("serve.rc")), "0\n") << test::read_text(t.dir.file("serve.err"));
  const std::string central = test::read_text(t.dir.file("central.model"));
  for (const char* n : {"a", "b", "c"}) {
    EXPECT_EQ(test::read_text(t.dir.file(fmt::format("{}.rc", n))), "0\n")
        << test::read_text(t.dir.file(fmt::format("{}.err", n)));
    EXPECT_TRUE(test::read_text(t.dir.file(fmt::format("{}.model", n))) == central) << n << ": not central training's";
  }
}

TEST(FederationKits, AKitUsedByTheWrongSiteIsRefusedNamingTheReason) {
  test::TempDir dir;
  const std::string out = dir.file("fed");
  ASSERT_EQ(test::run_cli(provision_cmd(out, 7000)).exit_code, 0);
  test::expect_clean_error(
      test::run_cli(fmt::format("federated join --kit {}/coordinator --data x.csv --model {}", out, dir.file("m"))),
      "the coordinator's kit, not a party's");
  test::expect_clean_error(test::run_cli(fmt::format("federated serve --kit {}/a --labels x,y", out)),
                           "the kit of the party 'a', not a coordinator's");
  test::expect_clean_error(test::run_cli(fmt::format("federated join --kit {} --data x.csv --model {}", dir.path().string(),
                                                     dir.file("m"))),
                           "not a kit folder");
  // The coordinator started with a party's certificate is told at once; the parties refuse it.
  const auto serve = test::run_cli(fmt::format("federated serve --labels x,y --kit {0}/coordinator --listen "
                                               "127.0.0.1:0 --cert {0}/a/cert.pem --key {0}/a/key.pem --deadline 1",
                                               out));
  EXPECT_NE(serve.err.find("warning: the coordinator: its certificate's extended key usage does not include "
                           "serverAuth"), std::string::npos) << serve.err;
}

TEST(FederationKits, ARevokedPartyIsRefusedByTheCoordinator) {
  Tables t;
  const std::string out = t.dir.file("fed");
  const int port = test::free_port();
  ASSERT_EQ(test::run_cli(provision_cmd(out, port)).exit_code, 0);
  const std::string crl_before = test::read_text(out + "/coordinator/crl.pem");
  const auto rv = test::run_cli(fmt::format("federated revoke b --out {}", out));
  ASSERT_EQ(rv.exit_code, 0) << rv.err;
  EXPECT_NE(test::read_text(out + "/coordinator/crl.pem"), crl_before);
  EXPECT_EQ(federated::RevocationList::load(out + "/a/crl.pem", out + "/a/ca.pem").size(), 1u);
  test::expect_clean_error(test::run_cli(fmt::format("federated revoke nobody --out {}", out)), "no site 'nobody'");
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 30 $F federated serve --kit fed/coordinator --labels c0,c1,c2 --deadline 5 > serve.out 2> serve.err ) & "
      "sleep 0.5; timeout 30 $F federated join --kit fed/b --data party1.csv --model b.model --deadline 5; "
      "echo rc=$?; wait",
      t.dir.path().string(), FLYNN_CLI_PATH));
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  EXPECT_NE((r.err + test::read_text(t.dir.file("serve.err"))).find("revoked"), std::string::npos)
      << r.err << test::read_text(t.dir.file("serve.err"));
  EXPECT_FALSE(fs::exists(t.dir.file("b.model")));
}

// A name is issued again only after its certificate is revoked, and the old certificate
// stays revoked through every later revocation (the CRL is rebuilt from every serial the CA
// revoked, not from the sites' current certificates).
TEST(FederationKits, ANameIssuedAgainKeepsItsOldCertificateRevoked) {
  Tables t;
  const std::string out = t.dir.file("fed");
  ASSERT_EQ(test::run_cli(provision_cmd(out, 7000)).exit_code, 0);
  const std::string old_b = test::read_text(out + "/b/cert.pem");
  const std::string again = fmt::format(
      "federated provision --out {} --coordinator 127.0.0.1:7000 --coordinator-name coordinator2 --parties b "
      "--min-parties 1", out);
  // Not revoked: the name is refused (whoever holds the old kit would join as 'b' too).
  fs::remove_all(out + "/b");
  test::expect_clean_error(test::run_cli(again), "its certificate is not revoked");
  EXPECT_FALSE(fs::exists(out + "/b"));
  EXPECT_FALSE(fs::exists(out + "/coordinator2"));
  // Revoked, then issued again: a new certificate, the old one still listed.
  ASSERT_EQ(test::run_cli(fmt::format("federated revoke b --out {}", out)).exit_code, 0);
  const auto r = test::run_cli(again);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string new_b = test::read_text(out + "/b/cert.pem");
  EXPECT_NE(new_b, old_b);
  // Another revocation rebuilds the CRL: the old 'b' stays in it, the new one is not.
  ASSERT_EQ(test::run_cli(fmt::format("federated revoke c --out {}", out)).exit_code, 0);
  for (const char* kit : {"a", "b", "coordinator", "coordinator2"}) {
    const auto crl = federated::RevocationList::load(fmt::format("{}/{}/crl.pem", out, kit), out + "/ca/ca.pem");
    EXPECT_EQ(crl.size(), 2u) << kit;
    EXPECT_THROW(crl.check(old_b, "the old b"), Error) << kit;
    EXPECT_NO_THROW(crl.check(new_b, "the new b")) << kit;
  }
}

// No line of gRPC's own log format ("E1207 12:00:00.000000000 123 file.cc:42] ...").
void expect_no_grpc_log_line(const std::string& err) {
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    const bool grpc_format = line.size() > 6 && std::string("EWID").find(line[0]) != std::string::npos &&
                             std::isdigit(static_cast<unsigned char>(line[1])) && line.find("] ") != std::string::npos;
    EXPECT_FALSE(grpc_format) << line;
  }
}

TEST(FederationKits, PartiesStartedBeforeTheCoordinatorWaitForIt) {
  Tables t;
  const std::string out = t.dir.file("fed");
  const int port = test::free_port();
  ASSERT_EQ(test::run_cli(provision_cmd(out, port)).exit_code, 0);
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "for p in 0 1 2; do n=$(echo a b c | cut -d' ' -f$((p+1))); "
      "( timeout 60 $F federated join --kit fed/$n --data party$p.csv --model $n.model > $n.out 2> $n.err; echo $? > $n.rc ) & done; "
      "sleep 5; timeout 60 $F federated serve --kit fed/coordinator --labels c0,c1,c2 > serve.out 2> serve.err; "
      "echo $? > serve.rc; wait",
      t.dir.path().string(), FLYNN_CLI_PATH));
  EXPECT_EQ(test::read_text(t.dir.file("serve.rc")), "0\n") << test::read_text(t.dir.file("serve.err"));
  for (const char* n : {"a", "b", "c"}) {
    const std::string err = test::read_text(t.dir.file(fmt::format("{}.err", n)));
    EXPECT_EQ(test::read_text(t.dir.file(fmt::format("{}.rc", n))), "0\n") << err;
    EXPECT_NE(err.find("is not up yet"), std::string::npos) << err;
    expect_no_grpc_log_line(err);
  }
}

// Each TLS failure a party can meet is named by its cause on the party's side, and the
// coordinator reports a refused handshake in one line of its own, without gRPC's log.
TEST(FederationKits, TlsFailuresNameTheirCause) {
  Tables t;
  const std::string out = t.dir.file("fed"), other = t.dir.file("other");
  const int port = test::free_port();
  ASSERT_EQ(test::run_cli(provision_cmd(out, port)).exit_code, 0);
  ASSERT_EQ(test::run_cli(provision_cmd(other, port)).exit_code, 0);
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 30 $F federated serve --kit fed/coordinator --labels c0,c1,c2 --deadline 8 > serve.out 2> serve.err ) & "
      "J=\"timeout 20 $F federated join --data party0.csv --model x.model --deadline 5\"; "
      "$J --kit other/a > unknown_ca.out 2> unknown_ca.err; "
      "$J --kit fed/a --server-name localhost.example > mismatch.out 2> mismatch.err; "
      "$J --kit fed/a --cert other/a/cert.pem --key other/a/key.pem > refused.out 2> refused.err; "
      // The coordinator's own certificate presented as a party's (openssl: a party checks its own).
      "timeout 10 openssl s_client -alpn h2 -connect 127.0.0.1:{2} -cert fed/coordinator/cert.pem "
      "-key fed/coordinator/key.pem -CAfile fed/ca/ca.pem -ign_eof < /dev/null > eku.out 2>&1; "
      "wait",
      t.dir.path().string(), FLYNN_CLI_PATH, port));
  auto err = [&](const char* name) { return test::read_text(t.dir.file(name)); };
  EXPECT_NE(err("unknown_ca.err").find("unknown CA: the coordinator's certificate is not signed"), std::string::npos)
      << err("unknown_ca.err");
  EXPECT_NE(err("mismatch.err").find("name mismatch"), std::string::npos) << err("mismatch.err");
  EXPECT_NE(err("refused.err").find("the coordinator refused this party's certificate"), std::string::npos)
      << err("refused.err");
  // The coordinator names each cause and the CN the certificate claims.
  EXPECT_NE(err("serve.err").find("refused a connection in the TLS handshake: unknown CA: the party's certificate is "
                                  "not signed by --ca (the certificate presented names 'a')"), std::string::npos)
      << err("serve.err");
  EXPECT_NE(err("serve.err").find("refused a connection in the TLS handshake: wrong extended key usage: the "
                                  "certificate is not a party's (no clientAuth; a coordinator's?) (the certificate "
                                  "presented names 'coordinator')"), std::string::npos) << err("serve.err");
  EXPECT_EQ(err("serve.err").find("joined ("), std::string::npos) << err("serve.err");
  for (const char* e : {"unknown_ca.err", "mismatch.err", "refused.err", "serve.err"}) expect_no_grpc_log_line(err(e));
  EXPECT_FALSE(fs::exists(t.dir.file("x.model")));
}

// Seconds (date +%s.%N) written by a test's shell in `path`.
double time_in(const std::string& path) { return std::stod(test::read_text(path)); }

// Before the start, a party that left may come back, so one leaving is waited for; but
// once every party that joined has left and nobody else is connected, there is no one to
// wait with: the coordinator stops within 2 s of the last one, non-zero, naming them
// (not at its deadline of 60 s). The parties are killed: no Failure message, only their
// connections close.
TEST(FederationKits, EveryPartyLeavingBeforeTheStartStopsTheCoordinator) {
  Tables t;
  const std::string out = t.dir.file("fed");
  const int port = test::free_port();
  ASSERT_EQ(test::run_cli(fmt::format("federated provision --out {} --coordinator 127.0.0.1:{} --parties a,b,c,d",
                                      out, port)).exit_code, 0);
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 60 $F federated serve --kit fed/coordinator --labels c0,c1,c2 --deadline 60 > serve.out 2> serve.err; "
      "echo $? > serve.rc; date +%s.%N > serve.t ) & "
      "for p in 0 1 2; do n=$(echo a b c | cut -d' ' -f$((p+1))); "
      "timeout 60 $F federated join --kit fed/$n --data party$p.csv --model $n.model --deadline 60 > $n.out 2> $n.err & "
      "echo $! > $n.pid; done; "
      "for i in $(seq 300); do grep -q '(3 of 4)' serve.err && break; sleep 0.1; done; "
      "date +%s.%N > killed.t; for n in a b c; do pkill -KILL -P $(cat $n.pid); done; wait",
      t.dir.path().string(), FLYNN_CLI_PATH));
  const std::string err = test::read_text(t.dir.file("serve.err"));
  ASSERT_NE(err.find("(3 of 4)"), std::string::npos) << err;
  EXPECT_NE(test::read_text(t.dir.file("serve.rc")), "0\n") << err;
  const double took = time_in(t.dir.file("serve.t")) - time_in(t.dir.file("killed.t"));
  EXPECT_LT(took, 2) << err;
  EXPECT_NE(err.find("flynn: error: every party that joined left before the federation started ("), std::string::npos)
      << err;
  for (const char* n : {"'a'", "'b'", "'c'"}) EXPECT_NE(err.find(n), std::string::npos) << err;
  std::cout << fmt::format("the coordinator stopped {:.2f} s after the last party was killed\n", took);
}

// A party of the coordinator's roster (the kit's parties) whose certificate is revoked can
// never join: with τ = every party, the federation cannot start. The coordinator stops
// and tells the waiting parties why; every process exits, non-zero, within 2 s of the
// revoked party's refusal.
TEST(FederationKits, ARevokedPartyOfTheRosterStopsEveryProcess) {
  Tables t;
  const std::string out = t.dir.file("fed");
  const int port = test::free_port();
  ASSERT_EQ(test::run_cli(provision_cmd(out, port)).exit_code, 0);
  ASSERT_EQ(test::run_cli(fmt::format("federated revoke c --out {}", out)).exit_code, 0);
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 60 $F federated serve --kit fed/coordinator --labels c0,c1,c2 --deadline 60 > serve.out 2> serve.err; "
      "echo $? > serve.rc; date +%s.%N > serve.t ) & "
      "for p in 0 1; do n=$(echo a b | cut -d' ' -f$((p+1))); "
      "( timeout 60 $F federated join --kit fed/$n --data party$p.csv --model $n.model --deadline 60 > $n.out 2> $n.err; "
      "echo $? > $n.rc; date +%s.%N > $n.t ) & done; "
      "for i in $(seq 300); do grep -q '(2 of 3)' serve.err && break; sleep 0.1; done; "
      "date +%s.%N > c_started.t; "
      "timeout 60 $F federated join --kit fed/c --data party2.csv --model c.model --deadline 60 > c.out 2> c.err; "
      "echo $? > c.rc; date +%s.%N > c.t; wait",
      t.dir.path().string(), FLYNN_CLI_PATH));
  auto text = [&](const std::string& name) { return test::read_text(t.dir.file(name)); };
  const std::string err = text("serve.err");
  ASSERT_NE(err.find("(2 of 3)"), std::string::npos) << err;
  EXPECT_NE(text("serve.rc"), "0\n") << err;
  EXPECT_NE(err.find("revoked"), std::string::npos) << err;
  EXPECT_NE(err.find("it can never join, so at most 2 of the parties allowed ('a', 'b', 'c') can, and the "
                     "federation needs 3"), std::string::npos) << err;
  EXPECT_NE(text("c.rc"), "0\n");
  EXPECT_NE(text("c.err").find("revoked"), std::string::npos) << text("c.err");
  double last = time_in(t.dir.file("serve.t"));
  for (const char* n : {"a", "b"}) {
    const std::string e = text(fmt::format("{}.err", n));
    EXPECT_NE(text(fmt::format("{}.rc", n)), "0\n") << e;
    EXPECT_NE(e.find("it can never join"), std::string::npos) << e;
    last = std::max(last, time_in(t.dir.file(fmt::format("{}.t", n))));
  }
  const double took = last - time_in(t.dir.file("c.t"));
  EXPECT_LT(took, 2) << err;
  std::cout << fmt::format("every process exited within {:.2f} s of the revoked party's exit ({:.2f} s after it "
                           "started)\n", took, last - time_in(t.dir.file("c_started.t")));
  for (const char* n : {"a.model", "b.model", "c.model"}) EXPECT_FALSE(fs::exists(t.dir.file(n))) << n;
}

// Expired certificates, on each side: a party refuses its own (it would be refused), a
// client presenting one is refused by the coordinator's handshake, a coordinator refuses to
// start with one, and a party refuses a coordinator that presents one, each naming the
// cause. The certificates are issued by the
// federation's own CA with openssl, valid until yesterday.
TEST(FederationKits, ExpiredCertificatesAreRefusedOnBothSidesNamingTheCause) {
  Tables t;
  const std::string out = t.dir.file("fed");
  const int port = test::free_port();
  ASSERT_EQ(test::run_cli(provision_cmd(out, port)).exit_code, 0);
  const auto issued = test::run_shell(fmt::format(
      "cd {0} && "
      "printf 'extendedKeyUsage=clientAuth\\n' > client.ext && "
      "printf 'extendedKeyUsage=serverAuth\\nsubjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext && "
      "for n in a coordinator; do "
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $n.key -out $n.csr -subj /CN=$n && "
      "e=client.ext; [ $n = coordinator ] && e=server.ext; "
      "openssl x509 -req -in $n.csr -CA fed/ca/ca.pem -CAkey fed/ca/ca.key -days -1 -extfile $e -out $n.pem || exit 1; "
      "done",
      t.dir.path().string()));
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  const std::string dir = t.dir.path().string();
  // The party's own certificate: refused before it connects.
  const auto own = test::run_cli(fmt::format("federated join --kit {0}/fed/a --cert {0}/a.pem --key {0}/a.key "
                                             "--data {0}/party0.csv --model {0}/a.model --deadline 5", dir));
  test::expect_clean_error(own, "this party's certificate (--cert) has expired");
  // The same certificate presented to the coordinator anyway (a client without that check).
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 30 $F federated serve --kit fed/coordinator --labels c0,c1,c2 --deadline 4 > serve.out 2> serve.err ) & "
      "for i in $(seq 100); do grep -q 'listening on' serve.err && break; sleep 0.1; done; "
      "timeout 10 openssl s_client -alpn h2 -connect 127.0.0.1:{2} -cert a.pem -key a.key -CAfile fed/ca/ca.pem -ign_eof "
      "< /dev/null > s_client.out 2> s_client.err; wait",
      dir, FLYNN_CLI_PATH, port));
  const std::string serve_err = test::read_text(t.dir.file("serve.err"));
  EXPECT_NE(serve_err.find("refused a connection in the TLS handshake: the party's certificate has expired (the "
                           "certificate presented names 'a')"), std::string::npos) << serve_err;
  EXPECT_EQ(serve_err.find("joined ("), std::string::npos) << serve_err;
  // A coordinator with an expired certificate: it refuses to start.
  test::expect_clean_error(
      test::run_cli(fmt::format("federated serve --kit {0}/fed/coordinator --labels c0,c1 --listen 127.0.0.1:0 "
                                "--cert {0}/coordinator.pem --key {0}/coordinator.key --deadline 5", dir)),
      "the coordinator's certificate (" + dir + "/coordinator.pem) has expired");
  // A party meeting a server that presents it anyway (openssl's, not flynn's).
  const auto p = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 15 openssl s_server -www -accept 127.0.0.1:{2} -cert coordinator.pem -key coordinator.key "
      "-CAfile fed/ca/ca.pem -Verify 1 > s_server.out 2> s_server.err ) & S=$!; sleep 1; "
      "timeout 20 $F federated join --kit fed/a --data party0.csv --model a.model --deadline 5 > join.out 2> join.err; "
      "echo $? > join.rc; pkill -P $S; wait",
      dir, FLYNN_CLI_PATH, port));
  const std::string join_err = test::read_text(t.dir.file("join.err"));
  EXPECT_NE(test::read_text(t.dir.file("join.rc")), "0\n") << join_err;
  EXPECT_NE(join_err.find("the coordinator's certificate has expired"), std::string::npos) << join_err;
  EXPECT_FALSE(fs::exists(t.dir.file("a.model")));
}

// The guide's first federated example on a shared table: kits, a coordinator and three
// party processes, central training, the byte comparison; under 30 s on a 2-core machine.
TEST(FederationTrial, ASharedTableEqualsCentralTrainingInUnder30Seconds) {
  if (test::openml_dir().empty()) GTEST_SKIP() << "../shared/data/openml not found";
  const std::string table = test::openml_dir() + "/44_spambase.csv.gz";
  test::TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = test::run_cli(fmt::format("federated trial --parties 3 --data {} --out {}", table, dir.file("trial")));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("the federation's model equals central training's byte for byte"), std::string::npos) << r.out;
  EXPECT_LT(took, 30) << r.out;
  // Real processes, each with its own output, and the three shards are the table.
  for (const char* n : {"party01", "party02", "party03"}) {
    EXPECT_NE(r.out.find(fmt::format("{} (exit 0):", n)), std::string::npos) << r.out;
    EXPECT_TRUE(test::read_text(dir.file(fmt::format("trial/{}.model", n))) == test::read_text(dir.file("trial/central.model")));
  }
  EXPECT_NE(r.out.find("secure aggregation on"), std::string::npos) << r.out;
  std::cout << fmt::format("trial on {}: {:.1f} s\n", table, took);
}

// A model that differs is reported as such, with a non-zero exit: the comparison can fail
// (the central training is given another seed than the federation's).
TEST(FederationTrial, AFederationThatDiffersFromCentralTrainingFails) {
  Tables t;
  const auto r = test::run_cli(fmt::format("federated trial --parties 3 --data {} --out {} --seed 5 --central-seed 6",
                                           t.dir.file("pooled.csv"), t.dir.file("trial")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("DIFFERS from central training's"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace flynn
