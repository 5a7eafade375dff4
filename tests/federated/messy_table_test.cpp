// Missing values in a federation: the parties' tables arrive with their missing cells
// pending (LoadOptions::impute = false), one all-reduce of exact ImputationSums gives every
// party the means central training would use, and the model file is byte-identical to
// central training on the pooled table, for every split, variant and table shape.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "flynn/classifier.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/random.hpp"

namespace flynn::federated {
namespace {

// A table with a header, an id column, a categorical column and missing cells.
std::string messy_table(std::size_t rows, std::uint64_t seed, bool header) {
  SeededRng rng(seed);
  std::string t = header ? "id,a,b,color,c,label\n" : "";
  const char* colors[] = {"red", "green", "blue"};
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t c = r % 3;
    auto value = [&](double centre) {
      if (rng.uniform_below(10) == 0) return std::string(rng.uniform_below(2) ? "NA" : "");
      return std::to_string(centre + static_cast<double>(rng.uniform_below(1000)) / 400.0);
    };
    // The cells drawn in column order (the order of a function's arguments is unspecified),
    // joined by fmt rather than "r" + std::string&& (GCC 12's -Wrestrict misfires on that).
    const std::string a = value(c * 1.5), b = value(-2.0 * c);
    const char* color = colors[(c + rng.uniform_below(2)) % 3];
    const std::string cc = value(0.7 * c);
    t += fmt::format("r{},{},{},{},{},k{}\n", r, a, b, color, cc, c);
  }
  return t;
}

io::LoadOptions table_options(bool impute) {
  io::LoadOptions o;
  o.id_column = io::LabelColumn::parse("1");
  o.impute = impute;
  return o;
}

TEST(MessyFederated, MissingValuesGiveTheCentralModelByteForByte) {
  SeededRng rng(5);
  for (const bool header : {true, false}) {
    const std::string text = messy_table(150, 9 + header, header);
    const Dataset central_data = io::parse_csv(text, table_options(true), "t.csv");
    const Dataset pending = io::parse_csv(text, table_options(false), "t.csv");
    ASSERT_TRUE(has_missing(pending));
    ASSERT_FALSE(has_missing(central_data));
    for (const char* variant : {"paper", "zsign-q", "z"}) {
      for (const char* split : {"iid", "by-class", "dirichlet:0.5"}) {
        const int tau = 2 + static_cast<int>(rng.uniform_below(4));
        const auto parts = split_rows(pending.labels, pending.classes.size(), tau,
                                      SplitSpec::parse(split), rng.next_u64());
        std::vector<Dataset> shards;
        for (const auto& rows : parts) shards.push_back(pending.subset(rows));
        std::vector<const Dataset*> ptrs;
        for (const Dataset& d : shards) ptrs.push_back(&d);
        FederationSettings settings;
        settings.hyper.m = 256;
        settings.hyper.rho = 8;
        settings.hyper.seed = rng.next_u64();
        settings.hyper.variant = parse_variant(variant);
        settings.labels = central_data.classes;
        settings.threads = 1;
        const ColonyOutcome fed = run_colony(ptrs, settings);

        FlyNN central(settings.hyper.resolve(static_cast<std::uint32_t>(central_data.n_features),
                                             central_data.classes.size()),
                      central_data.classes, 1);
        central.fit(central_data);
        central.set_missing_policy(MissingPolicy::Mean);  // what the federation (and flynn train) records
        central.set_table_schema(central_data.schema);
        ASSERT_FALSE(fed.model.table_schema().fill.empty());
        ASSERT_EQ(fed.model.table_schema(), central_data.schema) << variant << " " << split;
        ASSERT_EQ(fed.model_file, io::serialize_model(central)) << variant << " " << split;
      }
    }
  }
}

TEST(MessyFederated, PartiesWithDifferentTablesAreRefusedNamingTheField) {
  const Dataset a = io::parse_csv("x,y,label\n1,2,a\n3,4,b\n", table_options(false), "a.csv");
  const Dataset b = io::parse_csv("x,z,label\n1,2,a\n3,4,b\n", table_options(false), "b.csv");
  FederationSettings settings;
  settings.hyper.m = 64;
  settings.hyper.rho = 4;
  settings.hyper.seed = 1;
  settings.labels = a.classes;
  settings.threads = 1;
  try {
    run_colony({&a, &b}, settings);
    ADD_FAILURE() << "no error";
  } catch (const FederationError& e) {
    // Named by column, not only as a fingerprint field (or as d, which the columns set).
    const std::string why = e.what();
    EXPECT_NE(why.find("its table lacks a column of party 0's ('y')"), std::string::npos) << why;
    EXPECT_NE(why.find("has a column that party 0's has not ('z')"), std::string::npos) << why;
  }
}

// Under DP the federation's column means would be exact statistics of the pooled rows,
// sent to every party and stored in the released model: a table with missing cells is
// refused under --missing mean, and a complete table's model carries no means.
TEST(MessyFederated, DpComputesNoMeansAndRefusesMissingCellsUnderMean) {
  FederationSettings settings;
  settings.hyper.m = 256;
  settings.hyper.rho = 8;
  settings.hyper.seed = 3;
  settings.hyper.variant = Variant{};
  settings.threads = 1;
  DpParams dp;
  dp.epsilon = 10;
  dp.T = 16;
  settings.dp = dp;

  const Dataset pending = io::parse_csv(messy_table(120, 4, true), table_options(false), "t.csv");
  ASSERT_TRUE(has_missing(pending));
  settings.labels = pending.classes;
  // Its text column's categories from a public schema (under DP the rows may not provide
  // them), so that the refusal is the missing cells'.
  settings.schema = public_schema_of(pending, false);
  const auto halves = split_rows(pending.labels, pending.classes.size(), 2, SplitSpec::parse("iid"), 1);
  const Dataset a = pending.subset(halves[0]), b = pending.subset(halves[1]);
  try {
    run_colony({&a, &b}, settings);
    ADD_FAILURE() << "no error";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("missing cells"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--missing zero"), std::string::npos) << e.what();
  }

  const Dataset complete =
      io::parse_csv("id,x,y,label\nr0,1,2,a\nr1,3,4,b\nr2,2,2,a\nr3,4,4,b\n", table_options(false), "c.csv");
  ASSERT_FALSE(has_missing(complete));
  settings.labels = complete.classes;
  settings.schema.reset();  // all numeric: no schema needed
  const Dataset c1 = complete.subset({0, 1}), c2 = complete.subset({2, 3});
  const ColonyOutcome fed = run_colony({&c1, &c2}, settings);
  EXPECT_TRUE(fed.model.table_schema().fill.empty());
  EXPECT_EQ(fed.model.table_schema().n_features(), 2u);
}

}  // namespace
}  // namespace flynn::federated
