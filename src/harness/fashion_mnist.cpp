#include "flynn/harness/fashion_mnist.hpp"

#include <filesystem>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

using io::Format;
using io::LoadOptions;
using io::load_dataset;

std::string fashion_mnist_images_path(const std::string& dir, bool test) {
  const std::string stem = test ? "t10k-images-idx3-ubyte" : "train-images-idx3-ubyte";
  for (const char* ext : {".gz", ""}) {
    const std::filesystem::path p = std::filesystem::path(dir) / (stem + ext);
    if (std::filesystem::exists(p)) return p.string();
  }
  throw Error(dir + ": no " + stem + "[.gz] (install Debian's dataset-fashion-mnist, or give "
              "the folder that holds the Fashion-MNIST IDX files)");
}

Dataset load_fashion_mnist(const std::string& dir, bool test) {
  LoadOptions load;
  load.format = Format::Idx;
  return load_dataset(fashion_mnist_images_path(dir, test), load);
}

HyperParams fashion_mnist_paper_params() {
  HyperParams paper;
  paper.expansion_factor = 138;
  paper.connection_sparsity = 0.105;
  paper.wta_nnz = 8;
  paper.gamma = 0.8;
  paper.variant = Variant{};  // the paper's method, whatever the defaults
  return paper;
}

}  // namespace flynn::harness
