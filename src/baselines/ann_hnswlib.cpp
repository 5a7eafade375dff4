// hnswlib as an AnnIndex peer (ann_index.hpp), when the build has it (FLYNN_HAVE_HNSWLIB).
// hnswlib has no threads of its own: the build adds rows and the search answers queries
// in parallel on flynn's pool, as hnswlib's Python binding does with its own threads.
#include "flynn/baselines/ann_index.hpp"

#include "flynn/build_config.hpp"
#include "flynn/error.hpp"

#if FLYNN_HAVE_HNSWLIB
#include <algorithm>
#include <new>
#include <stdexcept>

#include <fmt/format.h>
#include <hnswlib/hnswlib.h>

#include "baselines/l2_distance.hpp"
#include "flynn/detail/parallel.hpp"
#endif

namespace flynn::baselines {

#if FLYNN_HAVE_HNSWLIB

namespace {

// hnswlib's L2 space with flynn's dispatched distance: hnswlib picks its own SIMD kernels
// when compiled, which a portable build compiles for SSE only.
class DispatchedL2 final : public hnswlib::SpaceInterface<float> {
 public:
  explicit DispatchedL2(std::size_t d) : d_(d) {}
  std::size_t get_data_size() override { return d_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &distance; }
  void* get_dist_func_param() override { return &d_; }

 private:
  static float distance(const void* a, const void* b, const void* d) {
    return detail::l2_squared(static_cast<const float*>(a), static_cast<const float*>(b),
                              *static_cast<const std::size_t*>(d));
  }
  std::size_t d_;
};

// Rows per parallel task: enough to amortise a task's hand-out, few enough to balance.
constexpr std::size_t kTaskRows = 64;

class HnswlibIndex final : public AnnIndex {
 public:
  HnswlibIndex(std::uint32_t m_links, std::uint32_t ef_construction)
      : m_links_(m_links), ef_construction_(ef_construction) {}

  std::string name() const override { return fmt::format("hnswlib M={} efC={}", m_links_, ef_construction_); }
  std::string breadth_name() const override { return "ef"; }

  void build(const float* rows, std::size_t n, std::size_t d, int threads) override {
    if (n == 0) throw Error(name() + ": no rows to index");
    space_ = std::make_unique<DispatchedL2>(d);
    d_ = d;
    try {
      graph_ = std::make_unique<hnswlib::HierarchicalNSW<float>>(space_.get(), n, m_links_, ef_construction_);
      // The first row alone (the entry point), then the rest in parallel.
      graph_->addPoint(rows, 0);
      const std::size_t tasks = (n - 1 + kTaskRows - 1) / kTaskRows;
      flynn::detail::parallel_for(tasks, flynn::detail::resolve_threads(threads), [&](std::size_t task, int) {
        const std::size_t first = 1 + task * kTaskRows, last = std::min(n, first + kTaskRows);
        for (std::size_t r = first; r < last; ++r) graph_->addPoint(rows + r * d, r);
      });
    } catch (const std::bad_alloc&) {
      throw Error(name() + ": out of memory while building");
    } catch (const std::runtime_error& e) {
      throw Error(fmt::format("{}: {}", name(), e.what()));
    }
  }

  void set_breadth(std::uint32_t breadth) override {
    if (graph_) graph_->setEf(breadth);
  }

  Neighbours search(const float* queries, std::size_t n, std::uint32_t k, int threads) const override {
    if (!graph_) throw Error(name() + ": search before build");
    Neighbours out;
    out.k = static_cast<std::uint32_t>(std::min<std::size_t>(k, graph_->cur_element_count));
    if (out.k == 0) throw Error(name() + ": k must be at least 1");
    out.ids.assign(n * out.k, -1);
    out.distances.assign(n * out.k, 0.0f);
    const std::size_t tasks = (n + kTaskRows - 1) / kTaskRows;
    flynn::detail::parallel_for(tasks, flynn::detail::resolve_threads(threads), [&](std::size_t task, int) {
      const std::size_t first = task * kTaskRows, last = std::min(n, first + kTaskRows);
      for (std::size_t q = first; q < last; ++q) {
        // A max-heap: the farthest first, so it fills the row from its end.
        auto found = graph_->searchKnn(queries + q * d_, out.k);
        for (std::size_t j = found.size(); j-- > 0;) {
          out.ids[q * out.k + j] = static_cast<std::int64_t>(found.top().second);
          out.distances[q * out.k + j] = found.top().first;
          found.pop();
        }
      }
    });
    return out;
  }

  std::uint64_t size_bytes() const override {
    if (!graph_) return 0;
    // HierarchicalNSW::saveIndex's layout: 13 header fields (11 of 8 bytes, 2 of 4), the
    // level-0 block (links, vector, label per row), then per row its upper-level links.
    const hnswlib::HierarchicalNSW<float>& g = *graph_;
    std::uint64_t bytes = 11 * 8 + 2 * 4 + static_cast<std::uint64_t>(g.cur_element_count) * g.size_data_per_element_;
    for (std::size_t i = 0; i < g.cur_element_count; ++i)
      bytes += 4 + static_cast<std::uint64_t>(g.size_links_per_element_) * static_cast<std::uint64_t>(std::max(0, g.element_levels_[i]));
    return bytes;
  }

 private:
  std::uint32_t m_links_, ef_construction_;
  std::size_t d_ = 0;
  std::unique_ptr<DispatchedL2> space_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph_;
};

}  // namespace

bool have_hnswlib() { return true; }

std::unique_ptr<AnnIndex> make_hnswlib_index(std::uint32_t m_links, std::uint32_t ef_construction) {
  if (m_links < 2) throw Error(fmt::format("hnswlib: M = {} must be at least 2", m_links));
  return std::make_unique<HnswlibIndex>(m_links, ef_construction);
}

#else

bool have_hnswlib() { return false; }

std::unique_ptr<AnnIndex> make_hnswlib_index(std::uint32_t, std::uint32_t) {
  throw Error("this build of flynn has no hnswlib (install libhnswlib-dev and rebuild)");
}

#endif

}  // namespace flynn::baselines
