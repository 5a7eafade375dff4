#include "flynn/baselines/knn.hpp"

#include <dlfcn.h>

#include <cmath>
#include <fstream>
#include <string>

#include <faiss/IndexFlat.h>
#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/detail/parallel.hpp"
#include "baselines/faiss_threads.hpp"

// FAISS parallelises with OpenMP; its shared library brings libgomp, whose entry point we
// declare here rather than include <omp.h>, so flynn itself needs no OpenMP compiler flag.
extern "C" void omp_set_num_threads(int);

namespace flynn::baselines {

// FAISS runs its own OpenMP threads and calls a BLAS that may run its own (OpenBLAS's
// pthread build does): both are bounded.
void detail::set_faiss_threads(int threads) {
  omp_set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto fn = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    fn(threads);
}

struct ExactKnnIndex::Impl {
  explicit Impl(std::size_t d) : index(static_cast<faiss::Index::idx_t>(d)) {}
  faiss::IndexFlatL2 index;
};

void l2_normalize_rows(const float* in, std::size_t n, std::size_t d, float* out) {
  for (std::size_t r = 0; r < n; ++r) {
    const float* x = in + r * d;
    float* y = out + r * d;
    double ss = 0.0;
    for (std::size_t j = 0; j < d; ++j) ss += static_cast<double>(x[j]) * x[j];
    const double inv = ss > 0.0 ? 1.0 / std::sqrt(ss) : 0.0;
    for (std::size_t j = 0; j < d; ++j) y[j] = static_cast<float>(x[j] * inv);
  }
}


ExactKnnIndex::ExactKnnIndex(const Dataset& train, int threads, KnnScaling scaling)
    : n_rows_(train.n_rows), dim_(train.n_features), threads_(threads), scaling_(scaling) {
  if (train.n_rows == 0) throw Error(fmt::format("{}: no training rows for kNN", train.source));
  if (scaling_ == KnnScaling::Standardize) {
    // Two passes in double: mean, then the population variance around it.
    mean_.assign(dim_, 0.0);
    inv_sd_.assign(dim_, 0.0);
    for (std::size_t r = 0; r < n_rows_; ++r)
      for (std::size_t j = 0; j < dim_; ++j) mean_[j] += train.features[r * dim_ + j];
    for (double& m : mean_) m /= static_cast<double>(n_rows_);
    for (std::size_t r = 0; r < n_rows_; ++r)
      for (std::size_t j = 0; j < dim_; ++j) {
        const double dev = train.features[r * dim_ + j] - mean_[j];
        inv_sd_[j] += dev * dev;
      }
    for (double& v : inv_sd_) {
      const double sd = std::sqrt(v / static_cast<double>(n_rows_));
      v = sd > 0.0 ? 1.0 / sd : 1.0;
    }
  }
  impl_ = std::make_unique<Impl>(dim_);
  std::vector<float> scaled(train.features.size());
  scale_rows(train.features.data(), train.n_rows, scaled.data());
  impl_->index.add(static_cast<faiss::Index::idx_t>(n_rows_), scaled.data());
}

void ExactKnnIndex::scale_rows(const float* in, std::size_t n, float* out) const {
  if (scaling_ == KnnScaling::L2Normalize) {
    l2_normalize_rows(in, n, dim_, out);
    return;
  }
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t j = 0; j < dim_; ++j)
      out[r * dim_ + j] = static_cast<float>((in[r * dim_ + j] - mean_[j]) * inv_sd_[j]);
}

ExactKnnIndex::~ExactKnnIndex() = default;

Neighbours ExactKnnIndex::search(const Dataset& queries, std::uint32_t k) const {
  if (queries.n_features != dim_)
    throw Error(fmt::format("{}: {} features per row, the kNN index has {}", queries.source,
                            queries.n_features, dim_));
  return search(queries.features.data(), queries.n_rows, k);
}

