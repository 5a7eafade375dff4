// --feature-stats through the CLI: train and federated simulate with public statistics, and
// the clear errors of a variant that standardises nothing, a file of the wrong width and DP
// without them.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "cli_support.hpp"
#include "flynn/dataset.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

TEST(FeatureStatsCli, TrainAndSimulateWithPublicStatistics) {
  test::TempDir dir;
  std::string csv;
  const Dataset data = test::blobs(2, 50, 3, 21);
  for (std::size_t r = 0; r < data.n_rows; ++r)
    csv += fmt::format("{},{},{},{}\n", data.row(r)[0], data.row(r)[1], data.row(r)[2],
                       data.classes.name(data.labels[r]));
  const std::string train = dir.file("t.csv"), stats = dir.file("s.csv"), model = dir.file("m.flynn");
  test::write_text(train, csv);
  test::write_text(stats, "0,0,0\n3,3,3\n");
  auto r = test::run_cli("train --data " + train + " --model " + model + " --variant zsign-q --feature-stats " +
                         stats + " --quiet --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli("train --data " + train + " --model " + dir.file("p.flynn") + " --variant paper --feature-stats " +
                    stats + " --quiet");
  test::expect_clean_error(r, "standardises nothing");
  test::write_text(dir.file("w.csv"), "0,0\n1,1\n");
  r = test::run_cli("train --data " + train + " --model " + dir.file("w.flynn") +
                    " --variant zsign-q --feature-stats " + dir.file("w.csv") + " --quiet");
  test::expect_clean_error(r, "2 values, the data 3 features");
  r = test::run_cli("federated simulate --data " + train + " --parties 2 --variant zsign-q --dp-epsilon 5 --dp-T 8 --quiet");
  test::expect_clean_error(r, "--feature-stats");
  r = test::run_cli("federated simulate --data " + train + " --parties 2 --variant zsign-q --dp-epsilon 5 --dp-T 8 "
                    "--feature-stats " + stats + " --quiet --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace flynn
