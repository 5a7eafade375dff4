#pragma once
// The checks that protect an honest party from a lying coordinator, each with a switch
// (internal). Every switch is on in the product: nothing in flynn turns one off, and no
// flag, file or environment variable reaches them. They exist for the tests' controls —
// a test turns one check off in its own process (Off below), runs the attack the check
// guards against with in-process parties, and asserts that the attack then succeeds, so
// the test of the check has power (tests/federated_malicious_coordinator_test.cpp).
#include <cstdint>

namespace flynn::federated {

/// One check of a gRPC party (docs/guide/federated.md, "Threat model").
enum class SafetyCheck : std::uint8_t {
  /// Every block relayed from another party (all-gathers, broadcasts: hellos, statuses,
  /// reports with the model digest) must carry that party's signature over the
  /// collective; a block that does not verify stops the party.
  BlockSignatures,
  /// Secure-aggregation pads bound to the federation, the agreed configuration's digest,
  /// the collective's sequence number, operation, word width, length and purpose (off:
  /// the pads of a party's k-th sum depend on k alone, as before protocol 3).
  MaskBinding,
  /// Connecting (TCP and the TLS handshake) and shutting the stream down (Finish) under
  /// the deadline: a party that gives up cancels its call first (off: gRPC's own connection
  /// attempt decides, and Finish waits for the coordinator).
  BoundedShutdown,
  /// The model file is committed only after every party signed the same model digest and
  /// the coordinator said Done (off: written as soon as the models compared equal).
  CommitAfterDone,
  /// Text relayed from another process (reasons, names) escaped and bounded.
  InertText,
  /// Messages from the coordinator bounded by what the configuration implies, Welcomes
  /// without unknown fields.
  MessageBounds,
  /// The other parties' certificates in the Welcome checked against --crl.
  PeerRevocation,
};

/// Whether `check` is on (always, unless a test turned it off).
bool safety_check_on(SafetyCheck check);

/// Turns `check` off for this object's lifetime (tests only; not thread-safe against
/// another Off of the same check).
class SafetyCheckOff {
 public:
  explicit SafetyCheckOff(SafetyCheck check);
  ~SafetyCheckOff();
  SafetyCheckOff(const SafetyCheckOff&) = delete;
  SafetyCheckOff& operator=(const SafetyCheckOff&) = delete;

 private:
  SafetyCheck check_;
};

}  // namespace flynn::federated
