#pragma once
// What one library operation behind a command reports, in both of its forms: the JSON the
// command prints with --json, and the text it prints otherwise. Front-ends choose a form and
// print it; neither form is assembled in a front-end.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace flynn {
struct Dataset;
}

namespace flynn::eval {

struct Report {
  nlohmann::json json;  ///< the --json form
  std::string text;     ///< the human form, whole lines
};

/// A baseline run on the same folds as FlyNN and reported (`--knn`: flynn::baselines' tuned
/// kNN, knn_report.hpp). A hook, so that evaluation does not depend on the baselines: the
/// JSON's keys join the command's JSON, the text's lines follow the command's own.
using FoldComparison = std::function<Report(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                            std::uint32_t k_folds, int threads)>;

}  // namespace flynn::eval
