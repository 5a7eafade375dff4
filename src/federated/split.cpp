#include "flynn/federated/split.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/random.hpp"

namespace flynn::federated {

namespace {

double parse_number(const std::string& text, const std::string& what) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(v))
    throw Error(fmt::format("split: {} '{}' is not a number", what, text));
  return v;
}

// Gamma(shape, 1) by Marsaglia & Tsang (2000); shape < 1 via Gamma(shape + 1)·U^(1/shape).
double gamma_variate(double shape, SeededRng& rng) {
  if (shape < 1.0) {
    const double u = rng.uniform01();
    return gamma_variate(shape + 1.0, rng) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = rng.normal();
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    const double u = rng.uniform01();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (u > 0 && std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

// Cuts `rows` (already in random order) into chunks proportional to `weights` (sum > 0),
// sizes by largest remainder so they add up to rows.size() exactly.
void deal_by_weights(const std::vector<std::size_t>& rows, const std::vector<double>& weights,
                     std::vector<std::vector<std::size_t>>& out) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  const std::size_t n = rows.size(), k = weights.size();
  std::vector<std::size_t> size(k);
  std::vector<std::pair<double, std::size_t>> remainder(k);
  std::size_t given = 0;
  for (std::size_t p = 0; p < k; ++p) {
    const double exact = static_cast<double>(n) * weights[p] / total;
    size[p] = static_cast<std::size_t>(std::floor(exact));
    given += size[p];
    remainder[p] = {exact - std::floor(exact), p};
  }
  // Largest remainders first; ties to the lower party index (deterministic).
  std::sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (std::size_t i = 0; given < n; ++i, ++given) ++size[remainder[i % k].second];
  std::size_t pos = 0;
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t i = 0; i < size[p]; ++i) out[p].push_back(rows[pos++]);
}

}  // namespace

SplitSpec SplitSpec::parse(const std::string& text) {
  SplitSpec s;
  if (text == "iid") {
    s.kind = Kind::Iid;
  } else if (text == "by-class") {
    s.kind = Kind::ByClass;
  } else if (text.rfind("dirichlet:", 0) == 0) {
    s.kind = Kind::Dirichlet;
    s.alpha = parse_number(text.substr(10), "Dirichlet alpha");
    if (!(s.alpha > 0))
      throw Error(fmt::format("split: Dirichlet alpha = {} must be positive", s.alpha));
  } else if (text.rfind("sizes:", 0) == 0) {
    s.kind = Kind::Sizes;
    std::string rest = text.substr(6);
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = rest.find(',', start);
      const double w = parse_number(rest.substr(start, comma - start), "weight");
      if (w < 0) throw Error(fmt::format("split: weight {} must not be negative", w));
      s.weights.push_back(w);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    throw Error(fmt::format(
        "split: '{}' is not one of iid, by-class, dirichlet:ALPHA, sizes:W1,W2,...", text));
  }
  return s;
}

std::string SplitSpec::describe() const {
  switch (kind) {
    case Kind::Iid: return "iid";
    case Kind::ByClass: return "by-class";
    case Kind::Dirichlet: return fmt::format("dirichlet:{}", alpha);
    case Kind::Sizes: {
      std::string s = "sizes:";
      for (std::size_t i = 0; i < weights.size(); ++i) s += fmt::format("{}{}", i ? "," : "", weights[i]);
      return s;
    }
  }
  return "?";
}

