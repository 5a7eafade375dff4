// `flynn federated provision --project FILE`: a federation's sites and policy from one small
// JSON file (flags given as well win), and the refusal of a bad project file or kit.json —
// naming the key, writing nothing. The parsers themselves: fuzz/fuzz_site_files.cpp.
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/federated/provision.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;
namespace fed = flynn::federated;

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(ProvisionProject, AProjectFileProvisionsTheKitsItNames) {
  test::TempDir dir;
  write(dir.file("project.json"),
        R"({"coordinator": "127.0.0.1:7010", "parties": ["north", "south", "east"], "days": 30,
            "labels": "yes,no", "out": ")" + dir.file("fed") + R"("})");
  const auto r = test::run_cli(fmt::format("federated provision --project {}", dir.file("project.json")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("--labels L1"), std::string::npos) << "the labels are in the coordinator's kit: " << r.out;
  for (const char* site : {"coordinator", "north", "south", "east"}) {
    const fed::SiteKit k = fed::read_kit(dir.file(fmt::format("fed/{}", site)));
    EXPECT_EQ(k.name, site);
    EXPECT_EQ(k.coordinator, "127.0.0.1:7010");
    EXPECT_EQ(k.parties, (std::vector<std::string>{"north", "south", "east"}));
    EXPECT_EQ(k.labels, "yes,no");
  }
  // A flag given as well wins over the file's value.
  const auto again = test::run_cli(fmt::format("federated provision --project {} --out {} --parties a,b,c --json",
                                               dir.file("project.json"), dir.file("other")));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto j = nlohmann::json::parse(again.out);
  EXPECT_EQ(j.at("kits").size(), 4u);
  EXPECT_TRUE(fs::exists(dir.file("other/a/kit.json")));
  EXPECT_EQ(fed::read_kit(dir.file("other/a")).parties, (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ProvisionProject, ABadProjectFileIsRefusedNamingTheProblemAndWritesNothing) {
  test::TempDir dir;
  const std::string out = dir.file("fed");
  const struct {
    std::string text, needle;
  } cases[] = {
      {R"({"coordinator": "127.0.0.1:7010", "parties": ["a", "b", "c"], "partys": 1})", "unknown key \"partys\""},
      {R"({"coordinator": 7010, "parties": ["a", "b", "c"]})", "\"coordinator\" must be a string"},
      {R"({"coordinator": "127.0.0.1:7010"})", "\"parties\" (a list of names) is required"},
      {R"({"coordinator": "127.0.0.1:7010", "parties": "a,b,c"})", "\"parties\" must be a list of names"},
      {R"({"coordinator": "127.0.0.1:7010", "parties": ["a", "b", "c"], "days": 0})", "\"days\" must be a whole number"},
      {R"({"coordinator": "127.0.0.1:7010", "parties": ["a", "b", "c"], "days": 1e300})", "\"days\" must be a whole number"},
      {"[1, 2, 3]", "one JSON object"},
      {"{\"coordinator\": ", "not JSON"},
      {std::string(fed::kMaxSiteFileBytes + 10, ' '), "larger than"},
  };
  for (const auto& c : cases) {
    write(dir.file("project.json"), c.text);
    const auto r = test::run_cli(fmt::format("federated provision --project {} --out {}", dir.file("project.json"), out));
    test::expect_clean_error(r, c.needle);
    EXPECT_FALSE(fs::exists(out)) << c.needle;
  }
  // Neither flags nor a file: the missing value is named.
  test::expect_clean_error(test::run_cli(fmt::format("federated provision --out {}", out)), "--coordinator is required");
}

TEST(ProvisionProject, AKitConfigurationIsReadOnlyWhenSmallAndWellFormed) {
  test::TempDir dir;
  ASSERT_EQ(test::run_cli(fmt::format("federated provision --out {} --coordinator 127.0.0.1:7011 --parties a,b,c",
                                      dir.file("fed")))
                .exit_code,
            0);
  const std::string kit = dir.file("fed/a");
  EXPECT_EQ(fed::read_kit(kit).role, "party");
  EXPECT_THROW(fed::parse_kit_config(R"({"flynn_kit": 1, "role": "admin", "name": "a", "coordinator": "h:1",
                                         "server_name": "h", "parties": [], "min_parties": 3, "ca": "c",
                                         "cert": "c", "key": "k", "crl": "r"})",
                                     kit),
               Error);
  EXPECT_THROW(fed::parse_kit_config(R"({"flynn_kit": "1"})", kit), Error);
  // Numbers too large for 64 bits parse as doubles: refused, never converted (found by
  // fuzz_site_files).
  EXPECT_THROW(fed::parse_kit_config(R"({"flynn_kit": 1333333333333333333333333333333})", kit), Error);
  EXPECT_THROW(fed::parse_kit_config(R"({"flynn_kit": 1, "role": "party", "name": "a", "coordinator": "h:1",
                                         "server_name": "h", "parties": [], "min_parties": 1e300, "ca": "c",
                                         "cert": "c", "key": "k", "crl": "r"})",
                                     kit),
               Error);
  EXPECT_THROW(fed::parse_kit_config(R"({"flynn_kit": 1, "role": "party", "name": "a", "coordinator": "h:1",
                                         "server_name": "h", "parties": [], "min_parties": 18446744073709551615,
                                         "ca": "c", "cert": "c", "key": "k", "crl": "r"})",
                                     kit),
               Error);
  // A kit.json grown past the bound is refused, not read whole.
  write(kit + "/kit.json", std::string(fed::kMaxSiteFileBytes + 1, ' '));
  const auto r = test::run_cli(fmt::format("federated join --kit {} --data x.csv --check", kit));
  test::expect_clean_error(r, "this party is not ready");
  EXPECT_NE(r.out.find("larger than"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace flynn
