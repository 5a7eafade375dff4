#pragma once
// The MPI backend of the federated communicator: one party per rank of MPI_COMM_WORLD.
//
// Only available when flynn was built with MPI (FLYNN_HAVE_MPI is 1 in flynn/build_config.hpp; the code
// lives in src/federated/mpi_communicator.cpp, the only file that includes <mpi.h>, and is
// linked as flynn::federated_mpi). launched_by_mpi_launcher is flynn::federated's. Everything else in flynn stays MPI-free; callers guard uses with #if FLYNN_HAVE_MPI.
//
// Transport details: broadcast sends the length first (MPI_UINT64_T), then the bytes;
// allreduce uses MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) on MPI_UINT32_T / MPI_UINT64_T in
// chunks of at most 2^30 elements (MPI counts are int); allgather exchanges lengths with
// MPI_Allgather and the bytes with MPI_Allgatherv. Byte accounting is the logical one of
// communicator.hpp, identical to the thread backend.
#include <functional>
#include <memory>
#include <string>

#include "flynn/build_config.hpp"
#include "flynn/federated/communicator.hpp"

namespace flynn::federated {

/// Whether this process looks like it was started by an MPI launcher (mpirun/mpiexec of
/// Open MPI, MPICH/Hydra, Intel MPI, or srun with PMI/PMIx): one of OMPI_COMM_WORLD_SIZE,
/// PMI_SIZE, PMI_RANK, PMIX_RANK, MPI_LOCALNRANKS is set. Available in every build, so
/// that a build without MPI can refuse to run as one of several ranks.
bool launched_by_mpi_launcher();

#if FLYNN_HAVE_MPI

/// Initialises MPI (MPI_Init_thread, MPI_THREAD_FUNNELED: only the calling thread talks to
/// MPI, worker threads only hash) for the lifetime of the object and finalises it at the
/// end. At most one per process.
class MpiRuntime {
 public:
  MpiRuntime();
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  /// A communicator over MPI_COMM_WORLD (a duplicate, so flynn's messages never mix with
  /// other MPI users').
  std::unique_ptr<Communicator> world();

  /// Terminates every rank (MPI_Abort): the last resort when this rank fails in a way the
  /// protocol could not report to the others, so that they do not wait forever.
  [[noreturn]] static void abort_all(int code);

  /// "Open MPI v4.1.4, …": the library's version string.
  static std::string library_version();
};

/// Runs `party` on MPI_COMM_WORLD in an MpiRuntime: what `flynn federated train` does on
/// every rank. A FederationError (every rank raised the same one at the same point of the
/// protocol) is printed by each rank on stderr with its local detail; the ranks then meet
/// once more before MPI_Finalize, because mpirun kills the remaining ranks as soon as one
/// exits non-zero, which would otherwise cut some messages; returns false. Any other
/// failure with more than one rank could not be shared by the protocol: it is printed and
/// every rank aborted rather than left waiting in a collective (alone: rethrown).
bool run_on_mpi_world(const std::function<void(Communicator&)>& party);

#endif  // FLYNN_HAVE_MPI

}  // namespace flynn::federated