namespace {

// by-class: whole classes per party; with τ > L class l is dealt among parties l, l + L, …
void split_by_class(const std::vector<std::vector<std::size_t>>& by_class, std::uint64_t seed,
                    std::vector<std::vector<std::size_t>>& out) {
  const std::size_t tau = out.size(), n_classes = by_class.size();
  for (std::size_t l = 0; l < n_classes; ++l) {
    if (tau <= n_classes) {
      auto& dst = out[l % tau];
      dst.insert(dst.end(), by_class[l].begin(), by_class[l].end());
      continue;
    }
    std::vector<std::size_t> holders;
    for (std::size_t t = l; t < tau; t += n_classes) holders.push_back(t);
    SeededRng rng = SeededRng::keyed(seed, RngStream::Split, 1 + l);
    std::vector<std::size_t> rows = by_class[l];
    flynn::shuffle(rows, rng);
    std::vector<std::vector<std::size_t>> part(holders.size());
    const std::vector<double> equal_weights(holders.size(), 1.0);
    deal_by_weights(rows, equal_weights, part);
    for (std::size_t h = 0; h < holders.size(); ++h)
      out[holders[h]].insert(out[holders[h]].end(), part[h].begin(), part[h].end());
  }
}

// dirichlet:α: per class, party shares ~ Dirichlet(α), cut at round(n_l · cumulative share).
void split_dirichlet(const std::vector<std::vector<std::size_t>>& by_class, double alpha, std::uint64_t seed,
                     std::vector<std::vector<std::size_t>>& out) {
  if (!(alpha > 0)) throw Error("split: Dirichlet alpha must be positive");
  const std::size_t tau = out.size();
  for (std::size_t l = 0; l < by_class.size(); ++l) {
    SeededRng rng = SeededRng::keyed(seed, RngStream::Split, 1 + l);
    std::vector<double> p(tau);
    double total = 0;
    for (auto& v : p) total += (v = gamma_variate(alpha, rng));
    // All-zero draws (tiny α underflowing): the class goes to one uniformly chosen party.
    if (!(total > 0)) {
      std::fill(p.begin(), p.end(), 0.0);
      p[rng.uniform_below(tau)] = 1.0;
    }
    std::vector<std::size_t> rows = by_class[l];
    flynn::shuffle(rows, rng);
    // Cut at round(n_l · cumulative proportion): sizes add up exactly.
    double cumulative = 0;
    std::size_t start = 0;
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    for (std::size_t t = 0; t < tau; ++t) {
      cumulative += p[t];
      const std::size_t end =
          t + 1 == tau ? rows.size()
                       : std::min(rows.size(), static_cast<std::size_t>(std::llround(cumulative / sum * rows.size())));
      for (std::size_t i = start; i < std::max(start, end); ++i) out[t].push_back(rows[i]);
      start = std::max(start, end);
    }
  }
}

}  // namespace

std::vector<std::vector<std::size_t>> split_rows(const std::vector<std::uint32_t>& labels,
                                                 std::size_t n_classes, int parties,
                                                 const SplitSpec& spec, std::uint64_t seed) {
  if (parties < 1) throw Error(fmt::format("parties = {}: must be at least 1", parties));
  const auto tau = static_cast<std::size_t>(parties);
  std::vector<std::vector<std::size_t>> out(tau);
  std::vector<std::vector<std::size_t>> by_class(n_classes);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (labels[r] >= n_classes) throw Error(fmt::format("split: row {} has class id {} ≥ {}", r, labels[r], n_classes));
    by_class[labels[r]].push_back(r);
  }
  std::vector<std::size_t> all(labels.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  switch (spec.kind) {
    case SplitSpec::Kind::Iid: {
      SeededRng rng = SeededRng::keyed(seed, RngStream::Split, 0);
      flynn::shuffle(all, rng);
      deal_by_weights(all, std::vector<double>(tau, 1.0), out);
      break;
    }
    case SplitSpec::Kind::ByClass: split_by_class(by_class, seed, out); break;
    case SplitSpec::Kind::Dirichlet: split_dirichlet(by_class, spec.alpha, seed, out); break;
    case SplitSpec::Kind::Sizes: {
      if (spec.weights.size() != tau)
        throw Error(fmt::format("split: {} weights given for {} parties", spec.weights.size(), tau));
      if (std::accumulate(spec.weights.begin(), spec.weights.end(), 0.0) <= 0)
        throw Error("split: the weights must not all be zero");
      SeededRng rng = SeededRng::keyed(seed, RngStream::Split, 0);
      flynn::shuffle(all, rng);
      deal_by_weights(all, spec.weights, out);
      break;
    }
  }
  for (auto& rows : out) std::sort(rows.begin(), rows.end());
  return out;
}

}  // namespace flynn::federated
