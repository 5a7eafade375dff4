// DP releases of `flynn federated simulate`'s protocol (federated::run_colony, parties on
// threads) against ε: accuracy and balanced accuracy of the released model on a held-out
// 30 % of the rows (every row whose index is 7, 8 or 9 mod 10; never trained on), and how
// many parties' local checks warned (federated/dp_utility.hpp). The paper's method (the
// DP default), IID split, post-processing noise-units (the default), --dp-unit paper.
//
// Build (from the repository root, after building the flynn_federated target):
//   c++ -std=c++20 -O2 -DFMT_SHARED -Iinclude -Ibuild/include research/dp-utility/release_check.cpp \
//     -o build/release_check build/src/federated/libflynn_federated.a build/src/core/libflynn_core.a -lcrypto -lhwy -lz -lfmt -lpthread
// Run:
//   build/release_check FILE PARTIES T EPS[,EPS...] [SEEDS]
//   (prints a TSV row per ε and seed: the figures, then each warning on stderr)
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/metrics.hpp"

using namespace flynn;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: release_check FILE PARTIES T EPS[,EPS...] [SEEDS]\n");
    return 2;
  }
  const Dataset all = io::load_dataset(argv[1], io::LoadOptions{});
  const int parties = std::atoi(argv[2]);
  const auto T = static_cast<std::uint32_t>(std::atoi(argv[3]));
  std::vector<double> eps;
  std::stringstream list(argv[4]);
  for (std::string e; std::getline(list, e, ',');) eps.push_back(std::stod(e));
  const int seeds = argc > 5 ? std::atoi(argv[5]) : 1;
  std::vector<std::size_t> train_rows, test_rows;
  for (std::size_t r = 0; r < all.n_rows; ++r) (r % 10 < 7 ? train_rows : test_rows).push_back(r);
  const Dataset train = all.subset(train_rows), test = all.subset(test_rows);
  std::vector<Dataset> shards(static_cast<std::size_t>(parties));
  for (int p = 0; p < parties; ++p) {
    std::vector<std::size_t> rows;
    for (std::size_t r = static_cast<std::size_t>(p); r < train.n_rows; r += static_cast<std::size_t>(parties))
      rows.push_back(r);
    shards[static_cast<std::size_t>(p)] = train.subset(rows);
  }
  std::vector<const Dataset*> ptrs;
  for (const Dataset& d : shards) ptrs.push_back(&d);
  const std::vector<std::uint32_t> truth = test.row_class_ids_in(all.classes);
  std::printf("data\tparties\tT\tepsilon\tseed\taccuracy\tbalanced_accuracy\tparties_warned\n");
  for (const double e : eps)
    for (int s = 0; s < seeds; ++s) {
      federated::FederationSettings settings;
      settings.hyper.variant = Variant{};
      settings.hyper.seed = 5489 + static_cast<std::uint64_t>(s);
      settings.labels = all.classes;
      settings.threads = 1;
      federated::DpParams dp;
      dp.epsilon = e;
      dp.T = T;
      dp.postprocess = federated::DpPostprocess::NoiseUnits;
      settings.dp = dp;
      const federated::ColonyOutcome out = federated::run_colony(ptrs, settings);
      const std::vector<std::uint32_t> predicted = out.model.predict(test);
      int warned = 0;
      for (const std::string& w : out.release_warnings)
        if (!w.empty()) {
          ++warned;
          std::fprintf(stderr, "eps %g seed %d: %s", e, s, w.c_str());
        }
      std::printf("%s\t%d\t%u\t%g\t%d\t%.4f\t%.4f\t%d\n", argv[1], parties, T, e, s, accuracy(truth, predicted),
                  balanced_accuracy(truth, predicted, all.classes.size()), warned);
      std::fflush(stdout);
    }
  return 0;
}
