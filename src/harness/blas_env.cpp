// The BLAS environment of the commands that time FAISS (bench, demo): chosen before the
// process loads OpenBLAS, by re-executing it (prepare_bench, flynn/harness/blas_env.hpp).
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "flynn/harness/blas_env.hpp"
#include "flynn/simd.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// OpenBLAS 0.3.21 picks its kernels when the library loads, and does not recognise recent
// CPUs. The benchmark alone selects this CPU's family through OPENBLAS_CORETYPE, and passive
// OpenMP waiting, both read at load time, so they must be set before the process starts:
// re-exec once. An inherited OPENBLAS_CORETYPE is replaced (with a note) because a wrong
// family silently slows FAISS down and flatters FlyNN (measured on an AVX-512 machine with a
// preset Haswell: 4.6 s instead of 2.6 s); --keep-blas-core keeps the environment as it is.
// With the SIMD target pinned below AVX-512 (--simd, FLYNN_SIMD_TARGET), FAISS's BLAS takes
// the kernels of that width too, so that both sides of a comparison run the same vectors.
void select_openblas_core(char** argv, const std::string& pinned) {
  if (std::getenv("FLYNN_BENCH_REEXEC")) return;
  const char* core = nullptr;
  __builtin_cpu_init();
  const std::string pin = lower(pinned);
  const bool below_avx512 = pin == "avx2" || pin == "sse4" || pin == "ssse3";
  if (!below_avx512 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
    core = "SkylakeX";
  else if (pin != "sse4" && pin != "ssse3" && __builtin_cpu_supports("avx2"))
    core = "Haswell";
  else if (pin == "sse4")
    core = "Nehalem";
  const char* inherited = std::getenv("OPENBLAS_CORETYPE");
  const bool passive_set = std::getenv("OMP_WAIT_POLICY") != nullptr;
  if ((!core || (inherited && std::string(inherited) == core)) && passive_set) return;
  if (core) {
    if (inherited && std::string(inherited) != core)
      fmt::print(stderr, "flynn: OPENBLAS_CORETYPE={} from the environment replaced by {}, this CPU's "
                 "family (--keep-blas-core keeps it)\n", inherited, core);
    ::setenv("OPENBLAS_CORETYPE", core, 1);
  }
  // FAISS's OpenMP threads spin while OpenBLAS's threads compute; on a machine with few
  // cores the spinning steals them (measured: 4.9 s instead of 2.6 s on 2 cores).
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  ::setenv("FLYNN_BENCH_REEXEC", "1", 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: then run with what we have
}

}  // namespace

void prepare_bench(int argc, char** argv) {
  if (argc < 2 || (std::string(argv[1]) != "bench" && std::string(argv[1]) != "demo")) return;
  const char* env = std::getenv(simd::kTargetVariable);
  std::string pinned = env ? env : "";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--keep-blas-core" || a == "--help" || a == "-h") return;
    if (a == "--simd" && i + 1 < argc) pinned = argv[i + 1];
    if (a.rfind("--simd=", 0) == 0) pinned = a.substr(7);
  }
  select_openblas_core(argv, pinned);
}

}  // namespace flynn::harness
