#pragma once
// The communicator of a federation: the few collective operations FlyNNFL needs, over
// any transport, with byte accounting.
//
// Backends:
//   * ThreadColony (this header): τ parties as threads of one process — tests, `flynn
//     federated simulate`, the privacy and scaling studies.
//   * MPI (flynn/federated/mpi.hpp, when built with MPI): one party per MPI rank —
//     `mpirun -np τ flynn federated train`, on one machine or a cluster.
//   * gRPC (flynn/federated/grpc.hpp, when built with gRPC): separately started parties
//     (`flynn federated join`) and a coordinator that is not a party (`flynn federated
//     serve`), over mutual TLS, with secure aggregation and every relayed block signed by
//     its sender (the coordinator is not trusted).
// Both run the same protocol code (flynn/federated/party.hpp); only the transport differs,
// and the parity tests run on both.
//
// Collective semantics (every party of the federation must make the same calls in the
// same order; a party that fails must still take part, reporting its failure through the
// data — see party.hpp — rather than leaving the others waiting):
//   * broadcast(bytes, root): afterwards every party's `bytes` equals root's.
//   * allreduce_sum(values): element-wise sum over all parties, in place; all parties must
//     pass the same length. Sums wrap modulo 2^32 (2^64), like MPI_SUM on unsigned types:
//     callers rule out overflow beforehand (FlyNNFL checks the row totals during the
//     agreement step, and a count can never exceed its class's rows).
//   * allgather(mine): every party receives every party's bytes, indexed by rank (its own
//     included); lengths may differ.
// Every collective names its purpose ("agreement", "row totals", "counts", "report", …:
// the same on every party). The gRPC backend binds each relayed block's signature and each
// sum's masks to it, so that a coordinator cannot pass one collective off as another;
// threads and MPI ignore it.
//
// Byte accounting (Traffic) is the collective's logical payload per party, as with the
// a central aggregator that makes and broadcasts the seed, sums the counts and broadcasts
// the result, the aggregator itself not counted:
//   * broadcast of n bytes: the root sends n, every other party receives n;
//   * allreduce of n bytes: every party sends n and receives n;
//   * allgather: a party sends its own block and receives every other party's blocks.
// So a non-DP federation moves τ·m·L·4 bytes up (Lemma 5's O(m·L·τ)) and a DP one
// τ·T·8 (O(T·τ)). The accounting is identical on every backend (the parity tests compare
// it); MPI's actual algorithms (trees, rings) move a small constant factor more on the
// wire.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flynn::federated {

/// Bytes one party sent and received, by the accounting rule in the header comment.
struct Traffic {
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t collectives = 0;  ///< number of collective calls
  Traffic& operator+=(const Traffic& o) {
    bytes_sent += o.bytes_sent;
    bytes_received += o.bytes_received;
    collectives += o.collectives;
    return *this;
  }
  Traffic operator-(const Traffic& o) const {
    return {bytes_sent - o.bytes_sent, bytes_received - o.bytes_received,
            collectives - o.collectives};
  }
  bool operator==(const Traffic&) const = default;
};

/// One all-reduce that an agreed configuration implies: what it sums and its shape.
struct SumShape {
  std::string purpose;         ///< as passed to allreduce_sum
  std::size_t word_bytes = 0;  ///< 4 or 8
  std::size_t values = 0;      ///< words summed
  bool operator==(const SumShape&) const = default;
};

/// One party's endpoint. Not thread-safe: one thread per party uses it.
class Communicator {
 public:
  virtual ~Communicator() = default;

  /// This party's index in [0, size()).
  virtual int rank() const = 0;
  /// Number of parties τ.
  virtual int size() const = 0;
  /// "threads", "mpi", "grpc", …
  virtual std::string backend() const = 0;
  /// Whether this backend's all-reduce hides each party's contribution from whoever
  /// relays it (secure aggregation, grpc.hpp). The party protocol then sums everything
  /// private through all-reduces — row totals and DP releases included — and withholds
  /// per-party row counts from its reports. The same on every party of a federation.
  virtual bool secure_aggregation() const { return false; }
  /// A hint: the all-reduce that follows `collectives_before` other collectives will sum
  /// `values` words of `word_bytes` (4 or 8) bytes for `purpose`. The party protocol gives
  /// it before local training, so that a backend can prepare meanwhile (the gRPC backend
  /// precomputes its secure-aggregation masks). Collectives behave the same with or
  /// without it, and with a wrong hint.
  virtual void expect_allreduce(std::size_t /*values*/, std::size_t /*word_bytes*/,
                                std::string_view /*purpose*/, int /*collectives_before*/) {}
  /// Called by the party protocol once this party has checked that every party's
  /// fingerprint equals its own, before any sum: `configuration_digest` is the SHA-256 of
  /// the agreed fingerprint and seed, `sums` every all-reduce the configuration implies.
  /// The gRPC backend binds its masks to the digest, refuses any sum before this call and
  /// any sum not in `sums` after it, and bounds what it accepts from the coordinator by
  /// them. Threads and MPI need nothing.
  virtual void on_agreement(std::string_view /*configuration_digest*/, const std::vector<SumShape>& /*sums*/) {}

  /// See the header comment. Throw flynn::Error when the transport fails (or, for
  /// threads, when the colony was aborted).
  void broadcast(std::string& bytes, int root, std::string_view purpose = {});
  void allreduce_sum(std::span<std::uint32_t> values, std::string_view purpose = {});
  void allreduce_sum(std::span<std::uint64_t> values, std::string_view purpose = {});
  std::vector<std::string> allgather(std::string_view mine, std::string_view purpose = {});

  /// Bytes this party moved so far.
  const Traffic& traffic() const { return traffic_; }

 protected:
  /// The purpose of the collective in progress (for the do_ functions).
  std::string_view purpose() const { return purpose_; }
  virtual void do_broadcast(std::string& bytes, int root) = 0;
  virtual void do_allreduce(std::span<std::uint32_t> values) = 0;
  virtual void do_allreduce(std::span<std::uint64_t> values) = 0;
  virtual std::vector<std::string> do_allgather(std::string_view mine) = 0;

 private:
  Traffic traffic_;
  std::string purpose_;
};

/// τ parties in one process, one thread each. The colony owns the τ communicators; each
/// party's thread uses party(rank). Collectives are barrier-synchronised; an allreduce is
/// computed as a reduce-scatter (party r sums slice r of every party's vector) followed by
/// a copy, so a party does O(n) work whatever τ is.
class ThreadColony {
 public:
  explicit ThreadColony(int size);
  ~ThreadColony();
  ThreadColony(const ThreadColony&) = delete;
  ThreadColony& operator=(const ThreadColony&) = delete;

  int size() const;
  /// The communicator of party `rank` (owned by the colony).
  Communicator& party(int rank);

  /// Wakes every party blocked in (or later entering) a collective; they throw
  /// flynn::Error("federation aborted: <reason>"). For a party thread that failed outside
  /// the protocol, so that the others do not wait for it forever.
  void abort(const std::string& reason);

  struct Shared;  ///< implementation detail (synchronisation state)

 private:
  std::shared_ptr<Shared> shared_;
  std::vector<std::unique_ptr<Communicator>> parties_;
};

}  // namespace flynn::federated
