#pragma once
// The transcript of a gRPC federation: what the coordinator told one party, signed by that
// party and checked by every other (internal to the gRPC backend; docs/guide/federated.md,
// "Party policy and the signed transcript").
//
// Why: the coordinator writes each party its own Welcome. A lying coordinator can tell
// party A one party list, key set, τ, secure-aggregation flag or DP setting and party B
// another, so that each party's own checks pass while the federation as a whole is not the
// one any party agreed to (e.g. every party alone, or two different federations sharing a
// party). Each party therefore signs the digest of its Welcome with its TLS certificate's
// key, the parties exchange these signatures in the very first collective (an all-gather
// the coordinator relays like any other), and each checks every other party's signature
// against its OWN digest with that party's certificate from the Welcome (whose chain and
// CN it has checked). Equal signatures-over-its-own-digest from everyone means everyone was
// told the same thing; one mismatch stops the party before anything is masked or sent.
//
// What is covered: the Welcome with its `rank` field cleared (the only field that differs
// between honest Welcomes): session id, τ, names, X25519 keys, certificates, key
// signatures, secure aggregation, deadline, wants_model and the whole Settings message.
// The digest hashes protobuf's deterministic serialisation of that copy, so a field added
// to Settings (or Welcome) later is covered without touching this file; fields unknown to
// this build are kept by the parser and serialised too, so they are covered as well.
//
// Session binding: the Join-time key binding (key_binding.hpp) is signed before the
// coordinator picks the session id. The transcript signature is the session-bound one:
// it covers the session id and every party's fresh X25519 key, the signer's own included
// (each party checks its own entry in the Welcome first), so a binding or transcript
// signature replayed from an earlier session does not verify against this session's
// digest — each party's freshly drawn key serves as its nonce, whatever session id the
// coordinator chose.
#include <string>
#include <string_view>

#include "grpc_wire.hpp"

namespace flynn::federated::grpcwire {

/// Domain tag hashed in front of the serialised Welcome: a transcript digest is never
/// the hash of anything else, and a transcript signature (of 32 bytes) never a key
/// binding (of ≥ 63 bytes starting with another tag).
inline constexpr std::string_view kTranscriptTag = "flynn federated transcript v1";

/// SHA-256 of kTranscriptTag, a NUL, and the deterministic serialisation of `welcome`
/// with its rank cleared (32 bytes).
std::string transcript_digest(const pb::Welcome& welcome);

/// This party's signature of `digest` with its TLS private key (PEM). Throws flynn::Error
/// when the key cannot be read.
std::string sign_transcript(const std::string& private_key_pem, std::string_view digest);

/// Whether `signature` is the signature of `digest` by the key of `certificate_pem`'s
/// first certificate. The caller has checked that certificate (CA, CN) already. Throws
/// flynn::Error when the certificate is unreadable.
bool transcript_signed_by(const std::string& certificate_pem, std::string_view digest,
                          std::string_view signature);

}  // namespace flynn::federated::grpcwire
