#include "flynn/baselines/sbfc.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>

#include <faiss/VectorTransform.h>
#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/detail/progress_tracker.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/random.hpp"

namespace flynn::baselines {

namespace {

// Units per projection block: a multiple of 64 (whole code words) sized so that the float
// projection block n × B stays near 64 MiB.
std::uint32_t block_units(std::size_t n_rows) {
  const std::size_t budget = std::size_t{16} << 20;  // floats
  std::size_t b = budget / std::max<std::size_t>(1, n_rows);
  b = std::clamp<std::size_t>(b / 64 * 64, 64, 4096);
  return static_cast<std::uint32_t>(b);
}

// Codes of all rows for units [u0, u1): bits written to out (n × ⌈(u1−u0)/64⌉ words),
// unit u0 at bit 0 of word 0.
void simhash_block(const Dataset& data, std::uint32_t u0, std::uint32_t u1, std::uint64_t seed,
                   int threads, std::vector<float>& proj, std::vector<float>& y,
                   std::vector<std::uint64_t>& out) {
  const std::size_t n = data.n_rows, d = data.n_features;
  const std::uint32_t width = u1 - u0;
  proj.resize(std::size_t(width) * d);
  // Each unit's row depends only on (seed, unit): generation order and threads do not matter.
  detail::parallel_for(width, threads, [&](std::size_t i, int) {
    SeededRng rng = SeededRng::keyed(seed, RngStream::Baseline, kSbfcStreamTag | (u0 + i));
    float* row = proj.data() + i * d;
    for (std::size_t j = 0; j < d; ++j) row[j] = static_cast<float>(rng.normal());
  });
  faiss::LinearTransform lt(static_cast<int>(d), static_cast<int>(width), false);
  lt.A.swap(proj);
  lt.is_trained = true;
  y.resize(n * width);
  lt.apply_noalloc(static_cast<faiss::Index::idx_t>(n), data.features.data(), y.data());
  lt.A.swap(proj);
  const std::size_t words = (width + 63) / 64;
  out.assign(n * words, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const float* yr = y.data() + r * width;
    std::uint64_t* o = out.data() + r * words;
    for (std::uint32_t i = 0; i < width; ++i)
      if (yr[i] > 0.0f) o[i / 64] |= std::uint64_t{1} << (i % 64);
  }
}

// popcount(h ∧ ¬t) over bits [a, b) of word arrays h, t.
inline std::uint32_t missed_bits(const std::uint64_t* h, const std::uint64_t* t, std::uint32_t a,
                                 std::uint32_t b) {
  std::uint32_t total = 0;
  for (std::uint32_t w = a / 64; w * 64 < b; ++w) {
    std::uint64_t v = h[w] & ~t[w];
    const std::uint32_t lo = w * 64, hi = lo + 64;
    if (a > lo) v &= ~std::uint64_t{0} << (a - lo);
    if (b < hi) v &= (std::uint64_t{1} << (b - lo)) - 1;
    total += static_cast<std::uint32_t>(std::popcount(v));
  }
  return total;
}

}  // namespace

std::vector<double> default_sbfc_grid() {
  std::vector<double> g = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  for (double f = 1; f <= 2048; f *= 2) g.push_back(f);
  return g;
}

std::uint32_t sbfc_units(double expansion_factor, std::size_t d) {
  const double m = std::floor(expansion_factor * static_cast<double>(d) + 1e-9);
  if (!(m >= 1.0)) return 1;
  if (m > static_cast<double>(std::numeric_limits<std::uint32_t>::max()))
    return std::numeric_limits<std::uint32_t>::max();
  return static_cast<std::uint32_t>(m);
}

SimHashCodes simhash(const Dataset& data, std::uint32_t m, std::uint64_t seed, int threads) {
  if (m == 0) throw Error("SBFC: m must be at least 1");
  SimHashCodes c;
  c.n_rows = data.n_rows;
  c.m = m;
  c.words = (m + 63) / 64;
  c.bits.assign(c.n_rows * c.words, 0);
  const std::uint32_t B = block_units(data.n_rows);
  std::vector<float> proj, y;
  std::vector<std::uint64_t> block;
  for (std::uint32_t u0 = 0; u0 < m; u0 += B) {
    const std::uint32_t u1 = std::min<std::uint32_t>(m, u0 + B);
    simhash_block(data, u0, u1, seed, threads, proj, y, block);
    const std::size_t bw = (u1 - u0 + 63) / 64;
    for (std::size_t r = 0; r < c.n_rows; ++r)
      for (std::size_t w = 0; w < bw; ++w) c.bits[r * c.words + u0 / 64 + w] = block[r * bw + w];
  }
  return c;
}

SbfcModel::SbfcModel(const SimHashCodes& codes, std::uint32_t m,
                     const std::vector<std::uint32_t>& labels, std::size_t n_classes,
                     const std::vector<std::size_t>& train_rows)
    : m_(m), words_(codes.words), n_classes_(n_classes) {
  if (m == 0 || m > codes.m) throw Error(fmt::format("SBFC: m = {} outside [1, {}]", m, codes.m));
  filters_.assign(n_classes * words_, 0);
  for (std::size_t r : train_rows) {
    std::uint64_t* f = filters_.data() + labels[r] * words_;
    const std::uint64_t* h = codes.bits.data() + r * codes.words;
    for (std::size_t w = 0; w < words_; ++w) f[w] |= h[w];
  }
}

std::vector<std::uint32_t> SbfcModel::scores(const SimHashCodes& codes, std::size_t row) const {
  std::vector<std::uint32_t> s(n_classes_);
  const std::uint64_t* h = codes.bits.data() + row * codes.words;
  for (std::size_t l = 0; l < n_classes_; ++l)
    s[l] = missed_bits(h, filters_.data() + l * words_, 0, m_);
  return s;
}

std::uint32_t SbfcModel::predict(const SimHashCodes& codes, std::size_t row) const {
  const std::vector<std::uint32_t> s = scores(codes, row);
  return static_cast<std::uint32_t>(std::min_element(s.begin(), s.end()) - s.begin());
}

SbfcCvResult cross_validate_sbfc(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                 std::uint32_t k_folds, const SbfcOptions& options,
                                 const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: SBFC cross-validation needs labels", data.source));
  if (fold_of_row.size() != data.n_rows) throw Error("SBFC: fold assignment does not match the rows");
  if (options.expansion_factors.empty()) throw Error("SBFC: empty grid of expansion factors");
  const std::size_t n = data.n_rows, d = data.n_features, L = data.classes.size();

  SbfcCvResult result;
  const double per_unit = static_cast<double>(n) * static_cast<double>(d);
  result.m_limit = static_cast<std::uint64_t>(std::max(1.0, std::floor(options.max_work / per_unit)));

  // Grid points in ascending m; the guard drops the largest, but always keeps the smallest.
  std::vector<std::pair<std::uint32_t, double>> points;
  for (double f : options.expansion_factors) {
    if (!(f > 0.0)) throw Error(fmt::format("SBFC: expansion factor {} is not positive", f));
    points.emplace_back(sbfc_units(f, d), f);
  }
  std::sort(points.begin(), points.end());
  std::vector<std::pair<std::uint32_t, double>> kept;
  for (const auto& p : points) {
    if (!kept.empty() && kept.back().first == p.first) continue;  // same m, same classifier
    if (!kept.empty() && p.first > result.m_limit) {
      result.skipped_factors.push_back(p.second);
      continue;
    }
    kept.push_back(p);
  }
  const std::uint32_t m_max = kept.back().first;

  const std::uint32_t B = block_units(n);
  const std::size_t W = B / 64;  // words per full block
  std::vector<float> proj, y;
  std::vector<std::uint64_t> codes;
  std::vector<std::uint64_t> fold_or(std::size_t(k_folds) * L * W), train_filter(fold_or.size());
  std::vector<std::uint64_t> prefix(fold_or.size()), suffix(fold_or.size());
  std::vector<std::uint32_t> scores(n * L, 0);
  std::size_t next_point = 0;
  detail::ProgressTracker tracker(progress, m_max);

  for (std::uint32_t u0 = 0; u0 < m_max; u0 += B) {
    const std::uint32_t u1 = std::min<std::uint32_t>(m_max, u0 + B);
    simhash_block(data, u0, u1, options.seed, options.threads, proj, y, codes);
    const std::size_t bw = (u1 - u0 + 63) / 64;
    // Per-fold, per-class ORs of this block, then each fold's training filter as the OR of
    // the other folds (prefix/suffix ORs: no subtraction exists for OR).
    std::fill(fold_or.begin(), fold_or.end(), 0);
    for (std::size_t r = 0; r < n; ++r) {
      std::uint64_t* f = fold_or.data() + (std::size_t(fold_of_row[r]) * L + data.labels[r]) * W;
      const std::uint64_t* h = codes.data() + r * bw;
      for (std::size_t w = 0; w < bw; ++w) f[w] |= h[w];
    }
    const std::size_t slab = L * W;  // one fold's filters
    for (std::uint32_t f = 0; f < k_folds; ++f)
      for (std::size_t i = 0; i < slab; ++i)
        prefix[f * slab + i] = (f ? prefix[(f - 1) * slab + i] : 0) | fold_or[f * slab + i];
    for (std::uint32_t f = k_folds; f-- > 0;)
      for (std::size_t i = 0; i < slab; ++i)
        suffix[f * slab + i] = (f + 1 < k_folds ? suffix[(f + 1) * slab + i] : 0) | fold_or[f * slab + i];
    for (std::uint32_t f = 0; f < k_folds; ++f)
      for (std::size_t i = 0; i < slab; ++i)
        train_filter[f * slab + i] = (f ? prefix[(f - 1) * slab + i] : 0) |
                                     (f + 1 < k_folds ? suffix[(f + 1) * slab + i] : 0);

    // Score segment by segment; a segment ends at the block's end or at a grid point.
    std::uint32_t a = u0;
    while (a < u1) {
      std::uint32_t b = u1;
      if (next_point < kept.size() && kept[next_point].first <= u1) b = kept[next_point].first;
      if (b > a) {
        for (std::size_t r = 0; r < n; ++r) {
          const std::uint64_t* h = codes.data() + r * bw;
          const std::uint64_t* t = train_filter.data() + std::size_t(fold_of_row[r]) * slab;
          std::uint32_t* s = scores.data() + r * L;
          for (std::size_t l = 0; l < L; ++l) s[l] += missed_bits(h, t + l * W, a - u0, b - u0);
        }
      }
      a = b;
      while (next_point < kept.size() && kept[next_point].first == a) {
        std::vector<std::uint32_t> predicted(n);
        for (std::size_t r = 0; r < n; ++r) {
          const std::uint32_t* s = scores.data() + r * L;
          predicted[r] = static_cast<std::uint32_t>(std::min_element(s, s + L) - s);  // lowest class on ties
        }
        SbfcPoint p;
        p.m = kept[next_point].first;
        p.expansion_factor = kept[next_point].second;
        p.cv = eval::summarize_predictions(data.labels, predicted, fold_of_row, k_folds, L, 0.0);
        result.grid.push_back(std::move(p));
        ++next_point;
      }
    }
    tracker.advance(u1 - u0);
  }
  result.seconds = detail::seconds_since(start);
  for (std::size_t i = 0; i < result.grid.size(); ++i) {
    result.grid[i].cv.seconds = result.seconds;
    if (result.grid[i].cv.mean > result.grid[result.best].cv.mean) result.best = i;
  }
  return result;
}

}  // namespace flynn::baselines
