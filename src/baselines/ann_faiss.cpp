// FAISS indexes as AnnIndex peers (ann_index.hpp): any factory string, its search breadth
// set through FAISS's own ParameterSpace (nprobe for IVF, efSearch for HNSW).
#include <memory>
#include <stdexcept>
#include <string>

#include <faiss/AutoTune.h>
#include <faiss/Index.h>
#include <faiss/impl/io.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <fmt/format.h>

#include "baselines/faiss_threads.hpp"
#include "flynn/baselines/ann_index.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"

namespace flynn::baselines {

namespace {

// Counts what write_index writes, without keeping it (an index is hundreds of MB).
struct CountingWriter : faiss::IOWriter {
  std::uint64_t bytes = 0;
  std::size_t operator()(const void*, std::size_t size, std::size_t nitems) override {
    bytes += static_cast<std::uint64_t>(size) * nitems;
    return nitems;
  }
};

class FaissIndex final : public AnnIndex {
 public:
  explicit FaissIndex(std::string factory) : factory_(std::move(factory)) {}

  std::string name() const override { return "FAISS " + factory_; }
  std::string breadth_name() const override {
    if (factory_.rfind("IVF", 0) == 0) return "nprobe";
    if (factory_.rfind("HNSW", 0) == 0) return "efSearch";
    return "";
  }

  void build(const float* rows, std::size_t n, std::size_t d, int threads) override {
    detail::set_faiss_threads(flynn::detail::resolve_threads(threads));
    try {
      index_.reset(faiss::index_factory(static_cast<int>(d), factory_.c_str(), faiss::METRIC_L2));
      const auto count = static_cast<faiss::Index::idx_t>(n);
      if (!index_->is_trained) index_->train(count, rows);
      index_->add(count, rows);
    } catch (const std::exception& e) {  // faiss::FaissException, std::bad_alloc
      throw Error(fmt::format("FAISS {}: {}", factory_, e.what()));
    }
    d_ = d;
  }

  void set_breadth(std::uint32_t breadth) override {
    const std::string what = breadth_name();
    if (what.empty() || !index_) return;
    faiss::ParameterSpace().set_index_parameter(index_.get(), what, static_cast<double>(breadth));
  }

  Neighbours search(const float* queries, std::size_t n, std::uint32_t k, int threads) const override {
    if (!index_) throw Error(name() + ": search before build");
    Neighbours out;
    out.k = static_cast<std::uint32_t>(std::min<std::uint64_t>(k, static_cast<std::uint64_t>(index_->ntotal)));
    if (out.k == 0) throw Error(name() + ": k must be at least 1");
    out.ids.resize(n * out.k);
    out.distances.resize(n * out.k);
    detail::set_faiss_threads(flynn::detail::resolve_threads(threads));
    // Bounded batches, as ExactKnnIndex searches: small distance blocks for large query sets.
    constexpr std::size_t kBatch = 4096;
    for (std::size_t start = 0; start < n; start += kBatch) {
      const std::size_t count = std::min(kBatch, n - start);
      index_->search(static_cast<faiss::Index::idx_t>(count), queries + start * d_, out.k,
                     out.distances.data() + start * out.k, out.ids.data() + start * out.k);
    }
    return out;
  }

  std::uint64_t size_bytes() const override {
    if (!index_) return 0;
    CountingWriter writer;
    faiss::write_index(index_.get(), &writer);
    return writer.bytes;
  }

 private:
  std::string factory_;
  std::unique_ptr<faiss::Index> index_;
  std::size_t d_ = 0;
};

}  // namespace

std::unique_ptr<AnnIndex> make_faiss_index(const std::string& factory) {
  if (factory.empty()) throw Error("FAISS index: empty factory string");
  return std::make_unique<FaissIndex>(factory);
}

}  // namespace flynn::baselines
