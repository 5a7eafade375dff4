#include "flynn/harness/privacy_study.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

using namespace flynn::federated;  // the studies drive the federated layer

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
    const std::vector<std::uint32_t> predicted = scorer.predict(SparseScorer::nonzero(total.values()), spec.config.gamma);
    p.balanced_accuracy = balanced_accuracy(truth, predicted, L);
    p.accuracy = accuracy(truth, predicted);
    p.bytes_sent_per_party = std::uint64_t(m) * L * 4;
    out.push_back(p);
  }
  SecureRng rng;
  const std::size_t cells = std::size_t(m) * L;
  for (double eps : spec.epsilons) {
    for (std::uint32_t T : spec.Ts) {
      if (std::uint64_t(T) > cells) continue;
      for (DpUnit unit : spec.units) {
        DpParams params{eps, T, spec.exponent};
        params.unit = unit;
        const DpMechanism mech(params, static_cast<std::uint32_t>(spec.parties));
        std::vector<std::vector<DpEntry>> releases;
        for (const ClassCounts& c : party_counts) releases.push_back(privatize(c, mech, rng));
        const std::vector<std::uint32_t> released = sum_releases(releases, cells);
        for (DpPostprocess how : spec.postprocesses) {
          std::vector<std::uint32_t> dense = released;
          postprocess_release(dense, m, L, mech.noise_scale, spec.config.gamma, how);
          PrivacyPoint p;
          p.epsilon = eps;
          p.T = T;
          p.unit = unit;
          p.postprocess = how;
          const std::vector<std::uint32_t> predicted = scorer.predict(SparseScorer::nonzero(dense), spec.config.gamma);
          p.balanced_accuracy = balanced_accuracy(truth, predicted, L);
          p.accuracy = accuracy(truth, predicted);
          p.bytes_sent_per_party = 4 + std::uint64_t(T) * 8;
          out.push_back(p);
        }
      }
    }
  }
  return out;
}

}  // namespace flynn::harness
