#include "flynn/io/feature_stats_file.hpp"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::io {

FeatureStats parse_feature_stats(std::string_view text, const std::string& source) {
  LoadOptions options;
  options.label_column = LabelColumn::parse("none");
  options.missing = MissingPolicy::Error;  // a statistic cannot be missing
  const Dataset rows = parse_csv(text, options, source);
  if (rows.n_rows != 2)
    throw Error(fmt::format("{}: feature statistics need exactly 2 rows (centres, then scales), "
                            "found {}", source, rows.n_rows));
  const std::size_t d = rows.n_features;
  if (rows.schema.has_categorical())
    throw Error(fmt::format("{}: feature statistics must all be numbers", source));
  FeatureStats stats;
  stats.mean.assign(rows.features.begin(), rows.features.begin() + static_cast<std::ptrdiff_t>(d));
  stats.scale.assign(rows.features.begin() + static_cast<std::ptrdiff_t>(d), rows.features.end());
  check_feature_stats(stats, source);
  return stats;
}

void check_feature_stats(const FeatureStats& stats, const std::string& source) {
  if (stats.mean.size() != stats.scale.size())
    throw Error(fmt::format("{}: {} centres but {} scales", source, stats.mean.size(), stats.scale.size()));
  for (std::size_t j = 0; j < stats.mean.size(); ++j) {
    if (!std::isfinite(stats.mean[j]))
      throw Error(fmt::format("{}: centre of feature {} is not a finite number", source, j + 1));
    if (!(stats.scale[j] > 0.0f) || !std::isfinite(stats.scale[j]))
      throw Error(fmt::format("{}: scale of feature {} is {}: scales must be positive", source, j + 1,
                              stats.scale[j]));
  }
}

void check_feature_stats_fit(const FeatureStats& stats, const FlyConfig& config) {
  if (!config.variant.standardize)
    throw Error(fmt::format("feature statistics were given, but variant {} standardises nothing",
                            variant_name(config.variant)));
  if (stats.mean.size() != config.input_dim)
    throw Error(fmt::format("the feature statistics have {} values, the data {} features",
                            stats.mean.size(), config.input_dim));
}

FeatureStats load_feature_stats(const std::string& path, std::uint64_t max_bytes) {
  return parse_feature_stats(read_file(path, max_bytes), path);
}

std::string feature_stats_digest(const FeatureStats& stats) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the values' bits
  auto mix = [&](const std::vector<float>& v) {
    for (float x : v) {
      std::uint32_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      for (int b = 0; b < 4; ++b) {
        h ^= (bits >> (8 * b)) & 0xffu;
        h *= 1099511628211ull;
      }
    }
  };
  mix(stats.mean);
  mix(stats.scale);
  return fmt::format("d={}, fnv64={:016x}", stats.mean.size(), h);
}

}  // namespace flynn::io
