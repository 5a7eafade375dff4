// The federated communicator: collectives of the thread backend, the byte accounting every
// backend shares, aborting a colony, and the small helpers of the protocol ({rank}
// expansion, fingerprints, splits).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <thread>

#include "flynn/error.hpp"
#include "flynn/federated/communicator.hpp"
#include "flynn/federated/mpi.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/random.hpp"

namespace flynn::federated {
namespace {

// Runs body(comm) on every party of a colony of `n`, one thread each; rethrows the first
// failure.
template <class Body>
void on_colony(ThreadColony& colony, Body body) {
  std::vector<std::exception_ptr> errors(colony.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < colony.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(colony.party(r));
      } catch (...) {
        errors[r] = std::current_exception();
        colony.abort("test party failed");
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

TEST(ThreadColony, CollectivesAndAccounting) {
  for (int n : {1, 2, 3, 5, 16}) {
    ThreadColony colony(n);
    std::vector<Traffic> traffic(n);
    on_colony(colony, [&](Communicator& c) {
      const int r = c.rank();
      EXPECT_EQ(c.size(), n);
      EXPECT_EQ(c.backend(), "threads");
      // broadcast from the last party
      std::string b = r == n - 1 ? std::string("seed and config") : std::string("x");
      c.broadcast(b, n - 1);
      EXPECT_EQ(b, "seed and config");
      // allreduce of uint32 (wrapping like MPI_SUM) and uint64; lengths not a multiple of n
      std::vector<std::uint32_t> v(7);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(r * 10 + i);
      v[6] = 0xFFFFFFFFu;
      c.allreduce_sum(v);
      for (std::size_t i = 0; i < 6; ++i)
        EXPECT_EQ(v[i], static_cast<std::uint32_t>(10 * n * (n - 1) / 2 + n * i));
      EXPECT_EQ(v[6], static_cast<std::uint32_t>(0xFFFFFFFFull * n));
      std::vector<std::uint64_t> w = {std::uint64_t(r) << 40, 1};
      c.allreduce_sum(w);
      EXPECT_EQ(w[0], (std::uint64_t(n) * (n - 1) / 2) << 40);
      EXPECT_EQ(w[1], static_cast<std::uint64_t>(n));
      // allgather of blocks of different lengths (one empty)
      const auto all = c.allgather(std::string(static_cast<std::size_t>(r), char('a' + r)));
      ASSERT_EQ(static_cast<int>(all.size()), n);
      for (int p = 0; p < n; ++p) EXPECT_EQ(all[p], std::string(static_cast<std::size_t>(p), char('a' + p)));
      traffic[r] = c.traffic();
    });
    for (int r = 0; r < n; ++r) {
      // broadcast 15 bytes + allreduce 28 + 16 bytes + own allgather block of r bytes
      const std::uint64_t gathered = static_cast<std::uint64_t>(n) * (n - 1) / 2;
      EXPECT_EQ(traffic[r].bytes_sent, (r == n - 1 ? 15u : 0u) + 28 + 16 + r) << n << " " << r;
      EXPECT_EQ(traffic[r].bytes_received, (r == n - 1 ? 0u : 15u) + 28 + 16 + gathered - r);
      EXPECT_EQ(traffic[r].collectives, 4u);
    }
  }
}

TEST(ThreadColony, LargeAllReduceIsExact) {
  ThreadColony colony(4);
  on_colony(colony, [](Communicator& c) {
    std::vector<std::uint32_t> v(100003);
    std::iota(v.begin(), v.end(), static_cast<std::uint32_t>(c.rank()));
    c.allreduce_sum(v);
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], 4 * i + 6);
  });
}

TEST(ThreadColony, MismatchedLengthsFailEverywhere) {
  ThreadColony colony(3);
  std::vector<int> threw(3, 0);
  std::vector<std::thread> t;
  for (int r = 0; r < 3; ++r)
    t.emplace_back([&, r] {
      std::vector<std::uint32_t> v(r == 1 ? 5 : 4, 1);
      try {
        colony.party(r).allreduce_sum(v);
      } catch (const Error&) {
        threw[r] = 1;
      }
    });
  for (auto& th : t) th.join();
  EXPECT_EQ(threw, (std::vector<int>{1, 1, 1}));
}

TEST(ThreadColony, AbortWakesWaitingParties) {
  ThreadColony colony(3);
  std::vector<std::string> messages(2);
  std::vector<std::thread> t;
  for (int r = 0; r < 2; ++r)
    t.emplace_back([&, r] {
      try {
        colony.party(r).allgather("hello");
      } catch (const Error& e) {
        messages[r] = e.what();
      }
    });
  // Party 2 never arrives: it "crashed".
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  colony.abort("party 2 failed: out of memory");
  for (auto& th : t) th.join();
  for (const auto& m : messages) EXPECT_EQ(m, "federation aborted: party 2 failed: out of memory");
  std::string b;
  EXPECT_THROW(colony.party(2).broadcast(b, 0), Error);
  EXPECT_THROW(ThreadColony(0), Error);
  EXPECT_THROW(colony.party(3), Error);
}

TEST(Federated, ExpandRank) {
  EXPECT_EQ(expand_rank("shard_{rank}.csv", 12), "shard_12.csv");
  EXPECT_EQ(expand_rank("{rank}/{rank}", 3), "3/3");
  EXPECT_EQ(expand_rank("plain.csv", 3), "plain.csv");
}

TEST(Federated, FingerprintCoversTheAgreedFields) {
  FlyConfig c;
  c.input_dim = 10;
  c.m = 100;
  c.s = 3;
  c.rho = 8;
  c.gamma = 0.5;
  c.seed = 1;
  const auto f = fingerprint(c, LabelSet({"a", "b"}), std::nullopt);
  std::vector<std::string> fields;
  for (const auto& [k, v] : f) fields.push_back(k);
  for (const char* want : {"federation protocol", "model format version", "hash version",
                           "label list", "d (input dimension)", "m", "s", "rho", "gamma",
                           "preprocess", "differential privacy"})
    EXPECT_NE(std::find(fields.begin(), fields.end(), want), fields.end()) << want;
  const auto with_dp = fingerprint(c, LabelSet({"a", "b"}), DpParams{1.0, 5, DpExponent::Paper});
  EXPECT_EQ(with_dp.size(), f.size() + 4);  // dp-epsilon, dp-T, dp-exponent, dp-unit
  // gamma is printed exactly, so 0.1 + 0.2 and 0.3 disagree.
  FlyConfig d = c;
  c.gamma = 0.1 + 0.2;
  d.gamma = 0.3;
  EXPECT_NE(fingerprint(c, LabelSet({"a"}), std::nullopt), fingerprint(d, LabelSet({"a"}), std::nullopt));
}

TEST(Federated, LauncherDetection) {
  // The test binary is not run under mpirun.
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE")) GTEST_SKIP();
  EXPECT_FALSE(launched_by_mpi_launcher());
  ::setenv("PMI_SIZE", "4", 1);
  EXPECT_TRUE(launched_by_mpi_launcher());
  ::unsetenv("PMI_SIZE");
}

// ---- splits -------------------------------------------------------------------------------------

std::vector<std::uint32_t> labels_of(std::size_t n, std::size_t classes, std::uint64_t seed) {
  SeededRng rng(seed);
  std::vector<std::uint32_t> l(n);
  for (auto& v : l) v = static_cast<std::uint32_t>(rng.uniform_below(classes));
  return l;
}

void expect_partition(const std::vector<std::vector<std::size_t>>& parts, std::size_t n) {
  std::vector<int> seen(n, 0);
  for (const auto& p : parts) {
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    for (std::size_t r : p) ++seen[r];
  }
  for (std::size_t r = 0; r < n; ++r) ASSERT_EQ(seen[r], 1) << "row " << r;
}

TEST(Split, EveryKindIsAPartitionAndDeterministic) {
  const auto labels = labels_of(503, 4, 9);
  for (const char* spec : {"iid", "by-class", "dirichlet:0.1", "dirichlet:5", "sizes:1,0,3,0.5,2"}) {
    for (int tau : {1, 3, 4, 5, 9}) {
      SplitSpec s = SplitSpec::parse(spec);
      if (s.kind == SplitSpec::Kind::Sizes && tau != 5) continue;
      const auto a = split_rows(labels, 4, tau, s, 42);
      ASSERT_EQ(static_cast<int>(a.size()), tau);
      expect_partition(a, labels.size());
      EXPECT_EQ(a, split_rows(labels, 4, tau, s, 42)) << spec;
      if (tau > 1 && s.kind != SplitSpec::Kind::ByClass) {
        EXPECT_NE(a, split_rows(labels, 4, tau, s, 43)) << spec;
      }
    }
  }
}

TEST(Split, ShapesOfEachKind) {
  const auto labels = labels_of(400, 4, 3);
  // iid: sizes differ by at most one
  const auto iid = split_rows(labels, 4, 7, SplitSpec::parse("iid"), 1);
  std::size_t lo = 1000, hi = 0;
  for (const auto& p : iid) lo = std::min(lo, p.size()), hi = std::max(hi, p.size());
  EXPECT_LE(hi - lo, 1u);
  // by-class, τ = L and τ > L: every party holds a single class
  for (int tau : {4, 10}) {
    for (const auto& p : split_rows(labels, 4, tau, SplitSpec::parse("by-class"), 1)) {
      std::set<std::uint32_t> cls;
      for (std::size_t r : p) cls.insert(labels[r]);
      EXPECT_EQ(cls.size(), 1u) << tau;
    }
  }
  // sizes: zero weights give empty parties, proportions hold
  const auto sized = split_rows(labels, 4, 3, SplitSpec::parse("sizes:0,1,3"), 1);
  EXPECT_TRUE(sized[0].empty());
  EXPECT_EQ(sized[1].size(), 100u);
  EXPECT_EQ(sized[2].size(), 300u);
  // strong Dirichlet skew: some party misses some class
  bool skewed = false;
  for (const auto& p : split_rows(labels, 4, 5, SplitSpec::parse("dirichlet:0.05"), 1)) {
    std::set<std::uint32_t> cls;
    for (std::size_t r : p) cls.insert(labels[r]);
    skewed |= cls.size() < 4;
  }
  EXPECT_TRUE(skewed);
}

TEST(Split, BadSpecsAreClearErrors) {
  for (const char* bad : {"", "random", "dirichlet:", "dirichlet:0", "dirichlet:-1", "dirichlet:x",
                          "sizes:", "sizes:1,-1", "sizes:1,,2"})
    EXPECT_THROW(SplitSpec::parse(bad), Error) << bad;
  const auto labels = labels_of(10, 2, 1);
  EXPECT_THROW(split_rows(labels, 2, 0, SplitSpec::parse("iid"), 1), Error);
  EXPECT_THROW(split_rows(labels, 2, 3, SplitSpec::parse("sizes:1,2"), 1), Error);
  EXPECT_THROW(split_rows(labels, 2, 2, SplitSpec::parse("sizes:0,0"), 1), Error);
  EXPECT_EQ(SplitSpec::parse("dirichlet:0.5").describe(), "dirichlet:0.5");
}

}  // namespace
}  // namespace flynn::federated
