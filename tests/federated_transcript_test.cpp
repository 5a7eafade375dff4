// The signed transcript of a gRPC federation and its signed blocks
// (src/federated/grpc_transcript.hpp): a party's signature of the Welcome it was told
// verifies with its certificate, breaks when any field differs (every field of Welcome and
// Settings, found by reflection, so fields added later are tested too, and fields this
// build does not know), and ignores the rank; a relayed block's signature breaks when its
// sender, collective, operation, purpose, federation or content differ.
#include <gtest/gtest.h>

#include "flynn/build_config.hpp"

#if FLYNN_HAVE_GRPC

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/unknown_field_set.h>

#include <fmt/format.h>

#include "federation_harness.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/secure_aggregation.hpp"
#include "grpc_transcript.hpp"
#include "wire_messages.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace pb = federated::grpcwire::pb;
namespace gp = google::protobuf;
using federated::grpcwire::sign_transcript;
using federated::grpcwire::transcript_digest;
using federated::grpcwire::transcript_signed_by;

// A Welcome as the coordinator writes it, for 3 parties with the certificates of `pki`.
pb::Welcome sample_welcome(const std::string& pki) {
  pb::Welcome w;
  w.set_rank(1);
  w.set_parties(3);
  w.set_federation_id(std::string(16, '\x5a'));
  w.set_secure_aggregation(true);
  w.set_deadline_seconds(30);
  w.set_wants_model(true);
  for (int p = 0; p < 3; ++p) {
    const federated::X25519KeyPair keys;
    const std::string name = test::party_name(p);
    w.add_names(name);
    w.add_public_keys(keys.public_key());
    w.add_certificates(test::read_text(pki + "/" + name + ".pem"));
    w.add_key_signatures(federated::sign_exchange_key(test::read_text(pki + "/" + name + ".key"), name,
                                                      keys.public_key()));
  }
  // Settings as the coordinator's table writes them (grpc_wire.hpp): labels, name/value pairs.
  federated::SharedSettings settings;
  settings.hyper.m = 256;
  settings.hyper.rho = 8;
  settings.hyper.seed = 7;
  settings.labels = LabelSet(std::vector<std::string>{"c0", "c1"});
  settings.dp = federated::DpParams{};
  settings.dp->epsilon = 1;
  settings.dp->T = 40;
  *w.mutable_settings() = federated::grpcwire::to_proto(settings);
  return w;
}

struct FederatedTranscript : ::testing::Test {
  test::TempDir dir;
  std::string pki = dir.file("pki");
  void SetUp() override { test::make_pki(pki, {test::party_name(0), test::party_name(1), test::party_name(2)}); }
  std::string cert(int p) const { return test::read_text(pki + "/" + test::party_name(p) + ".pem"); }
  std::string key(int p) const { return test::read_text(pki + "/" + test::party_name(p) + ".key"); }
};

TEST_F(FederatedTranscript, SignatureVerifiesWithTheSignersCertificateOnly) {
  const pb::Welcome w = sample_welcome(pki);  // party 1's view
  EXPECT_EQ(transcript_digest(w).size(), 32u);
  const std::string sig = sign_transcript(key(1), w);
  EXPECT_TRUE(transcript_signed_by(cert(1), w, 1, sig));
  EXPECT_FALSE(transcript_signed_by(cert(0), w, 1, sig)) << "another party's certificate";
  EXPECT_FALSE(transcript_signed_by(cert(1), w, 0, sig)) << "another rank";
  std::string flipped = sig;
  flipped[flipped.size() / 2] ^= 1;
  EXPECT_FALSE(transcript_signed_by(cert(1), w, 1, flipped));
  EXPECT_FALSE(transcript_signed_by(cert(1), w, 1, ""));
  pb::Welcome other = w;
  other.set_federation_id(std::string(16, '\x5b'));
  EXPECT_FALSE(transcript_signed_by(cert(1), other, 1, sig));
  // A key-binding signature is not a transcript signature, even of the same party.
  EXPECT_FALSE(transcript_signed_by(cert(1), w, 1, w.key_signatures(1)));
  EXPECT_THROW(transcript_signed_by("", w, 1, sig), Error);
}

