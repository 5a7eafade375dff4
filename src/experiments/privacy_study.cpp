#include "flynn/experiments/privacy_study.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"

namespace flynn::experiments {

using namespace flynn::federated;  // the studies drive the federated layer

Dataset gaussian_mixture(const MixtureSpec& spec, std::uint64_t seed) {
  if (spec.d == 0 || spec.classes < 2 || spec.modes_per_class == 0 || spec.rows == 0)
    throw Error("mixture: needs d ≥ 1, at least 2 classes, 1 mode per class and 1 row");
  const std::uint32_t clusters = spec.classes * spec.modes_per_class;
  if (spec.d < 63 && clusters > (std::uint64_t{1} << spec.d))
    throw Error(fmt::format("mixture: {} clusters do not fit on the vertices of a {}-cube",
                            clusters, spec.d));
  SeededRng rng = SeededRng::keyed(seed, RngStream::Synthetic, 0);

  // Distinct hypercube vertices (as bit strings over the first min(d, 64) coordinates,
  // further coordinates drawn freely: distinctness is already decided by then).
  std::vector<std::vector<float>> centre(clusters, std::vector<float>(spec.d));
  std::unordered_set<std::uint64_t> used;
  for (auto& c : centre) {
    for (;;) {
      std::uint64_t key = 0;
      for (std::uint32_t j = 0; j < spec.d; ++j) {
        const bool bit = rng.uniform_below(2) == 1;
        if (j < 64) key |= std::uint64_t(bit) << j;
        c[j] = static_cast<float>(bit ? spec.class_sep : -spec.class_sep);
      }
      if (used.insert(key).second) break;
    }
  }
  // A random linear map per cluster (make_classification's "covariance").
  std::vector<std::vector<double>> map(clusters, std::vector<double>(std::size_t(spec.d) * spec.d));
  for (auto& a : map)
    for (auto& v : a) v = 2.0 * rng.uniform01() - 1.0;

  // Rows dealt to clusters round-robin (sizes differ by at most one), then shuffled.
  std::vector<std::uint32_t> cluster_of(spec.rows);
  for (std::size_t r = 0; r < spec.rows; ++r) cluster_of[r] = static_cast<std::uint32_t>(r % clusters);
  for (std::size_t i = spec.rows; i > 1; --i) std::swap(cluster_of[i - 1], cluster_of[rng.uniform_below(i)]);

  Dataset data;
  data.source = "<mixture>";
  data.n_rows = spec.rows;
  data.n_features = spec.d;
  data.features.resize(spec.rows * spec.d);
  data.has_labels = true;
  std::vector<std::string> names;
  for (std::uint32_t l = 0; l < spec.classes; ++l) names.push_back(std::to_string(l));
  data.classes = LabelSet::sorted(names);
  // LabelSet::sorted orders "0".."9","10",… numerically, so id l is class l.
  data.labels.resize(spec.rows);
  data.row_origin.resize(spec.rows);
  std::vector<double> z(spec.d);
  for (std::size_t r = 0; r < spec.rows; ++r) {
    const std::uint32_t k = cluster_of[r];
    for (auto& v : z) v = rng.normal();
    float* row = data.row(r);
    const std::vector<double>& a = map[k];
    for (std::uint32_t j = 0; j < spec.d; ++j) {
      double x = 0;
      for (std::uint32_t i = 0; i < spec.d; ++i) x += z[i] * a[std::size_t(i) * spec.d + j];
      row[j] = static_cast<float>(centre[k][j] + x);
    }
    std::uint32_t label = k % spec.classes;
    if (rng.uniform01() < spec.flip) label = static_cast<std::uint32_t>(rng.uniform_below(spec.classes));
    data.labels[r] = label;
    data.row_origin[r] = r + 1;
  }
  return data;
}

SparseScorer::SparseScorer(const std::vector<std::uint32_t>& winners, std::size_t n,
                           std::uint32_t rho, std::uint32_t m, std::size_t n_classes)
    : n_(n), m_(m), rho_(rho), classes_(n_classes) {
  if (winners.size() != n * rho) throw Error("SparseScorer: winners are not n × rho");
  if (n > std::numeric_limits<std::uint32_t>::max()) throw Error("SparseScorer: too many rows");
  offsets_.assign(std::size_t(m) + 1, 0);
  for (std::uint32_t w : winners) {
    if (w >= m) throw Error("SparseScorer: a winner is not below m");
    ++offsets_[w + 1];
  }
  std::partial_sum(offsets_.begin(), offsets_.end(), offsets_.begin());
  rows_.resize(winners.size());
  std::vector<std::uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
  for (std::size_t r = 0; r < n; ++r)
    for (std::uint32_t k = 0; k < rho; ++k) rows_[fill[winners[r * rho + k]]++] = static_cast<std::uint32_t>(r);
}

std::vector<std::uint32_t> SparseScorer::predict(const std::vector<DpEntry>& entries,
                                                 double gamma) const {
  // Per (row, class): how many of the row's winners have a non-zero count, and the sum of
  // γ^c over them. score = (ρ − hits) + Σ γ^c, so the tiny values γ^c of large counts keep
  // their full precision when every winner has a non-zero count (1 − γ^c would round to 1
  // and turn real differences into ties).
  std::vector<std::uint32_t> hits(n_ * classes_, 0);
  std::vector<double> sum(n_ * classes_, 0.0);
  for (const DpEntry& e : entries) {
    if (e.value == 0) continue;
    const std::size_t l = e.index / m_, unit = e.index % m_;
    if (l >= classes_) throw Error("SparseScorer: entry index beyond classes × m");
    const double w = std::pow(gamma, static_cast<double>(e.value));  // γ^c, with 0^c = 0
    for (std::uint32_t p = offsets_[unit]; p < offsets_[unit + 1]; ++p) {
      const std::size_t at = std::size_t(rows_[p]) * classes_ + l;
      ++hits[at];
      sum[at] += w;
    }
  }
  std::vector<std::uint32_t> out(n_);
  std::vector<double> score(classes_);
  for (std::size_t r = 0; r < n_; ++r) {
    for (std::size_t l = 0; l < classes_; ++l)
      score[l] = static_cast<double>(rho_ - hits[r * classes_ + l]) + sum[r * classes_ + l];
    out[r] = argmin_class(score.data(), classes_);
  }
  return out;
}

std::vector<DpEntry> SparseScorer::nonzero(const std::vector<std::uint32_t>& dense) {
  std::vector<DpEntry> out;
  for (std::size_t i = 0; i < dense.size(); ++i)
    if (dense[i]) out.push_back({static_cast<std::uint32_t>(i), dense[i]});
  return out;
}

std::vector<PrivacyPoint> privacy_trial(const Dataset& train, const Dataset& test,
                                        const PrivacyTrialSpec& spec) {
  if (!train.has_labels || !test.has_labels) throw Error("privacy trial: data needs labels");
  if (train.n_features != test.n_features)
    throw Error("privacy trial: train and test have different feature counts");
  const LabelSet& labels = train.classes;
  const std::size_t L = labels.size();
  const FlyNN fly(spec.config, labels, 1);
  const std::uint32_t m = spec.config.m, rho = spec.config.rho;

  // The parties' counts: exactly what train_party's local step computes.
  SplitSpec iid;
  const auto split = split_rows(train.labels, L, spec.parties, iid, spec.split_seed);
  std::vector<ClassCounts> party_counts;
  ClassCounts total(L, m);
  for (const auto& rows : split) {
    party_counts.push_back(fly.count(train.subset(rows)));
    total += party_counts.back();
  }

  std::vector<std::uint32_t> truth(test.n_rows);
  for (std::size_t r = 0; r < test.n_rows; ++r) {
    const long id = labels.find(test.classes.name(test.labels[r]));
    if (id < 0) throw Error("privacy trial: a test label is not a training class");
    truth[r] = static_cast<std::uint32_t>(id);
  }
  const std::vector<std::uint32_t> winners = fly.hasher().hash(test.features.data(), test.n_rows, 1);
  const SparseScorer scorer(winners, test.n_rows, rho, m, L);

  std::vector<PrivacyPoint> out;
  {
    PrivacyPoint p;
    p.balanced_accuracy =
        balanced_accuracy(truth, scorer.predict(SparseScorer::nonzero(total.values()), spec.config.gamma), L);
    p.bytes_sent_per_party = std::uint64_t(m) * L * 4;
    out.push_back(p);
  }
  SecureRng rng;
  for (double eps : spec.epsilons) {
    for (std::uint32_t T : spec.Ts) {
      if (std::uint64_t(T) > std::uint64_t(m) * L) continue;
      const DpMechanism mech(DpParams{eps, T, spec.exponent}, static_cast<std::uint32_t>(spec.parties));
      std::vector<std::vector<DpEntry>> releases;
      for (const ClassCounts& c : party_counts) releases.push_back(privatize(c, mech, rng));
      const std::vector<std::uint32_t> dense = sum_releases(releases, std::size_t(m) * L);
      PrivacyPoint p;
      p.epsilon = eps;
      p.T = T;
      p.balanced_accuracy =
          balanced_accuracy(truth, scorer.predict(SparseScorer::nonzero(dense), spec.config.gamma), L);
      p.bytes_sent_per_party = 4 + std::uint64_t(T) * 8;
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace flynn::experiments
