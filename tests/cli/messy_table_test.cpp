// A messy CSV end to end through the CLI: an id column, string labels, missing values in
// several spellings, a categorical column, and at prediction the columns in another
// order (plus an unseen category). The model trained on it must predict exactly what a
// model trained on the same data cleaned by hand predicts (id dropped, categories one-hot
// encoded, missing cells filled with the exact training means), and pass the ids through.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "flynn/detail/csv_cells.hpp"
#include "flynn/feature_stats.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::run_cli;

struct Row {
  std::string id, label, color;
  std::vector<double> x;        // 4 numeric features
  std::vector<bool> missing;    // per numeric feature
};

const std::vector<std::string> kClasses = {"Iris setosa", "Iris versicolor", "Iris virginica"};
const std::vector<std::string> kColors = {"blue", "green", "red"};  // sorted: one-hot order

std::vector<Row> make_rows(std::size_t n, std::uint64_t seed, std::size_t first_id) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.6);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < n; ++i) {
    Row r;
    const std::size_t c = i % 3;
    char id[16];
    std::snprintf(id, sizeof id, "S%05zu", first_id + i);
    r.id = id;
    r.label = kClasses[c];
    // The color agrees with the class two times in three.
    r.color = u(rng) < 0.67 ? kColors[c] : kColors[(c + 1) % 3];
    for (int j = 0; j < 4; ++j) {
      // Two decimals, as a real table would hold them.
      r.x.push_back(std::round((1.5 * c + (j % 2 ? -0.5 * c : 0.3 * j) + noise(rng)) * 100) / 100);
      r.missing.push_back(u(rng) < 0.08);
    }
    rows.push_back(r);
  }
  return rows;
}

const char* kMissingSpellings[] = {"", "NA", "?", "nan", "NaN"};

// Messy training file: id, f1, color, f2, f3, f4, species.
std::string messy_train(const std::vector<Row>& rows) {
  std::ostringstream o;
  o << "sample_id,f1,color,f2,f3,f4,species\n";
  std::size_t k = 0;
  for (const Row& r : rows) {
    o << r.id;
    for (int j = 0; j < 4; ++j) {
      if (j == 1) o << "," << r.color;
      o << ",";
      if (r.missing[j])
        o << kMissingSpellings[k++ % 5];
      else
        o << r.x[j];
    }
    o << "," << detail::csv_field(r.label) << "\n";
  }
  return o.str();
}

// Messy prediction file, columns in another order: species, f4, color, sample_id, f2, f1, f3.
std::string messy_test(const std::vector<Row>& rows) {
  std::ostringstream o;
  o << "species;f4;color;sample_id;f2;f1;f3\n";  // and another delimiter
  std::size_t k = 0;
  auto cell = [&](const Row& r, int j) {
    if (r.missing[j]) return std::string(kMissingSpellings[k++ % 5]);
    std::ostringstream s;
    s << r.x[j];
    return s.str();
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const std::string color = i == 5 ? "purple" : r.color;  // a category never seen in training
    o << r.label << ";" << cell(r, 3) << ";" << color << ";" << r.id << ";" << cell(r, 1) << ";"
      << cell(r, 0) << ";" << cell(r, 2) << "\n";
  }
  return o.str();
}

// The training means as flynn defines them (exact fixed-point sums of the non-missing
// cells, FeatureSums' quantisation), computed here independently.
std::vector<float> training_means(const std::vector<Row>& rows) {
  std::vector<float> means;
  for (int j = 0; j < 4; ++j) {
    long double sum = 0;
    std::size_t n = 0;
    for (const Row& r : rows) {
      if (r.missing[j]) continue;
      sum += static_cast<long double>(FeatureSums::quantize(static_cast<float>(r.x[j])));
      ++n;
    }
    means.push_back(static_cast<float>(sum / n * std::ldexp(1.0L, -FeatureSums::kFractionBits)));
  }
  return means;
}

// The same rows cleaned by hand, columns in the training file's order without the id:
// f1, color one-hot (blue, green, red), f2, f3, f4 (missing → mean), label last.
std::string clean(const std::vector<Row>& rows, const std::vector<float>& means, bool unseen_row5) {
  std::ostringstream o;
  o.precision(9);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    for (int j = 0; j < 4; ++j) {
      if (j == 1)
        for (const std::string& c : kColors) o << (c == r.color && !(unseen_row5 && i == 5) ? 1 : 0) << ",";
      o << (r.missing[j] ? means[j] : static_cast<float>(r.x[j])) << ",";
    }
    o << detail::csv_field(r.label) << "\n";
  }
  return o.str();
}