// A relayed block verifies only where its sender put it: its rank, collective number,
// operation, purpose, content and federation (as the receiver was told it).
TEST_F(FederatedTranscript, BlockSignatureBindsItsPlaceAndContent) {
  using federated::grpcwire::BlockPlace;
  using federated::grpcwire::BlockScope;
  const pb::Welcome w = sample_welcome(pki);
  const BlockScope scope = federated::grpcwire::scope_of(w);
  const std::vector<std::string> certs = {cert(0), cert(1), cert(2)};
  const federated::grpcwire::BlockVerifier verifier(certs);
  const federated::grpcwire::BlockSigner signer(key(2));
  const BlockPlace place{2, 5, pb::ALLGATHER, "agreement"};
  const std::string block = "a hello block";
  const std::string sig = signer.sign(scope, place, block);
  EXPECT_TRUE(verifier.verifies(scope, place, block, sig));
  EXPECT_FALSE(verifier.verifies(scope, {1, 5, pb::ALLGATHER, "agreement"}, block, sig)) << "passed off as rank 1's";
  EXPECT_FALSE(verifier.verifies(scope, {2, 6, pb::ALLGATHER, "agreement"}, block, sig)) << "replayed into #6";
  EXPECT_FALSE(verifier.verifies(scope, {2, 5, pb::BROADCAST, "agreement"}, block, sig)) << "another operation";
  EXPECT_FALSE(verifier.verifies(scope, {2, 5, pb::ALLGATHER, "report"}, block, sig)) << "another purpose";
  EXPECT_FALSE(verifier.verifies(scope, place, "a hello blocK", sig)) << "altered";
  EXPECT_FALSE(verifier.verifies(scope, {7, 5, pb::ALLGATHER, "agreement"}, block, sig)) << "no such rank";
  BlockScope other = scope;
  other.federation_id[0] ^= 1;
  EXPECT_FALSE(verifier.verifies(other, place, block, sig)) << "another federation";
  other = scope;
  other.transcript[0] ^= 1;
  EXPECT_FALSE(verifier.verifies(other, place, block, sig)) << "another view of the federation";
}

// Fields this build does not know are found anywhere in a message (a party refuses such a
// Welcome), and a message of the protocol parses back.
TEST_F(FederatedTranscript, UnknownFieldsAreFoundAtAnyDepth) {
  const pb::Welcome w = sample_welcome(pki);
  EXPECT_FALSE(federated::grpcwire::has_unknown_fields(w));
  pb::Welcome top = w;
  top.GetReflection()->MutableUnknownFields(&top)->AddLengthDelimited(99, "x");
  EXPECT_TRUE(federated::grpcwire::has_unknown_fields(top));
  pb::CoordinatorMessage deep;
  *deep.mutable_welcome() = w;
  pb::Setting* setting = deep.mutable_welcome()->mutable_settings()->mutable_values(0);
  setting->GetReflection()->MutableUnknownFields(setting)->AddVarint(7, 1);
  const auto parsed = federated::grpcwire::parse_coordinator_message(deep.SerializeAsString());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_TRUE(federated::grpcwire::has_unknown_fields(*parsed));
  // Nested deeper than the parser allows: refused, not a crash.
  // 100,000 groups of an unknown field 15 (start-group tag 0x7b, end-group 0x7c) nested.
  const std::string nested = std::string(100000, '\x7b') + std::string(100000, '\x7c');
  EXPECT_FALSE(federated::grpcwire::parse_coordinator_message(nested).has_value());
}

TEST_F(FederatedTranscript, RankIsIgnoredAndEqualContentGivesEqualDigests) {
  pb::Welcome w = sample_welcome(pki);
  const std::string digest = transcript_digest(w);
  for (int r : {0, 2, 7}) {
    w.set_rank(r);
    EXPECT_EQ(transcript_digest(w), digest) << "rank " << r;
  }
  // Through the wire and back (what a party digests is what it parsed).
  pb::Welcome parsed;
  ASSERT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
  EXPECT_EQ(transcript_digest(parsed), digest);
}

