#pragma once
// The Fashion-MNIST benchmark data the demo, bench and studies use.
#include <string>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// Debian's dataset-fashion-mnist installs the files here.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Fashion-MNIST's training (`test` = false) or test set from `dir` (Debian's
/// dataset-fashion-mnist installs /usr/share/datasets/fashion-mnist): the IDX images file,
/// plain or .gz, with its labels file beside it. Throws flynn::Error naming what is missing.
Dataset load_fashion_mnist(const std::string& dir, bool test);

/// The IDX images file load_fashion_mnist reads (train-images-idx3-ubyte[.gz] or the t10k
/// one); throws flynn::Error as it does when there is none.
std::string fashion_mnist_images_path(const std::string& dir, bool test);

/// The paper's Fashion-MNIST setting (Table 5, as the reference's ratios): expansion factor
/// 138, connection sparsity 0.105, wta_nnz 8, γ = 0.8.
HyperParams fashion_mnist_paper_params();

}  // namespace flynn::harness