Neighbours ExactKnnIndex::search(const float* rows, std::size_t n, std::uint32_t k) const {
  Neighbours out;
  out.k = static_cast<std::uint32_t>(std::min<std::size_t>(k, n_rows_));
  if (out.k == 0) throw Error("kNN: k must be at least 1");
  out.ids.resize(n * out.k);
  out.distances.resize(n * out.k);
  std::vector<float> normalized(n * dim_);
  scale_rows(rows, n, normalized.data());
  detail::set_faiss_threads(flynn::detail::resolve_threads(threads_));
  // Bounded batches keep FAISS's distance blocks small for large query sets.
  constexpr std::size_t kBatch = 4096;
  for (std::size_t start = 0; start < n; start += kBatch) {
    const std::size_t count = std::min(kBatch, n - start);
    impl_->index.search(static_cast<faiss::Index::idx_t>(count), normalized.data() + start * dim_,
                        out.k, out.distances.data() + start * out.k,
                        out.ids.data() + start * out.k);
  }
  return out;
}

std::vector<std::uint32_t> knn_vote(const Neighbours& nb, std::uint32_t k,
                                    const std::vector<std::uint32_t>& train_labels,
                                    std::size_t n_classes) {
  if (k == 0 || k > nb.k) throw Error(fmt::format("kNN vote: k = {} outside [1, {}]", k, nb.k));
  const std::size_t n = nb.ids.size() / nb.k;
  std::vector<std::uint32_t> out(n);
  std::vector<std::uint32_t> votes(n_classes);
  for (std::size_t q = 0; q < n; ++q) {
    std::fill(votes.begin(), votes.end(), 0);
    const std::int64_t* ids = nb.ids.data() + q * nb.k;
    std::uint32_t best_votes = 0, best = 0;
    for (std::uint32_t j = 0; j < k; ++j) {
      if (ids[j] < 0) continue;
      ++votes[train_labels[static_cast<std::size_t>(ids[j])]];
    }
    // Walking neighbours nearest-first, the first class reaching the top count wins ties.
    for (std::uint32_t j = 0; j < k; ++j) {
      if (ids[j] < 0) continue;
      const std::uint32_t c = train_labels[static_cast<std::size_t>(ids[j])];
      if (votes[c] > best_votes) {
        best_votes = votes[c];
        best = c;
      }
    }
    out[q] = best;
  }
  return out;
}

std::vector<double> knn_vote_fractions(const Neighbours& nb, std::uint32_t k,
                                       const std::vector<std::uint32_t>& train_labels, std::size_t L) {
  if (k == 0 || k > nb.k) throw Error(fmt::format("kNN vote fractions: k = {} outside [1, {}]", k, nb.k));
  const std::size_t n = nb.ids.size() / nb.k;
  std::vector<double> out(n * L, 0.0);
  for (std::size_t q = 0; q < n; ++q) {
    const std::int64_t* ids = nb.ids.data() + q * nb.k;
    double* p = out.data() + q * L;
    std::uint32_t seen = 0;
    for (std::uint32_t j = 0; j < k; ++j) {
      if (ids[j] < 0) continue;
      p[train_labels[static_cast<std::size_t>(ids[j])]] += 1.0;
      ++seen;
    }
    for (std::size_t l = 0; l < L; ++l) p[l] = seen ? p[l] / seen : 1.0 / static_cast<double>(L);
  }
  return out;
}

std::string blas_description() {
  std::ifstream maps("/proc/self/maps");
  std::string line, lib;
  while (std::getline(maps, line)) {
    const auto slash = line.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string name = line.substr(slash + 1);
    if (name.find("openblas") != std::string::npos || name.find("libblas") != std::string::npos ||
        name.find("mkl") != std::string::npos || name.find("blis") != std::string::npos) {
      lib = line.substr(line.find('/'));
      if (name.find("openblas") != std::string::npos) break;
    }
  }
  if (lib.empty()) return "unknown BLAS";
  // OpenBLAS reports its kernel family through openblas_get_corename().
  using CoreName = char* (*)();
  if (auto fn = reinterpret_cast<CoreName>(::dlsym(RTLD_DEFAULT, "openblas_get_corename")))
    return fmt::format("{} (OpenBLAS core {})", lib, fn());
  return lib;
}

}  // namespace flynn::baselines
