#pragma once
// The paper harness is built on the evaluation layer and the baselines and is not part of
// the installed library: inside flynn::harness their names are used unqualified.

namespace flynn::eval {}
namespace flynn::baselines {}

namespace flynn::harness {
using namespace flynn::eval;       // NOLINT(google-build-using-namespace)
using namespace flynn::baselines;  // NOLINT(google-build-using-namespace)
}  // namespace flynn::harness
