// The parts of the federation's trust machinery, each alone: relayed text made inert
// (relayed_text.hpp), the sums a party allows (grpc_party_sums.hpp: none before the
// agreement, only the agreed shapes after it), the coordinator's collective step
// (grpc_collective_step.hpp) and its check of a Join (grpc_join_check.hpp).
#include <gtest/gtest.h>

#include "federated/relayed_text.hpp"
#include "federated/safety_switches.hpp"
#include "flynn/build_config.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/party.hpp"

#if FLYNN_HAVE_GRPC
#include "federated/grpc_collective_step.hpp"
#include "federated/grpc_join_check.hpp"
#include "federated/grpc_party_sums.hpp"
#include "federated/grpc_roster.hpp"
#include "flynn/federated/grpc.hpp"
#endif

namespace flynn::federated {
namespace {

TEST(RelayedText, ControlCharactersAndLayoutTricksAreEscaped) {
  EXPECT_EQ(inert_text("plain words, 'quoted' and ünïcode τ"), "plain words, 'quoted' and ünïcode τ");
  EXPECT_EQ(inert_text("\x1b[2Jred\x07\nnext"), "\\x1b[2Jred\\x07\\x0anext");
  EXPECT_EQ(inert_text("a\\b"), "a\\\\b") << "a backslash cannot fake an escape";
  EXPECT_EQ(inert_text("\xc2\x9b" "31m"), "\\u{009b}31m") << "C1 control (CSI)";
  EXPECT_EQ(inert_text("abc\xe2\x80\xae" "fed"), "abc\\u{202e}fed") << "right-to-left override";
  EXPECT_EQ(inert_text("\xff\xfe"), "\\xff\\xfe") << "not UTF-8";
  EXPECT_EQ(inert_text("\xe2\x82"), "\\xe2\\x82") << "a cut sequence";
  EXPECT_EQ(inert_text(std::string(2000, 'x'), 10), std::string(10, 'x') + "… (1990 more bytes)");
  EXPECT_EQ(relayed_from("party 1", "it said \"hi\""), "party 1 says: \"it said \\\"hi\\\"\"");
}

TEST(RelayedText, WithTheCheckOffTextPassesRaw) {
  const SafetyCheckOff off(SafetyCheck::InertText);
  EXPECT_EQ(inert_text("\x1b[2J"), "\x1b[2J");
}

#if FLYNN_HAVE_GRPC

TEST(AgreedSums, NoSumBeforeTheAgreementAndOnlyTheAgreedOnesAfter) {
  AgreedSums sums;
  EXPECT_THROW(sums.check("row totals", 8, 3), FederationError) << "masked data before the agreement";
  sums.agree(std::string(32, 'c'), {{"row totals", 8, 3}, {"counts", 4, 768}});
  EXPECT_NO_THROW(sums.check("row totals", 8, 3));
  EXPECT_NO_THROW(sums.check("counts", 4, 768));
  EXPECT_THROW(sums.check("counts", 4, 769), FederationError) << "another length";
  EXPECT_THROW(sums.check("counts", 8, 768), FederationError) << "another width";
  EXPECT_THROW(sums.check("dp release", 8, 768), FederationError) << "another purpose";
  EXPECT_EQ(sums.largest_bytes(), 768u * 4);
  EXPECT_THROW(sums.agree("", {}), FederationError) << "agreed twice";
}

grpcwire::pb::Contribution contribution(std::uint64_t seq, grpcwire::pb::Op op, std::string payload,
                                        std::string purpose, std::string signature = "s") {
  grpcwire::pb::Contribution c;
  c.set_seq(seq);
  c.set_op(op);
  c.set_payload(std::move(payload));
  c.set_purpose(std::move(purpose));
  if (op == grpcwire::pb::ALLGATHER) c.set_signature(std::move(signature));
  return c;
}

TEST(CollectiveStep, ContributionsAreCheckedAsTheyArrive) {
  using grpcwire::pb::ALLGATHER;
  using grpcwire::pb::SUM32;
  CollectiveStep step(3, 1 << 20, [](int r) { return "party " + std::to_string(r); });
  auto c = contribution(1, ALLGATHER, "a", "transcript");
  EXPECT_TRUE(step.take(0, c).error.empty());
  c = contribution(1, ALLGATHER, "b", "agreement");
  EXPECT_NE(step.take(1, c).error.find("for 'agreement' where the others called a all-gather for 'transcript'"),
            std::string::npos);
  c = contribution(1, ALLGATHER, "b", "transcript");
  EXPECT_TRUE(step.take(1, c).error.empty());
  c = contribution(1, ALLGATHER, "again", "transcript");
  EXPECT_NE(step.take(1, c).error.find("contributed twice"), std::string::npos);
  c = contribution(1, ALLGATHER, "c", "transcript");
  const auto done = step.take(2, c);
  ASSERT_TRUE(done.result);
  EXPECT_EQ(done.result->result().blocks_size(), 3);
  EXPECT_EQ(done.result->result().signatures_size(), 3);
  EXPECT_EQ(step.seq(), 2u);
  // A sum: every contribution of the first one's size, summed modulo 2^32.
  c = contribution(2, SUM32, std::string("\x01\x00\x00\x00\xff\xff\xff\xff", 8), "counts");
  EXPECT_TRUE(step.take(0, c).error.empty());
  c = contribution(2, SUM32, std::string(12, '\0'), "counts");
  EXPECT_NE(step.take(1, c).error.find("sent 12 bytes to collective #2"), std::string::npos);
  c = contribution(7, SUM32, std::string(8, '\0'), "counts");
  EXPECT_NE(step.take(1, c).error.find("sent collective #7 while #2"), std::string::npos);
  c = contribution(2, SUM32, std::string("\x02\x00\x00\x00\x02\x00\x00\x00", 8), "counts");
  EXPECT_TRUE(step.take(1, c).error.empty());
  c = contribution(2, SUM32, std::string(8, '\0'), "counts");
  const auto sum = step.take(2, c);
  ASSERT_TRUE(sum.result);
  EXPECT_EQ(sum.result->result().blocks(0), std::string("\x03\x00\x00\x00\x01\x00\x00\x00", 8));
  EXPECT_EQ(step.largest_sum_bytes(), 8u);
  // Blocks that together would not fit the transport's cap.
  c = contribution(3, ALLGATHER, std::string(2 << 20, 'x'), "report");
  EXPECT_NE(step.take(0, c).error.find("would exceed --max-message-mb"), std::string::npos);
}

TEST(JoinCheck, AJoinMustBeThisProtocolsAndCarryTheTlsCertificate) {
  grpcwire::pb::PartyMessage m;
  ASSERT_TRUE(check_join(m, "").has_value());
  EXPECT_EQ(check_join(m, "")->why, "the first message was not a join");
  m.mutable_join()->set_protocol(2);
  EXPECT_NE(check_join(m, "")->why.find("federation protocol 2, the coordinator 3"), std::string::npos);
  m.mutable_join()->set_protocol(kGrpcProtocolVersion);
  m.mutable_join()->set_public_key("short");
  EXPECT_NE(check_join(m, "")->why.find("not 32 bytes"), std::string::npos);
  m.mutable_join()->set_public_key(std::string(32, 'k'));
  m.mutable_join()->set_certificate("not a certificate");
  EXPECT_NE(check_join(m, "")->why.find("is not a PEM X.509 certificate"), std::string::npos);
}

std::shared_ptr<Slot> slot(const std::string& name) {
  auto s = std::make_shared<Slot>();
  s->name = name;
  return s;
}

// The roster alone: at most two streams of one name wait, a name joins once, the Welcomes
// rank the parties by sorted name and complete the common part for each.
TEST(Roster, AdmitsJoinsAndRanksByName) {
  Roster roster(2, /*any_name=*/false);
  const auto b1 = slot("b"), b2 = slot("b"), b3 = slot("b"), a = slot("a");
  EXPECT_FALSE(roster.admit(b1));
  EXPECT_FALSE(roster.admit(b2));
  ASSERT_TRUE(roster.admit(b3));
  EXPECT_NE(roster.admit(b3)->why.find("2 streams of 'b' are already waiting"), std::string::npos);
  grpcwire::pb::Join join;
  join.set_public_key(std::string(32, 'k'));
  EXPECT_FALSE(roster.join(b1, join));
  ASSERT_TRUE(roster.join(b2, join));
  EXPECT_EQ(roster.join(b2, join)->code, grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(roster.refuse(b2, "a duplicate"), 1u);
  EXPECT_FALSE(roster.complete());
  EXPECT_FALSE(roster.admit(a));
  EXPECT_FALSE(roster.join(a, join));
  ASSERT_TRUE(roster.complete());
  grpcwire::pb::Welcome common;
  common.set_federation_id(std::string(16, 'f'));
  const auto welcomes = roster.welcome(common);
  ASSERT_EQ(welcomes.size(), 2u);
  EXPECT_EQ(welcomes[0].first->name, "a");
  EXPECT_EQ(welcomes[0].second->welcome().rank(), 0);
  EXPECT_EQ(welcomes[1].second->welcome().rank(), 1);
  EXPECT_EQ(welcomes[1].second->welcome().names(0), "a");
  EXPECT_EQ(welcomes[1].second->welcome().parties(), 2);
  EXPECT_EQ(welcomes[1].second->welcome().federation_id(), std::string(16, 'f'));
  EXPECT_TRUE(roster.admit(slot("c"))) << "the federation is full";
  // A name that would act on a terminal is shown escaped in the roster's words.
  EXPECT_EQ(who(*slot("x\x1b[2J")), "party 'x\\x1b[2J'");
}

#endif  // FLYNN_HAVE_GRPC

}  // namespace
}  // namespace flynn::federated
