#pragma once
// The library's side of flynn/simd.hpp: what the runtime SIMD dispatch chose, the pin
// from the environment, and the lane types of the FlyHash kernels.
#include <cstddef>
#include <cstdint>
#include <string>

#include "flynn/simd.hpp"

namespace flynn::detail::simd {

/// Applies simd::kTargetVariable (when set and not empty) the first time it is called;
/// every call throws the same flynn::Error when its value is not a target this CPU runs.
/// The FlyHash kernels' entry points call it, so a pinned process never runs another target.
void pin_target_from_environment();

/// hwy::SupportedTargets() (the targets this CPU runs, less any pin), leaving the dispatch
/// as the pin set it: Highway 1.0's own call also re-chooses the dispatch target from every
/// target the CPU has, which would undo a pin until the next DisableTargets.
std::int64_t supported_targets();

/// The Highway target the kernels run on (e.g. "AVX3", "AVX2", "NEON").
std::string target_name();

/// Lane types of the FlyHash kernels: int16 sums of bytes widened on load (pixels),
/// int16, float.
enum class Lane { Uint8ToInt16, Int16, Float32 };

}  // namespace flynn::detail::simd
