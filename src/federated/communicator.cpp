#include "flynn/federated/communicator.hpp"

#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/mpi.hpp"

namespace flynn::federated {

// ---- accounting, shared by every backend -------------------------------------------

void Communicator::broadcast(std::string& bytes, int root, std::string_view purpose) {
  if (root < 0 || root >= size())
    throw Error(fmt::format("broadcast: root {} is not a party (0..{})", root, size() - 1));
  purpose_ = purpose;
  do_broadcast(bytes, root);
  ++traffic_.collectives;
  (rank() == root ? traffic_.bytes_sent : traffic_.bytes_received) += bytes.size();
}

void Communicator::allreduce_sum(std::span<std::uint32_t> values, std::string_view purpose) {
  purpose_ = purpose;
  do_allreduce(values);
  ++traffic_.collectives;
  traffic_.bytes_sent += values.size_bytes();
  traffic_.bytes_received += values.size_bytes();
}

void Communicator::allreduce_sum(std::span<std::uint64_t> values, std::string_view purpose) {
  purpose_ = purpose;
  do_allreduce(values);
  ++traffic_.collectives;
  traffic_.bytes_sent += values.size_bytes();
  traffic_.bytes_received += values.size_bytes();
}

std::vector<std::string> Communicator::allgather(std::string_view mine, std::string_view purpose) {
  purpose_ = purpose;
  std::vector<std::string> all = do_allgather(mine);
  ++traffic_.collectives;
  traffic_.bytes_sent += mine.size();
  for (std::size_t p = 0; p < all.size(); ++p)
    if (static_cast<int>(p) != rank()) traffic_.bytes_received += all[p].size();
  return all;
}

// ---- threads -------------------------------------------------------------------------

struct ThreadColony::Shared {
  explicit Shared(int n) : size(n), in(n), in_len(n), root_of(n) {}

  const int size;
  std::mutex mutex;
  std::condition_variable cv;
  int arrived = 0;
  std::uint64_t generation = 0;
  bool aborted = false;
  std::string reason;

  // Per-collective slots: each party publishes its input before the first barrier; the
  // others read it between the first and second barrier only.
  std::vector<const void*> in;
  std::vector<std::size_t> in_len;
  std::vector<int> root_of;
  std::vector<std::uint32_t> result32;
  std::vector<std::uint64_t> result64;

  // A reusable barrier that can be broken by abort().
  void barrier() {
    std::unique_lock<std::mutex> lock(mutex);
    if (aborted) throw Error("federation aborted: " + reason);
    const std::uint64_t gen = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return;
    }
    cv.wait(lock, [&] { return generation != gen || aborted; });
    if (generation == gen) throw Error("federation aborted: " + reason);
  }

  void abort(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!aborted) {
      aborted = true;
      reason = why;
    }
    cv.notify_all();
  }

  std::vector<std::uint32_t>& result(std::uint32_t*) { return result32; }
  std::vector<std::uint64_t>& result(std::uint64_t*) { return result64; }
};

namespace {

class ThreadParty final : public Communicator {
 public:
  ThreadParty(std::shared_ptr<ThreadColony::Shared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return shared_->size; }
  std::string backend() const override { return "threads"; }

 protected:
  void do_broadcast(std::string& bytes, int root) override {
    auto& s = *shared_;
    s.root_of[rank_] = root;
    if (rank_ == root) s.in[rank_] = &bytes;
    s.barrier();
    for (int p = 0; p < s.size; ++p)
      if (s.root_of[p] != root)
        throw Error(fmt::format("broadcast: parties disagree on the root ({} vs {})", root,
                                s.root_of[p]));
    if (rank_ != root) bytes = *static_cast<const std::string*>(s.in[root]);
    s.barrier();
  }

  void do_allreduce(std::span<std::uint32_t> values) override { allreduce(values); }
  void do_allreduce(std::span<std::uint64_t> values) override { allreduce(values); }

  std::vector<std::string> do_allgather(std::string_view mine) override {
    auto& s = *shared_;
    s.in[rank_] = mine.data();
    s.in_len[rank_] = mine.size();
    s.barrier();
    std::vector<std::string> all(s.size);
    for (int p = 0; p < s.size; ++p)
      all[p].assign(static_cast<const char*>(s.in[p]), s.in_len[p]);
    s.barrier();
    return all;
  }

 private:
  template <class T>
  void allreduce(std::span<T> values) {
    auto& s = *shared_;
    std::vector<T>& result = s.result(static_cast<T*>(nullptr));
    s.in[rank_] = values.data();
    s.in_len[rank_] = values.size();
    // Party 0 sizes the shared result; nobody reads it before the first barrier, and the
    // previous collective's last barrier guarantees nobody still does.
    if (rank_ == 0) result.assign(values.size(), 0);
    s.barrier();
    for (int p = 0; p < s.size; ++p)
      if (s.in_len[p] != s.in_len[0])
        throw Error(fmt::format("allreduce: party {} contributes {} values, party 0 {}", p,
                                s.in_len[p], s.in_len[0]));
    // Reduce-scatter: this party sums its slice over every party's vector.
    const std::size_t n = values.size();
    const std::size_t lo = n * rank_ / s.size, hi = n * (rank_ + 1) / s.size;
    for (std::size_t i = lo; i < hi; ++i) {
      T sum = 0;
      for (int p = 0; p < s.size; ++p) sum += static_cast<const T*>(s.in[p])[i];
      result[i] = sum;
    }
    s.barrier();
    std::copy(result.begin(), result.end(), values.begin());
    s.barrier();
  }

  std::shared_ptr<ThreadColony::Shared> shared_;
  int rank_;
};

}  // namespace

ThreadColony::ThreadColony(int size) {
  if (size < 1) throw Error(fmt::format("parties = {}: a federation needs at least one", size));
  shared_ = std::make_shared<Shared>(size);
  for (int r = 0; r < size; ++r) parties_.push_back(std::make_unique<ThreadParty>(shared_, r));
}

ThreadColony::~ThreadColony() = default;

int ThreadColony::size() const { return shared_->size; }

Communicator& ThreadColony::party(int rank) {
  if (rank < 0 || rank >= size())
    throw Error(fmt::format("party {} does not exist (0..{})", rank, size() - 1));
  return *parties_[rank];
}

void ThreadColony::abort(const std::string& reason) { shared_->abort(reason); }

bool launched_by_mpi_launcher() {
  for (const char* var :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(var)) return true;
  return false;
}

}  // namespace flynn::federated
