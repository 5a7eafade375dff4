#pragma once
// Which SIMD code runs on this machine, and a way to choose it. The FlyHash kernels are
// compiled for every SIMD target Google Highway supports on the architecture (x86: SSSE3,
// SSE4, AVX2, AVX-512 and AVX-512 with VBMI; Arm: NEON, SVE, SVE2) and dispatch at run time
// to the best one the CPU runs. kernel_report() says which that is and which kernels are in
// use; pin_target (or the environment variable FLYNN_SIMD_TARGET) makes the process run as
// on a CPU without the better targets, e.g. to measure the AVX2 paths on an AVX-512 machine.
// Every target gives the same winners.
#include <cstddef>
#include <string>

namespace flynn::simd {

/// The environment variable that pins the SIMD target of a whole process, read once before
/// the first FlyHash kernel runs: e.g. FLYNN_SIMD_TARGET=avx2. Its value is as pin_target's
/// `name`; one that is no target this CPU runs makes the first FlyHasher constructed (and
/// kernel_report) throw flynn::Error naming the variable.
inline constexpr const char* kTargetVariable = "FLYNN_SIMD_TARGET";

/// Pins the SIMD target to `name`, one of Highway's target names in any case ("avx2",
/// "avx3", "avx3_dl", "sse4", "ssse3", "emu128", "scalar"; on Arm "neon", "sve", "sve2",
/// …): every kernel dispatches as if no better target existed. An empty name unpins.
/// Throws flynn::Error, changing nothing, when `name` is no target of this build's
/// architecture or this CPU cannot run it. It overrides kTargetVariable's pin.
void pin_target(const std::string& name);

/// The target pin_target (or kTargetVariable) pinned, as Highway names it; "" when none.
std::string pinned_target();

/// Which FlyHash kernels run on this machine, at the target the dispatch chose (after any
/// pin).
struct KernelReport {
  std::string target;          ///< Highway's name of the target the kernels run (e.g. "AVX2")
  std::string pinned;          ///< pinned_target(): "" unless a pin disabled better targets
  std::string cpu_targets;     ///< the targets this build has that this CPU runs, best first
  std::size_t block_rows = 0;  ///< rows per block of the block kernels, for byte rows
  bool one_row = false;        ///< whether a one-row kernel runs (else a lone row costs a block)
  std::string one_row_kernel;  ///< which one, in words, or "none"
};

/// The report for this machine now.
KernelReport kernel_report();

/// The report as lines "SIMD target: …", "CPU targets (this build): …", "block kernels:
/// …" and "one-row kernel: …", each ending in a newline.
std::string kernel_report_text(const KernelReport& report);

}  // namespace flynn::simd
