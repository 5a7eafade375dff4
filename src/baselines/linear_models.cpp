#include "flynn/baselines/linear_models.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/random.hpp"

namespace flynn::baselines {

Standardizer::Standardizer(const Dataset& data, const std::vector<std::size_t>& rows) {
  const std::size_t d = data.n_features;
  mean_.assign(d, 0.0);
  scale_.assign(d, 1.0);
  std::vector<std::size_t> all;
  const std::vector<std::size_t>* use = &rows;
  if (rows.empty()) {
    all.resize(data.n_rows);
    std::iota(all.begin(), all.end(), 0);
    use = &all;
  }
  if (use->empty()) return;
  const double n = static_cast<double>(use->size());
  for (std::size_t r : *use)
    for (std::size_t j = 0; j < d; ++j) mean_[j] += data.row(r)[j];
  for (double& m : mean_) m /= n;
  std::vector<double> ss(d, 0.0);
  for (std::size_t r : *use)
    for (std::size_t j = 0; j < d; ++j) {
      const double v = data.row(r)[j] - mean_[j];
      ss[j] += v * v;
    }
  for (std::size_t j = 0; j < d; ++j) {
    const double sd = std::sqrt(ss[j] / n);
    // Constant (or numerically constant) columns carry no information: map them to 0.
    scale_[j] = sd > 1e-12 * std::max(1.0, std::fabs(mean_[j])) ? sd : 1.0;
  }
}

std::vector<float> Standardizer::transform(const Dataset& data,
                                           const std::vector<std::size_t>& rows) const {
  const std::size_t d = data.n_features;
  std::vector<float> out(rows.size() * d);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const float* x = data.row(rows[i]);
    for (std::size_t j = 0; j < d; ++j)
      out[i * d + j] = static_cast<float>((x[j] - mean_[j]) / scale_[j]);
  }
  return out;
}

std::vector<double> default_learning_rates() { return {0.003, 0.01, 0.03, 0.1, 0.3, 1.0}; }

OneEpochNet::OneEpochNet(std::size_t d, std::size_t n_classes, std::uint32_t hidden,
                         std::uint64_t rng_seed, std::uint64_t stream_index)
    : d_(d), L_(n_classes), H_(hidden), seed_(rng_seed), stream_(stream_index) {
  const std::size_t in2 = H_ ? H_ : d_;
  w2_.assign(L_ * in2, 0.0);
  b2_.assign(L_, 0.0);
  if (H_) {
    SeededRng rng = SeededRng::keyed(seed_, RngStream::Baseline, (stream_ << 1) | 1);
    w1_.resize(std::size_t(H_) * d_);
    b1_.assign(H_, 0.0);
    const double s1 = std::sqrt(2.0 / static_cast<double>(std::max<std::size_t>(1, d_)));
    for (double& w : w1_) w = s1 * rng.normal();
    const double s2 = std::sqrt(1.0 / static_cast<double>(H_));
    for (double& w : w2_) w = s2 * rng.normal();
  }
}

void OneEpochNet::forward(const float* x, double* hidden, double* logits) const {
  const double* in = nullptr;
  std::size_t in_dim = d_;
  if (H_) {
    for (std::uint32_t h = 0; h < H_; ++h) {
      const double* w = w1_.data() + std::size_t(h) * d_;
      double a = b1_[h];
      for (std::size_t j = 0; j < d_; ++j) a += w[j] * x[j];
      hidden[h] = a > 0.0 ? a : 0.0;
    }
    in = hidden;
    in_dim = H_;
  }
  for (std::size_t l = 0; l < L_; ++l) {
    const double* w = w2_.data() + l * in_dim;
    double a = b2_[l];
    if (in) {
      for (std::size_t j = 0; j < in_dim; ++j) a += w[j] * in[j];
    } else {
      for (std::size_t j = 0; j < in_dim; ++j) a += w[j] * x[j];
    }
    logits[l] = a;
  }
}

