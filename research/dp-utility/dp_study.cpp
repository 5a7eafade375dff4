// Utility of FlyNN's DP release on real data (research/dp-utility/README.md): accuracy and balanced
// accuracy of the released model against ε, T, m (and so counts per unit), ρ, the parties
// and the post-processing, beside the non-private model of the same hash.
//
// For each repetition r the rows are split once, stratified, 70 % / 30 % (seed r), the
// paper's method (the DP default) is built at each (m, ρ) with seed 5489 + r, and
// flynn::harness::privacy_trial releases every (ε, T) of the grid from the parties' exact
// counts (fresh SecureRng noise each), scoring every post-processing on the same release.
//
// Build (from the repository root, after `cmake --build build --target flynn`):
//   research/dp-utility/build.sh
// Run:
//   build/dp_study --data FILE --name NAME --out OUT.tsv [--m 512,2048,default] [--rho 16,64]
//                  [--parties 3,10] [--eps 0.5,1,2,4,8] [--T 1,2,4,...] [--reps 3]
//                  [--postprocess all|noise-units,none,...] [--unit paper|record|paper,record]
//                  [--exponent paper|reference]
// Writes one row per point; the last column names the exponent ("-" for the non-private model).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "flynn/config.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/harness/privacy_study.hpp"
#include "flynn/io/loaders.hpp"

using namespace flynn;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

template <typename T>
std::vector<T> numbers(const std::string& s) {
  std::vector<T> out;
  for (const std::string& item : split(s)) out.push_back(static_cast<T>(std::stod(item)));
  return out;
}

// Stratified 70/30 split of `data` by seed: (train rows, test rows).
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> split_rows(const Dataset& data, std::uint64_t seed) {
  const std::vector<std::size_t> test = eval::stratified_subsample(data, 0.3, seed);
  std::vector<bool> in_test(data.n_rows, false);
  for (std::size_t r : test) in_test[r] = true;
  std::vector<std::size_t> train;
  for (std::size_t r = 0; r < data.n_rows; ++r)
    if (!in_test[r]) train.push_back(r);
  return {train, test};
}

double majority_share(const Dataset& test) {
  std::vector<std::size_t> n(test.classes.size(), 0);
  for (std::uint32_t y : test.labels) ++n[y];
  return static_cast<double>(*std::max_element(n.begin(), n.end())) / static_cast<double>(test.n_rows);
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> a = {{"--m", "default"},  {"--rho", "default"}, {"--parties", "3,10"},
                                          {"--eps", "0.5,1,2,4,8"}, {"--T", "1,2,4,8,16,32,64,128,256,512"},
                                          {"--reps", "3"},        {"--name", ""}, {"--gamma", "default"},
                                          {"--postprocess", "all"}, {"--unit", "paper"},
                                          {"--exponent", "paper"}};
  for (int i = 1; i + 1 < argc; i += 2) a[argv[i]] = argv[i + 1];
  if (!a.count("--data") || !a.count("--out")) {
    std::cerr << "usage: dp_study --data FILE --name NAME --out OUT.tsv [--m ...] [--rho ...] [--parties ...] "
                 "[--eps ...] [--T ...] [--reps N]\n";
    return 2;
  }
  try {
    const Dataset data = io::load_dataset(a["--data"], io::LoadOptions{});
    const bool fresh = !std::ifstream(a["--out"]).good();
    std::ofstream out(a["--out"], std::ios::app);
    if (fresh)
      out << "dataset\tn_train\tn_test\td\tclasses\tmajority\tm\ts\trho\tgamma\tparties\trep\tunit\tpostprocess\t"
             "epsilon\tT\taccuracy\tbalanced_accuracy\texponent\n";
    const int reps = std::stoi(a["--reps"]);
    for (int rep = 0; rep < reps; ++rep) {
      const auto [train_rows, test_rows] = split_rows(data, static_cast<std::uint64_t>(rep));
      const Dataset train = data.subset(train_rows), test = data.subset(test_rows);
      for (const std::string& m_text : split(a["--m"]))
        for (const std::string& rho_text : split(a["--rho"])) {
          HyperParams h;
          h.variant = Variant{};  // the DP default: the paper's method
          if (m_text != "default") h.m = std::stoull(m_text);
          if (rho_text != "default") h.rho = std::stoull(rho_text);
          if (a["--gamma"] != "default") h.gamma = std::stod(a["--gamma"]);
          h.seed = Defaults::seed + static_cast<std::uint64_t>(rep);
          FlyConfig config;
          try {
            config = h.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
          } catch (const Error& e) {
            std::cerr << "skipped m=" << m_text << " rho=" << rho_text << ": " << e.what() << "\n";
            continue;
          }
          for (int parties : numbers<int>(a["--parties"])) {
            harness::PrivacyTrialSpec spec;
            spec.config = config;
            spec.parties = parties;
            spec.epsilons = numbers<double>(a["--eps"]);
            spec.exponent = federated::parse_dp_exponent(a["--exponent"]);
            spec.Ts = numbers<std::uint32_t>(a["--T"]);
            spec.units.clear();
            for (const std::string& unit : split(a["--unit"])) spec.units.push_back(federated::parse_dp_unit(unit));
            spec.postprocesses.clear();
            if (a["--postprocess"] == "all")
              spec.postprocesses = federated::all_dp_postprocesses();
            else
              for (const std::string& how : split(a["--postprocess"]))
                spec.postprocesses.push_back(federated::parse_dp_postprocess(how));
            spec.split_seed = static_cast<std::uint64_t>(rep);
            for (const harness::PrivacyPoint& p : harness::privacy_trial(train, test, spec))
              out << fmt::format("{}\t{}\t{}\t{}\t{}\t{:.4f}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.5f}\t{:.5f}\t{}\n",
                                 a["--name"], train.n_rows, test.n_rows, data.n_features, data.classes.size(),
                                 majority_share(test), config.m, config.s, config.rho, config.gamma, parties, rep,
                                 p.epsilon > 0 ? federated::dp_unit_name(p.unit) : "-",
                                 p.epsilon > 0 ? federated::dp_postprocess_name(p.postprocess) : "-", p.epsilon, p.T,
                                 p.accuracy, p.balanced_accuracy,
                                 p.epsilon > 0 ? federated::dp_exponent_name(spec.exponent) : "-");
            out.flush();
            std::cerr << a["--name"] << " rep " << rep << " m " << config.m << " rho " << config.rho << " parties "
                      << parties << " done\n";
          }
        }
    }
  } catch (const std::exception& e) {
    std::cerr << "dp_study: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
