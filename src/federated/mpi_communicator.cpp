// The only translation unit that includes <mpi.h>; compiled only when CMake finds MPI.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/mpi.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/party_files.hpp"

namespace flynn::federated {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 30;  // MPI counts are int

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(fmt::format("MPI {} failed: {}", what, std::string(text, len)));
}

class MpiParty final : public Communicator {
 public:
  MpiParty() {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "Comm_dup");
    // Errors are returned, not fatal, so that they become flynn::Error messages.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(comm_, &rank_), "Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "Comm_size");
  }
  ~MpiParty() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend() const override { return "mpi"; }

 protected:
  void do_broadcast(std::string& bytes, int root) override {
    std::uint64_t n = bytes.size();
    check(MPI_Bcast(&n, 1, MPI_UINT64_T, root, comm_), "Bcast");
    if (rank_ != root) bytes.resize(n);
    for (std::size_t pos = 0; pos < n; pos += kChunk) {
      const int count = static_cast<int>(std::min<std::size_t>(kChunk, n - pos));
      check(MPI_Bcast(bytes.data() + pos, count, MPI_BYTE, root, comm_), "Bcast");
    }
  }

  void do_allreduce(std::span<std::uint32_t> values) override {
    allreduce(values.data(), values.size(), MPI_UINT32_T);
  }
  void do_allreduce(std::span<std::uint64_t> values) override {
    allreduce(values.data(), values.size(), MPI_UINT64_T);
  }

  std::vector<std::string> do_allgather(std::string_view mine) override {
    if (mine.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw Error("allgather: a block of more than 2 GiB");
    const int len = static_cast<int>(mine.size());
    std::vector<int> lens(size_);
    check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_), "Allgather");
    std::vector<int> displs(size_);
    long long total = 0;
    for (int p = 0; p < size_; ++p) {
      if (total > std::numeric_limits<int>::max())
        throw Error("allgather: more than 2 GiB in total");
      displs[p] = static_cast<int>(total);
      total += lens[p];
    }
    if (total > std::numeric_limits<int>::max()) throw Error("allgather: more than 2 GiB in total");
    std::string buffer(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(mine.data(), len, MPI_BYTE, buffer.data(), lens.data(), displs.data(),
                         MPI_BYTE, comm_),
          "Allgatherv");
    std::vector<std::string> all(size_);
    for (int p = 0; p < size_; ++p) all[p] = buffer.substr(displs[p], lens[p]);
    return all;
  }

 private:
  // The length is agreed first so that a mismatch becomes an error on every rank instead
  // of undefined behaviour inside MPI.
  void allreduce(void* data, std::size_t n, MPI_Datatype type) {
    std::uint64_t lengths[2] = {n, ~static_cast<std::uint64_t>(n)};
    check(MPI_Allreduce(MPI_IN_PLACE, lengths, 2, MPI_UINT64_T, MPI_MAX, comm_), "Allreduce");
    if (lengths[0] != n || ~lengths[1] != n)
      throw Error("allreduce: parties contribute vectors of different lengths");
    int size_of = 0;
    MPI_Type_size(type, &size_of);
    auto* bytes = static_cast<char*>(data);
    for (std::size_t pos = 0; pos < n; pos += kChunk) {
      const int count = static_cast<int>(std::min<std::size_t>(kChunk, n - pos));
      check(MPI_Allreduce(MPI_IN_PLACE, bytes + pos * size_of, count, type, MPI_SUM, comm_),
            "Allreduce");
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

MpiRuntime::MpiRuntime() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) throw Error("MPI is already initialised in this process");
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "Init_thread");
}

MpiRuntime::~MpiRuntime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::unique_ptr<Communicator> MpiRuntime::world() { return std::make_unique<MpiParty>(); }

void MpiRuntime::abort_all(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

std::string MpiRuntime::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string v(text, len);
  const auto comma = v.find(',');
  return comma == std::string::npos ? v : v.substr(0, comma);
}

bool run_on_mpi_world(const std::function<void(Communicator&)>& party) {
  bool failed = false;
  {
    MpiRuntime runtime;
    std::unique_ptr<Communicator> comm = runtime.world();
    try {
      party(*comm);
    } catch (const FederationError& e) {
      const std::string detail = local_detail_line(e, fmt::format("flynn: rank {}", comm->rank()));
      if (!detail.empty()) std::fprintf(stderr, "%s\n", detail.c_str());
      std::fprintf(stderr, "flynn: error: rank %d: %s\n", comm->rank(), e.what());
      std::fflush(stderr);
      failed = true;
      try {
        comm->allgather("");
      } catch (const std::exception&) {
      }
    } catch (const std::exception& e) {
      if (comm->size() > 1) {
        std::fprintf(stderr, "flynn: error: rank %d: %s (aborting every rank)\n", comm->rank(), e.what());
        std::fflush(stderr);
        MpiRuntime::abort_all(1);
      }
      throw;
    }
  }  // MPI_Finalize
  return !failed;
}

}  // namespace flynn::federated