void OneEpochNet::train_epoch(const float* x, const std::uint32_t* labels, std::size_t n,
                              double lr, std::uint32_t batch) {
  if (batch == 0) throw Error("SGD: batch size must be at least 1");
  SeededRng rng = SeededRng::keyed(seed_, RngStream::Baseline, stream_ << 1);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  flynn::shuffle(order, rng);

  const std::size_t in2 = H_ ? H_ : d_;
  std::vector<double> g1(w1_.size()), gb1(b1_.size()), g2(w2_.size()), gb2(b2_.size());
  std::vector<double> hidden(H_), logits(L_), gout(L_), gh(H_);
  for (std::size_t start = 0; start < n; start += batch) {
    const std::size_t end = std::min(n, start + batch);
    std::fill(g1.begin(), g1.end(), 0.0);
    std::fill(gb1.begin(), gb1.end(), 0.0);
    std::fill(g2.begin(), g2.end(), 0.0);
    std::fill(gb2.begin(), gb2.end(), 0.0);
    for (std::size_t i = start; i < end; ++i) {
      const float* xi = x + order[i] * d_;
      forward(xi, hidden.data(), logits.data());
      // Softmax cross-entropy gradient with respect to the logits: p − onehot(y).
      const double top = *std::max_element(logits.begin(), logits.end());
      double z = 0.0;
      for (std::size_t l = 0; l < L_; ++l) z += (gout[l] = std::exp(logits[l] - top));
      for (std::size_t l = 0; l < L_; ++l) gout[l] /= z;
      gout[labels[order[i]]] -= 1.0;
      for (std::size_t l = 0; l < L_; ++l) {
        gb2[l] += gout[l];
        double* g = g2.data() + l * in2;
        if (H_) {
          for (std::size_t j = 0; j < in2; ++j) g[j] += gout[l] * hidden[j];
        } else {
          for (std::size_t j = 0; j < in2; ++j) g[j] += gout[l] * xi[j];
        }
      }
      if (H_) {
        for (std::uint32_t h = 0; h < H_; ++h) {
          if (hidden[h] <= 0.0) {
            gh[h] = 0.0;
            continue;
          }
          double a = 0.0;
          for (std::size_t l = 0; l < L_; ++l) a += w2_[l * in2 + h] * gout[l];
          gh[h] = a;
        }
        for (std::uint32_t h = 0; h < H_; ++h) {
          if (gh[h] == 0.0) continue;
          gb1[h] += gh[h];
          double* g = g1.data() + std::size_t(h) * d_;
          for (std::size_t j = 0; j < d_; ++j) g[j] += gh[h] * xi[j];
        }
      }
    }
    const double step = lr / static_cast<double>(end - start);
    for (std::size_t i = 0; i < w2_.size(); ++i) w2_[i] -= step * g2[i];
    for (std::size_t i = 0; i < b2_.size(); ++i) b2_[i] -= step * gb2[i];
    for (std::size_t i = 0; i < w1_.size(); ++i) w1_[i] -= step * g1[i];
    for (std::size_t i = 0; i < b1_.size(); ++i) b1_[i] -= step * gb1[i];
  }
}

std::vector<std::uint32_t> OneEpochNet::predict(const float* x, std::size_t n) const {
  std::vector<std::uint32_t> out(n, 0);
  std::vector<double> hidden(H_), logits(L_);
  for (std::size_t i = 0; i < n; ++i) {
    forward(x + i * d_, hidden.data(), logits.data());
    std::size_t best = 0;
    bool finite = std::isfinite(logits[0]);
    for (std::size_t l = 1; l < L_; ++l) {
      finite = finite && std::isfinite(logits[l]);
      if (logits[l] > logits[best]) best = l;
    }
    out[i] = finite ? static_cast<std::uint32_t>(best) : 0;
  }
  return out;
}

SgdCvResult cross_validate_one_epoch(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                     std::uint32_t k_folds, bool mlp, const SgdOptions& options,
                                     const std::vector<double>& learning_rates) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: cross-validation needs labels", data.source));
  if (fold_of_row.size() != data.n_rows) throw Error("SGD: fold assignment does not match the rows");
  if (learning_rates.empty()) throw Error("SGD: empty grid of learning rates");
  for (double lr : learning_rates)
    if (!(lr > 0.0)) throw Error(fmt::format("SGD: learning rate {} is not positive", lr));
  const std::size_t d = data.n_features, L = data.classes.size();
  const std::uint64_t tag = mlp ? kMlpStreamTag : kLogisticStreamTag;
  const std::uint32_t hidden = mlp ? std::max<std::uint32_t>(1, options.hidden) : 0;

  // Out-of-fold predictions per learning rate (every metric of eval::summarize_predictions).
  std::vector<std::vector<std::uint32_t>> predicted(learning_rates.size(), std::vector<std::uint32_t>(data.n_rows, 0));
  const std::vector<eval::FoldRows> folds = eval::fold_rows(fold_of_row, k_folds);
  for (std::uint32_t f = 0; f < k_folds; ++f) {
    const eval::FoldRows& fr = folds[f];
    if (fr.train.empty() || fr.test.empty()) continue;
    const Standardizer st(data, fr.train);
    const std::vector<float> xtr = st.transform(data, fr.train), xte = st.transform(data, fr.test);
    std::vector<std::uint32_t> ytr(fr.train.size());
    for (std::size_t i = 0; i < fr.train.size(); ++i) ytr[i] = data.labels[fr.train[i]];
    for (std::size_t g = 0; g < learning_rates.size(); ++g) {
      // Same initial weights and row order for every learning rate of a fold.
      OneEpochNet net(d, L, hidden, options.seed, tag | f);
      net.train_epoch(xtr.data(), ytr.data(), fr.train.size(), learning_rates[g], options.batch);
      const std::vector<std::uint32_t> pred = net.predict(xte.data(), fr.test.size());
      for (std::size_t i = 0; i < pred.size(); ++i) predicted[g][fr.test[i]] = pred[i];
    }
  }
  SgdCvResult r;
  r.learning_rates = learning_rates;
  r.seconds = detail::seconds_since(start);
  for (std::size_t g = 0; g < learning_rates.size(); ++g) {
    r.per_rate.push_back(eval::summarize_predictions(data.labels, predicted[g], fold_of_row, k_folds, L, r.seconds));
    if (r.per_rate[g].mean > r.per_rate[r.best].mean) r.best = g;
  }
  return r;
}

}  // namespace flynn::baselines
