#pragma once
// Standardisation statistics given from public knowledge rather than learned from the
// training rows: what a standardising variant needs under differential privacy, where the
// rows' own means and standard deviations would be data the release does not protect
// (docs/guide/federated.md, "Standardising variants under DP").
#include <cstdint>
#include <string>
#include <string_view>

#include "flynn/config.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::io {

/// Parses a statistics file: CSV (any of , ; tab), optionally gzip, of exactly two rows of
/// d numbers: the features' centres, then their scales (each > 0), in the order of the
/// model's features (after one-hot encoding of text columns). An optional header line of
/// names is allowed. Throws flynn::Error naming `source` for any other shape, a missing or
/// non-finite value or a scale ≤ 0.
FeatureStats parse_feature_stats(std::string_view text, const std::string& source);

/// Throws flynn::Error naming `source` unless `stats` has as many scales as centres, every
/// centre is finite and every scale finite and > 0: what public statistics must be, from a
/// file or from Python.
void check_feature_stats(const FeatureStats& stats, const std::string& source);

/// Throws flynn::Error unless public `stats` can serve a model of `config`: its variant
/// standardises, and there is one centre and one scale per feature (config.input_dim).
void check_feature_stats_fit(const FeatureStats& stats, const FlyConfig& config);

/// Reads and parses a statistics file of at most `max_bytes` (decompressed).
FeatureStats load_feature_stats(const std::string& path, std::uint64_t max_bytes = kDefaultMaxInputBytes);

/// A short digest of the statistics' exact bits ("d=…, fnv64=…"): what federated parties
/// compare to agree they standardise alike.
std::string feature_stats_digest(const FeatureStats& stats);

}  // namespace flynn::io
