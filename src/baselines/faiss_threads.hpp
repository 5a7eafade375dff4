#pragma once
// Internal to flynn::baselines: how many threads FAISS computes with.
namespace flynn::baselines::detail {

/// Bounds FAISS's OpenMP threads and the threads its BLAS may run of its own (OpenBLAS's
/// pthread build) to `threads` (> 0), or a "1-thread" search would use every core.
void set_faiss_threads(int threads);

}  // namespace flynn::baselines::detail
