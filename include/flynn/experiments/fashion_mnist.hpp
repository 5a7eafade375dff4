#pragma once
// The Fashion-MNIST benchmark data the demo, bench and studies use.
#include <string>

#include "flynn/dataset.hpp"

namespace flynn::experiments {

/// Debian's dataset-fashion-mnist installs the files here.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Fashion-MNIST's training (`test` = false) or test set from `dir` (Debian's
/// dataset-fashion-mnist installs /usr/share/datasets/fashion-mnist): the IDX images file,
/// plain or .gz, with its labels file beside it. Throws flynn::Error naming what is missing.
Dataset load_fashion_mnist(const std::string& dir, bool test);

}  // namespace flynn::experiments