std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(detail::csv_split(line));
  return out;
}

class MessyTableCli : public ::testing::Test {
 protected:
  std::string file(const std::string& name) const { return dir_.file(name); }
  test::TempDir dir_;
};

TEST_F(MessyTableCli, TrainsAndPredictsLikeTheSameDataCleanedByHand) {
  const std::vector<Row> train = make_rows(300, 11, 0), test_rows = make_rows(120, 12, 300);
  test::write_text(file("train.csv"), messy_train(train));
  test::write_text(file("test.csv"), messy_test(test_rows));
  const std::vector<float> means = training_means(train);
  test::write_text(file("train_clean.csv"), clean(train, means, false));
  test::write_text(file("test_clean.csv"), clean(test_rows, means, true));
  const std::string hyper = " --m 2048 --rho 16 --quiet";

  // Without --id-col the id column is refused, and the message says what to do.
  auto r = run_cli("train --data " + file("train.csv") + " --model " + file("m0.flynn") + hyper);
  test::expect_clean_error(r, "--id-col sample_id");

  r = run_cli("train --data " + file("train.csv") + " --model " + file("messy.flynn") +
              " --id-col sample_id --json" + hyper);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto tj = nlohmann::json::parse(r.out);
  EXPECT_EQ(tj["features"], 7);  // f1..f4 + 3 colors
  EXPECT_EQ(tj["table"]["categorical_columns"], 1);
  r = run_cli("train --data " + file("train_clean.csv") + " --model " + file("clean.flynn") + hyper);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = run_cli("predict --model " + file("messy.flynn") + " --data " + file("test.csv") + " --out " +
              file("messy_pred.csv") + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double messy_acc = nlohmann::json::parse(r.out)["accuracy"].get<double>();
  r = run_cli("predict --model " + file("clean.flynn") + " --data " + file("test_clean.csv") +
              " --out " + file("clean_pred.csv") + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double clean_acc = nlohmann::json::parse(r.out)["accuracy"].get<double>();

  const auto messy = read_csv(test::read_text(file("messy_pred.csv")));
  const auto cleaned = read_csv(test::read_text(file("clean_pred.csv")));
  ASSERT_EQ(messy.size(), test_rows.size() + 1);
  ASSERT_EQ(cleaned.size(), messy.size());
  EXPECT_EQ(messy[0][0], "sample_id");  // the id column leads, under its own name
  for (std::size_t i = 0; i < test_rows.size(); ++i) {
    EXPECT_EQ(messy[i + 1][0], test_rows[i].id);
    EXPECT_EQ(messy[i + 1][1], cleaned[i + 1][1]) << "row " << i;
  }
  EXPECT_EQ(messy_acc, clean_acc);
  EXPECT_GT(messy_acc, 0.8);

  // --json carries the ids too.
  r = run_cli("predict --model " + file("messy.flynn") + " --data " + file("test.csv") + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ids"][0], test_rows[0].id);
}

TEST_F(MessyTableCli, ColumnProblemsAtPredictionAreCleanErrors) {
  const std::vector<Row> train = make_rows(60, 3, 0);
  test::write_text(file("train.csv"), messy_train(train));
  auto r = run_cli("train --data " + file("train.csv") + " --model " + file("m.flynn") +
                   " --ignore-cols sample_id --m 512 --rho 8 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  test::write_text(file("no_f2.csv"), "f1,color,f3,f4\n1,red,2,3\n");
  r = run_cli("predict --model " + file("m.flynn") + " --data " + file("no_f2.csv") + " --quiet");
  test::expect_clean_error(r, "the model's feature column 'f2' is not in the header");
  test::write_text(file("extra.csv"), "f1,color,f2,f3,f4,weight\n1,red,2,3,4,70\n");
  r = run_cli("predict --model " + file("m.flynn") + " --data " + file("extra.csv") + " --quiet");
  test::expect_clean_error(r, "--ignore-cols weight");
  r = run_cli("predict --model " + file("m.flynn") + " --data " + file("extra.csv") +
              " --ignore-cols weight --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  test::write_text(file("na.csv"), "f1,color,f2,f3,f4\nNA,red,2,3,4\n");
  r = run_cli("predict --model " + file("m.flynn") + " --data " + file("na.csv") +
              " --missing error --quiet");
  test::expect_clean_error(r, "missing value 'NA'");
  r = run_cli("train --data " + file("train.csv") + " --model " + file("m2.flynn") +
              " --ignore-cols sample_id --missing median --quiet");
  test::expect_clean_error(r, "--missing: 'median' is not one of error, mean, zero");
}

}  // namespace
}  // namespace flynn
