#pragma once
// Synthetic classification data, the one home of flynn's generators: Guyon's (2003)
// generator as scikit-learn's make_classification implements it (the paper's appendix
// D.2), the binary variant of the paper authors' reference code (their
// eval_synthetic_binary_data.py, not part of flynn), and the privacy study's Gaussian
// mixture (the same generator in another draw order).
//
// Every draw comes from SeededRng stream (seed, RngStream::Synthetic, index), so dataset
// `index` of a study is the same on every machine and independent of the others.
#include <cstddef>
#include <cstdint>

#include "flynn/dataset.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// Parameters of make_classification with every feature informative (the paper's setting:
/// n_informative = n_features, no redundant, repeated or useless features).
struct ClassificationSpec {
  std::size_t n_samples = 100;           ///< rows
  std::size_t n_features = 20;           ///< d, all informative
  std::size_t n_classes = 2;             ///< L (labels "0" … "L−1")
  std::size_t n_clusters_per_class = 2;  ///< Gaussian clusters per class
  double class_sep = 1.0;                ///< hypercube half-side: centroids at ±class_sep
  bool hypercube = true;                 ///< centroids on hypercube vertices (else scaled randomly)
  double flip_y = 0.01;                  ///< fraction of labels re-drawn at random (sklearn default)
  bool shuffle = true;                   ///< shuffle rows and permute columns (sklearn default)
};

/// Guyon's generator, step for step as in scikit-learn 1.2 make_classification:
///  1. C = L·clusters_per_class clusters, ⌊n/C⌋ rows each, the first n mod C clusters one more;
///  2. centroids: C distinct vertices of {0,1}^d, mapped to {−sep, +sep}^d (with
///     hypercube = false each centroid is further scaled by a uniform factor per cluster and
///     per column);
///  3. rows of cluster k: z ~ N(0, I_d), x = z·A_k + centroid_k with A_k uniform in
///     [−1, 1]^{d×d} (a random covariance per cluster); label k mod L;
///  4. flip_y: each row, with probability flip_y, gets a uniformly drawn label (possibly
///     its own);
///  5. shuffle: rows in a uniformly random order, columns in a uniformly random order.
/// The only difference from scikit-learn besides the random source: sklearn makes the
/// vertices distinct on their last min(d, 30) coordinates, we make them distinct on all d
/// (identical for d ≤ 30; for larger d a collision has probability < C²/2^31 either way).
/// Throws flynn::Error when 2^d < C (not enough distinct vertices) or a size is 0.
Dataset make_classification(const ClassificationSpec& spec, std::uint64_t seed,
                            std::uint64_t index);

/// The privacy study's data: Guyon's generator again (the same hypercube vertices as
/// make_classification, drawn by the same helper), in the draw order the privacy study has
/// always used, so its results stay as they were. What the reference's privacy experiment
/// uses (make_classification with n_informative = d, hypercube = True):
///   * classes × modes_per_class cluster centres at distinct random vertices of the
///     hypercube {−class_sep, +class_sep}^d; cluster k belongs to class k mod classes;
///   * each cluster has its own random linear map A_k (entries uniform in [−1, 1]); a row
///     of cluster k is centre_k + A_k·z with z ~ N(0, I_d);
///   * rows are spread over the clusters as evenly as possible, then shuffled;
///   * a fraction `flip` of the rows gets a uniformly random class (label noise, as
///     make_classification's default flip_y = 0.01).
/// All draws come from SeededRng streams (seed, RngStream::Synthetic, …): the data set is a
/// function of (spec, seed). Labels are "0", "1", …
struct MixtureSpec {
  std::size_t rows = 1000;
  std::uint32_t d = 30;
  std::uint32_t classes = 2;
  std::uint32_t modes_per_class = 5;
  double class_sep = 1.2;
  double flip = 0.01;
};
Dataset gaussian_mixture(const MixtureSpec& spec, std::uint64_t seed);

/// The binary variant: rows in {0,1}^d with exactly b ones.
struct BinarySpec {
  std::size_t n_samples = 100;
  std::size_t n_features = 50;           ///< d of the binary rows
  std::size_t ones_per_row = 5;          ///< b
  std::size_t n_classes = 5;
  std::size_t n_clusters_per_class = 3;
  double class_sep = 1.2;
  std::size_t latent_ratio = 10;         ///< latent dense dimension d0 = ⌊d / latent_ratio⌋
};

/// As the reference: dense data from make_classification with d0 = ⌊d/latent_ratio⌋
/// informative features (same L, clusters, class_sep), then a FlyHash of it with m = d
/// units, s = max(2, ⌊0.5·d0⌋) ones per lifting row and ρ = b winners (L2-normalised rows,
/// lifting matrix from the same keyed stream), so that each row has exactly b ones.
/// Throws flynn::Error unless 1 ≤ b < d, 2^d0 ≥ L·clusters and d0 ≥ 2.
Dataset make_binary_classification(const BinarySpec& spec, std::uint64_t seed,
                                   std::uint64_t index);

}  // namespace flynn::harness
