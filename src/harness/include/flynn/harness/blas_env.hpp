#pragma once
#include "flynn/harness/layers.hpp"
// The BLAS environment of the commands that time FAISS against FlyNN (bench, demo).

namespace flynn::harness {

/// Called from main() before anything else: `flynn bench` and `flynn demo`, which time
/// FAISS, re-execute the process with OPENBLAS_CORETYPE (this CPU's family) and passive
/// OpenMP waiting set, both read when OpenBLAS loads, unless --keep-blas-core is given.
/// No-op for other commands.
void prepare_bench(int argc, char** argv);

}  // namespace flynn::harness
