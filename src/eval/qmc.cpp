#include "flynn/eval/qmc.hpp"

#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/random.hpp"

namespace flynn::eval {

std::vector<std::uint32_t> halton_bases(std::size_t dims) {
  static constexpr std::uint32_t kPrimes[16] = {2, 3, 5, 7, 11, 13, 17, 19,
                                                23, 29, 31, 37, 41, 43, 47, 53};
  if (dims == 0 || dims > 16) throw Error(fmt::format("Halton design: {} dimensions (1–16 supported)", dims));
  return std::vector<std::uint32_t>(kPrimes, kPrimes + dims);
}

ScrambledHalton::ScrambledHalton(std::size_t dims, std::uint64_t seed) : bases_(halton_bases(dims)) {
  for (std::size_t j = 0; j < dims; ++j) {
    const std::uint32_t p = bases_[j];
    // Enough digits that the last one weighs less than 2^-40.
    const auto depth = static_cast<std::uint32_t>(std::ceil(40.0 * std::log(2.0) / std::log(p)));
    depth_.push_back(depth);
    SeededRng rng = SeededRng::keyed(seed, RngStream::Search, 1000 + j);
    std::vector<std::vector<std::uint32_t>> perms(depth, std::vector<std::uint32_t>(p));
    for (auto& perm : perms) {
      std::iota(perm.begin(), perm.end(), 0u);
      flynn::shuffle(perm, rng);
    }
    perm_.push_back(std::move(perms));
  }
}

std::vector<double> ScrambledHalton::point(std::uint64_t index) const {
  std::vector<double> out(bases_.size());
  for (std::size_t j = 0; j < bases_.size(); ++j) {
    const std::uint32_t p = bases_[j];
    std::uint64_t i = index;
    double scale = 1.0 / p, v = 0.0;
    for (std::uint32_t k = 0; k < depth_[j]; ++k) {
      const std::uint32_t digit = static_cast<std::uint32_t>(i % p);
      i /= p;
      v += perm_[j][k][digit] * scale;
      scale /= p;
    }
    out[j] = v < 1.0 ? v : std::nextafter(1.0, 0.0);
  }
  return out;
}

}  // namespace flynn::eval
