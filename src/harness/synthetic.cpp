#include "flynn/harness/synthetic.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/random.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

Dataset with_labels(std::size_t n, std::size_t d, std::size_t L, std::vector<float> features,
                    std::vector<std::uint32_t> labels, const std::string& source) {
  Dataset out;
  out.source = source;
  out.n_rows = n;
  out.n_features = d;
  out.features = std::move(features);
  out.has_labels = true;
  out.labels = std::move(labels);
  std::vector<std::string> names;
  for (std::size_t l = 0; l < L; ++l) names.push_back(std::to_string(l));
  out.classes = LabelSet::sorted(names);  // numeric order: "0" < "1" < … < "10"
  // LabelSet::sorted orders integers numerically, so the id of "l" is l.
  out.row_origin.resize(n);
  std::iota(out.row_origin.begin(), out.row_origin.end(), std::uint64_t{1});
  return out;
}

// `count` distinct vertices of the hypercube {−sep, +sep}^d, each drawn as d fair bits
// (retried when it repeats an earlier vertex): step 2 of Guyon's generator, shared by
// make_classification and gaussian_mixture.
std::vector<std::vector<double>> hypercube_vertices(SeededRng& rng, std::size_t count, std::size_t d, double sep) {
  std::set<std::vector<bool>> seen;
  std::vector<std::vector<double>> vertices;
  while (vertices.size() < count) {
    std::vector<bool> bits(d);
    for (std::size_t j = 0; j < d; ++j) bits[j] = rng.uniform_below(2) == 1;
    if (!seen.insert(bits).second) continue;
    std::vector<double> c(d);
    for (std::size_t j = 0; j < d; ++j) c[j] = bits[j] ? sep : -sep;
    vertices.push_back(std::move(c));
  }
  return vertices;
}

}  // namespace

Dataset make_classification(const ClassificationSpec& spec, std::uint64_t seed,
                            std::uint64_t index) {
  const std::size_t n = spec.n_samples, d = spec.n_features, L = spec.n_classes;
  const std::size_t C = L * spec.n_clusters_per_class;
  if (n == 0 || d == 0 || L < 2 || spec.n_clusters_per_class == 0)
    throw Error(fmt::format(
        "make_classification: needs rows, features, ≥ 2 classes and ≥ 1 cluster per class "
        "(got n={}, d={}, L={}, clusters={})",
        n, d, L, spec.n_clusters_per_class));
  if (d < 63 && (std::uint64_t{1} << d) < C)
    throw Error(fmt::format(
        "make_classification: {} classes × {} clusters need {} distinct hypercube vertices, "
        "but d = {} gives only {}",
        L, spec.n_clusters_per_class, C, d, std::uint64_t{1} << d));
  SeededRng rng = SeededRng::keyed(seed, RngStream::Synthetic, index);

  // 1. Rows per cluster.
  std::vector<std::size_t> per_cluster(C, n / C);
  for (std::size_t i = 0; i < n % C; ++i) ++per_cluster[i];

  // 2. Distinct hypercube vertices, as ±class_sep.
  std::vector<std::vector<double>> centroids = hypercube_vertices(rng, C, d, spec.class_sep);
  if (!spec.hypercube) {
    for (auto& c : centroids) {
      const double f = rng.uniform01();
      for (double& v : c) v *= f;
    }
    std::vector<double> col(d);
    for (double& f : col) f = rng.uniform01();
    for (auto& c : centroids)
      for (std::size_t j = 0; j < d; ++j) c[j] *= col[j];
  }

  // 3. Gaussian rows, one random linear map per cluster. sklearn draws every row's z first
  // (one standard_normal call) and then the maps; the order of draws only matters for
  // matching its exact numbers, which a different generator cannot do anyway.
  std::vector<double> z(n * d);
  for (double& v : z) v = rng.normal();
  std::vector<float> x(n * d);
  std::vector<std::uint32_t> y(n);
  std::vector<double> A(d * d);
  std::size_t start = 0;
  for (std::size_t k = 0; k < C; ++k) {
    for (double& a : A) a = 2.0 * rng.uniform01() - 1.0;
    const std::vector<double>& c = centroids[k];
    for (std::size_t r = start; r < start + per_cluster[k]; ++r) {
      y[r] = static_cast<std::uint32_t>(k % L);
      const double* zr = z.data() + r * d;
      for (std::size_t j = 0; j < d; ++j) {
        double acc = 0.0;
        for (std::size_t t = 0; t < d; ++t) acc += zr[t] * A[t * d + j];
        x[r * d + j] = static_cast<float>(acc + c[j]);
      }
    }
    start += per_cluster[k];
  }

  // 4. Label noise.
  if (spec.flip_y > 0.0) {
    for (std::size_t r = 0; r < n; ++r)
      if (rng.uniform01() < spec.flip_y) y[r] = static_cast<std::uint32_t>(rng.uniform_below(L));
  }

  // 5. Shuffle rows and columns.
  if (spec.shuffle) {
    std::vector<std::size_t> rows(n), cols(d);
    std::iota(rows.begin(), rows.end(), 0);
    std::iota(cols.begin(), cols.end(), 0);
    flynn::shuffle(rows, rng);
    flynn::shuffle(cols, rng);
    std::vector<float> xs(n * d);
    std::vector<std::uint32_t> ys(n);
    for (std::size_t i = 0; i < n; ++i) {
      ys[i] = y[rows[i]];
      for (std::size_t j = 0; j < d; ++j) xs[i * d + j] = x[rows[i] * d + cols[j]];
    }
    x.swap(xs);
    y.swap(ys);
  }
  return with_labels(n, d, L, std::move(x), std::move(y),
                     fmt::format("<make_classification #{}>", index));
}

