#include "flynn/preprocess.hpp"

#include <cmath>

#include "flynn/error.hpp"
#include "flynn/random.hpp"

namespace flynn {

namespace {

// 1/‖x‖ in double, or 0 for a zero row (which then stays zero).
double inverse_norm(const float* x, std::uint32_t d) {
  double ss = 0.0;
  for (std::uint32_t j = 0; j < d; ++j) ss += static_cast<double>(x[j]) * x[j];
  return ss > 0.0 ? 1.0 / std::sqrt(ss) : 0.0;
}

}  // namespace

void fast_walsh_hadamard(double* v, std::uint32_t n) {
  for (std::uint32_t h = 1; h < n; h <<= 1) {
    for (std::uint32_t i = 0; i < n; i += h << 1) {
      for (std::uint32_t j = i; j < i + h; ++j) {
        const double a = v[j], b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
}

Preprocessor::Preprocessor(Preprocess kind, std::uint32_t input_dim, std::uint64_t seed)
    : kind_(kind), input_dim_(input_dim), output_dim_(input_dim) {
  if (kind == Preprocess::Densify) {
    output_dim_ = 1;
    while (output_dim_ < input_dim) output_dim_ <<= 1;
    signs_.resize(input_dim);
    SeededRng rng = SeededRng::keyed(seed, RngStream::DensifySigns, 0);
    std::uint64_t bits = 0;
    for (std::uint32_t j = 0; j < input_dim; ++j) {
      if (j % 64 == 0) bits = rng.next_u64();
      signs_[j] = ((bits >> (j % 64)) & 1) ? -1 : 1;
    }
  }
}

void Preprocessor::apply(const float* in, float* out) const {
  switch (kind_) {
    case Preprocess::None:
      for (std::uint32_t j = 0; j < input_dim_; ++j) out[j] = in[j];
      return;
    case Preprocess::Normalize: {
      const double inv = inverse_norm(in, input_dim_);
      for (std::uint32_t j = 0; j < input_dim_; ++j)
        out[j] = static_cast<float>(static_cast<double>(in[j]) * inv);
      return;
    }
    case Preprocess::Densify: {
      thread_local std::vector<double> buf;
      buf.assign(output_dim_, 0.0);
      const double inv = inverse_norm(in, input_dim_);
      for (std::uint32_t j = 0; j < input_dim_; ++j)
        buf[j] = static_cast<double>(in[j]) * inv * signs_[j];
      fast_walsh_hadamard(buf.data(), output_dim_);
      const double scale = 1.0 / std::sqrt(static_cast<double>(output_dim_));
      for (std::uint32_t j = 0; j < output_dim_; ++j) out[j] = static_cast<float>(buf[j] * scale);
      return;
    }
  }
  FLYNN_ASSERT(false);
}

}  // namespace flynn
