// flynn schema and --schema through the CLI: a schema made from a public sample, then a
// DP simulation and a solo federated train that read the parties' tables against it; no
// category of one party's rows reaches an error message or a model (the federation's side:
// tests/federated/dp_public_schema_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "flynn/federated/public_schema.hpp"
#include "public_schema_tables.hpp"
#include "test_support.hpp"

namespace flynn::federated {
namespace {

using test::kSchemaJson;
using test::kSecret;
using test::party_table;

TEST(SchemaCli, SchemaFromAPublicSampleThenADpSimulation) {
  test::TempDir dir;
  test::write_text(dir.file("sample.csv"), "x,y,colour,label\n1,2,red,a\n2,1,green,b\n0,0,blue,a\n");
  std::string all = party_table(0);
  for (int p = 1; p < 3; ++p) all += party_table(p).substr(std::string("x,y,colour,label\n").size());
  test::write_text(dir.file("all.csv"), all);
  const auto made = test::run_cli(fmt::format("schema --data {} --out {}", dir.file("sample.csv"),
                                              dir.file("schema.json")));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.out.find("1 categorical, d = 5"), std::string::npos) << made.out;
  EXPECT_EQ(parse_public_schema(test::read_text(dir.file("schema.json")), "schema.json"),
            parse_public_schema(kSchemaJson, "k.json"));

  const std::string dp = "--parties 3 --m 128 --rho 8 --dp-epsilon 4 --dp-T 12";
  // Without --schema: refused, naming the flag, the category not in the message.
  const auto refused = test::run_cli(fmt::format("federated simulate --data {} {} --model {}", dir.file("all.csv"),
                                                 dp, dir.file("no.model")));
  test::expect_clean_error(refused, "--schema FILE");
  EXPECT_EQ(refused.err.find(kSecret), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("no.model")));

  const auto run = test::run_cli(fmt::format("federated simulate --data {} {} --schema {} --model {} --json",
                                             dir.file("all.csv"), dp, dir.file("schema.json"),
                                             dir.file("dp.model")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(test::read_text(dir.file("dp.model")).find(kSecret), std::string::npos);
  const auto j = nlohmann::json::parse(run.out);
  for (const auto& p : j["parties_detail"]) EXPECT_TRUE(p.contains("seconds")) << p;  // the simulator's own

  // federated train (one party, the MPI command's code path) takes --schema too.
  test::write_text(dir.file("p1.csv"), party_table(1));
  const auto solo = test::run_cli(fmt::format(
      "federated train --backend solo --data {} --labels a,b --m 128 --rho 8 --dp-epsilon 4 --dp-T 12 "
      "--schema {} --model {} --quiet",
      dir.file("p1.csv"), dir.file("schema.json"), dir.file("solo.model")));
  ASSERT_EQ(solo.exit_code, 0) << solo.err;
  EXPECT_EQ(test::read_text(dir.file("solo.model")).find(kSecret), std::string::npos);
  const auto solo_refused = test::run_cli(fmt::format(
      "federated train --backend solo --data {} --labels a,b --m 128 --rho 8 --dp-epsilon 4 --dp-T 12 "
      "--model {} --quiet",
      dir.file("p1.csv"), dir.file("solo2.model")));
  EXPECT_NE(solo_refused.exit_code, 0);
  EXPECT_NE(solo_refused.err.find("--schema FILE"), std::string::npos) << solo_refused.err;
  EXPECT_EQ(solo_refused.err.find(kSecret), std::string::npos) << solo_refused.err;

  // LIBSVM under DP: d would be the rows' largest index.
  test::write_text(dir.file("d.libsvm"), "a 1:1 2:3\nb 1:2 7:1\na 3:1\nb 2:2\n");
  const auto svm = test::run_cli(fmt::format("federated simulate --data {} {}", dir.file("d.libsvm"), dp));
  test::expect_clean_error(svm, "--schema FILE");
  test::write_text(dir.file("d7.json"), R"({"format": "flynn table schema", "version": 1, "features": 9})");
  const auto svm_ok = test::run_cli(fmt::format("federated simulate --data {} --test {} {} --schema {} --json",
                                                dir.file("d.libsvm"), dir.file("d.libsvm"), dp,
                                                dir.file("d7.json")));
  ASSERT_EQ(svm_ok.exit_code, 0) << svm_ok.err;
  EXPECT_EQ(nlohmann::json::parse(svm_ok.out)["config"]["d"], 9);
}

}  // namespace
}  // namespace flynn::federated