// Sets `field` of `m` to a value other than its current one (a repeated field gets one
// more element), by reflection.
void change(gp::Message& m, const gp::FieldDescriptor* f) {
  const gp::Reflection* r = m.GetReflection();
  using F = gp::FieldDescriptor;
  if (f->is_repeated()) {
    switch (f->cpp_type()) {
      case F::CPPTYPE_STRING: r->AddString(&m, f, "extra"); return;
      case F::CPPTYPE_INT32: r->AddInt32(&m, f, 5); return;
      case F::CPPTYPE_UINT32: r->AddUInt32(&m, f, 5); return;
      case F::CPPTYPE_INT64: r->AddInt64(&m, f, 5); return;
      case F::CPPTYPE_UINT64: r->AddUInt64(&m, f, 5); return;
      case F::CPPTYPE_DOUBLE: r->AddDouble(&m, f, 5); return;
      case F::CPPTYPE_FLOAT: r->AddFloat(&m, f, 5); return;
      case F::CPPTYPE_BOOL: r->AddBool(&m, f, true); return;
      case F::CPPTYPE_ENUM: r->AddEnumValue(&m, f, 1); return;
      case F::CPPTYPE_MESSAGE: r->AddMessage(&m, f); return;
    }
  }
  switch (f->cpp_type()) {
    case F::CPPTYPE_STRING: r->SetString(&m, f, r->GetString(m, f) + "x"); return;
    case F::CPPTYPE_INT32: r->SetInt32(&m, f, r->GetInt32(m, f) + 1); return;
    case F::CPPTYPE_UINT32: r->SetUInt32(&m, f, r->GetUInt32(m, f) + 1); return;
    case F::CPPTYPE_INT64: r->SetInt64(&m, f, r->GetInt64(m, f) + 1); return;
    case F::CPPTYPE_UINT64: r->SetUInt64(&m, f, r->GetUInt64(m, f) + 1); return;
    case F::CPPTYPE_DOUBLE: r->SetDouble(&m, f, r->GetDouble(m, f) + 0.5); return;
    case F::CPPTYPE_FLOAT: r->SetFloat(&m, f, r->GetFloat(m, f) + 0.5f); return;
    case F::CPPTYPE_BOOL: r->SetBool(&m, f, !r->GetBool(m, f)); return;
    case F::CPPTYPE_ENUM: r->SetEnumValue(&m, f, r->GetEnumValue(m, f) + 1); return;
    case F::CPPTYPE_MESSAGE: break;  // handled by the caller (field by field inside)
  }
  ADD_FAILURE() << "cannot change " << f->full_name();
}

TEST_F(FederatedTranscript, AnyFieldChangeBreaksTheSignature) {
  const pb::Welcome base = sample_welcome(pki);  // party 1's view
  const std::string digest = transcript_digest(base);
  const std::string sig = sign_transcript(key(1), base);
  std::size_t checked = 0;
  const auto expect_breaks = [&](const pb::Welcome& changed, const std::string& what) {
    EXPECT_NE(transcript_digest(changed), digest) << what;
    EXPECT_FALSE(transcript_signed_by(cert(1), changed, 1, sig)) << what;
    ++checked;
  };
  const gp::Descriptor* welcome = pb::Welcome::descriptor();
  for (int i = 0; i < welcome->field_count(); ++i) {
    const gp::FieldDescriptor* f = welcome->field(i);
    if (f->name() == "rank") continue;
    if (f->cpp_type() == gp::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated()) {
      // Settings: every field of it, set or not (an unset optional field gets a value).
      const gp::Descriptor* inner = f->message_type();
      for (int j = 0; j < inner->field_count(); ++j) {
        pb::Welcome w = base;
        gp::Message* sub = w.GetReflection()->MutableMessage(&w, f);
        change(*sub, inner->field(j));
        expect_breaks(w, inner->field(j)->full_name());
      }
      // A field this build does not know (one another flynn release added): kept by the
      // parser, so covered too.
      pb::Welcome w = base;
      w.GetReflection()->MutableMessage(&w, f)->GetReflection()
          ->MutableUnknownFields(w.GetReflection()->MutableMessage(&w, f))->AddVarint(999, 1);
      pb::Welcome parsed;
      ASSERT_TRUE(parsed.ParseFromString(w.SerializeAsString()));
      expect_breaks(parsed, "an unknown field of " + f->full_name());
      continue;
    }
    pb::Welcome w = base;
    change(w, f);
    expect_breaks(w, f->full_name());
    if (f->is_repeated() && f->cpp_type() == gp::FieldDescriptor::CPPTYPE_STRING) {
      // One element edited in place (e.g. one party's key substituted).
      pb::Welcome e = base;
      std::string v = e.GetReflection()->GetRepeatedString(e, f, 2);
      v.push_back('x');
      e.GetReflection()->SetRepeatedString(&e, f, 2, v);
      expect_breaks(e, f->full_name() + "[2]");
      // Two elements swapped (the same parties in another order).
      pb::Welcome s = base;
      s.GetReflection()->SwapElements(&s, f, 0, 1);
      expect_breaks(s, f->full_name() + " swapped");
    }
  }
  // Every field of Welcome but rank, every field of Settings, plus the extra variants.
  EXPECT_GE(checked, static_cast<std::size_t>(welcome->field_count() - 1 +
                                              pb::Settings::descriptor()->field_count()));
}

}  // namespace
}  // namespace flynn

#endif  // FLYNN_HAVE_GRPC