Dataset gaussian_mixture(const MixtureSpec& spec, std::uint64_t seed) {
  if (spec.d == 0 || spec.classes < 2 || spec.modes_per_class == 0 || spec.rows == 0)
    throw Error("mixture: needs d ≥ 1, at least 2 classes, 1 mode per class and 1 row");
  const std::uint32_t clusters = spec.classes * spec.modes_per_class;
  if (spec.d < 63 && clusters > (std::uint64_t{1} << spec.d))
    throw Error(fmt::format("mixture: {} clusters do not fit on the vertices of a {}-cube",
                            clusters, spec.d));
  SeededRng rng = SeededRng::keyed(seed, RngStream::Synthetic, 0);
  const std::vector<std::vector<double>> centre = hypercube_vertices(rng, clusters, spec.d, spec.class_sep);
  // A random linear map per cluster (make_classification's "covariance").
  std::vector<std::vector<double>> map(clusters, std::vector<double>(std::size_t(spec.d) * spec.d));
  for (auto& a : map)
    for (auto& v : a) v = 2.0 * rng.uniform01() - 1.0;

  // Rows dealt to clusters round-robin (sizes differ by at most one), then shuffled.
  std::vector<std::uint32_t> cluster_of(spec.rows);
  for (std::size_t r = 0; r < spec.rows; ++r) cluster_of[r] = static_cast<std::uint32_t>(r % clusters);
  flynn::shuffle(cluster_of, rng);

  std::vector<float> x(spec.rows * spec.d);
  std::vector<std::uint32_t> y(spec.rows);
  std::vector<double> z(spec.d);
  for (std::size_t r = 0; r < spec.rows; ++r) {
    const std::uint32_t k = cluster_of[r];
    for (auto& v : z) v = rng.normal();
    float* row = x.data() + r * spec.d;
    const std::vector<double>& a = map[k];
    for (std::uint32_t j = 0; j < spec.d; ++j) {
      double acc = 0;
      for (std::uint32_t i = 0; i < spec.d; ++i) acc += z[i] * a[std::size_t(i) * spec.d + j];
      // The centre in float, as this generator has always added it.
      row[j] = static_cast<float>(static_cast<float>(centre[k][j]) + acc);
    }
    std::uint32_t label = k % spec.classes;
    if (rng.uniform01() < spec.flip) label = static_cast<std::uint32_t>(rng.uniform_below(spec.classes));
    y[r] = label;
  }
  return with_labels(spec.rows, spec.d, spec.classes, std::move(x), std::move(y), "<mixture>");
}

Dataset make_binary_classification(const BinarySpec& spec, std::uint64_t seed,
                                   std::uint64_t index) {
  const std::size_t d = spec.n_features, b = spec.ones_per_row;
  const std::size_t d0 = spec.latent_ratio ? d / spec.latent_ratio : 0;
  if (b < 1 || b >= d)
    throw Error(fmt::format("binary synthetic data: b = {} ones per row must be in [1, d−1] = [1, {}]",
                            b, d == 0 ? 0 : d - 1));
  if (d0 < 2)
    throw Error(fmt::format("binary synthetic data: d = {} / latent ratio {} leaves fewer than 2 "
                            "latent dimensions",
                            d, spec.latent_ratio));
  ClassificationSpec dense;
  dense.n_samples = spec.n_samples;
  dense.n_features = d0;
  dense.n_classes = spec.n_classes;
  dense.n_clusters_per_class = spec.n_clusters_per_class;
  dense.class_sep = spec.class_sep;
  const Dataset latent = make_classification(dense, seed, index);

  FlyConfig fc;
  fc.input_dim = static_cast<std::uint32_t>(d0);
  fc.m = static_cast<std::uint32_t>(d);
  fc.s = static_cast<std::uint32_t>(std::max<std::size_t>(2, d0 / 2));
  fc.rho = static_cast<std::uint32_t>(b);
  fc.gamma = 0.0;
  // The lifting matrix of the generator is keyed by the dataset too, so that every
  // synthetic dataset has its own binary code.
  fc.seed = SeededRng::keyed(seed, RngStream::Synthetic, index).next_u64() ^ 0xB1A5ULL;
  fc.preprocess = Preprocess::Normalize;
  const FlyHasher hasher(fc, 1);
  const std::vector<std::uint32_t> winners = hasher.hash(latent.features.data(), latent.n_rows, 1);
  std::vector<float> x(latent.n_rows * d, 0.0f);
  for (std::size_t r = 0; r < latent.n_rows; ++r)
    for (std::size_t k = 0; k < b; ++k) x[r * d + winners[r * b + k]] = 1.0f;
  Dataset out = with_labels(latent.n_rows, d, spec.n_classes, std::move(x), latent.labels,
                            fmt::format("<binary make_classification #{}>", index));
  return out;
}

}  // namespace flynn::harness
