// A dataset study runs every method on the same folds, records failures per method,
// round-trips through JSON, and feeds the Table-2 / CSV / report writers.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "flynn/error.hpp"
#include "flynn/harness/report.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/synthetic_study.hpp"
#include "test_support.hpp"

namespace flynn::harness {
namespace {

StudyOptions small_options() {
  StudyOptions o;
  o.folds = 3;
  o.search.budget = 3;
  o.search.space.max_expansion = 64;
  o.sbfc.expansion_factors = {0.5, 2, 8};
  o.learning_rates = {0.1};
  o.sgd.hidden = 8;
  o.threads = 1;
  return o;
}

TEST(EvalStudy, EveryMethodOnTheSameFoldsAndJsonRoundTrip) {
  const Dataset data = test::blobs(3, 20, 5, 3, 0.5);
  const StudyOptions o = small_options();
  const DatasetStudy s = run_dataset_study(data, "blobs", o);
  ASSERT_TRUE(s.ok);
  ASSERT_EQ(s.methods.size(), study_methods().size());
  for (std::size_t i = 0; i < s.methods.size(); ++i) {
    const MethodOutcome& m = s.methods[i];
    EXPECT_EQ(m.method, study_methods()[i]);
    EXPECT_TRUE(m.ok) << m.method << ": " << m.error;
    EXPECT_EQ(m.fold_accuracy.size(), 3u) << m.method;
    // Well-separated blobs; LR and MLP see only two minibatches in their one epoch here.
    if (m.method != "LR" && m.method != "MLP") {
      EXPECT_GT(m.accuracy, 0.6) << m.method;
    }
    EXPECT_GE(m.accuracy, 0.0);
    EXPECT_LE(m.accuracy, 1.0);
    EXPECT_FALSE(m.params.empty()) << m.method;
  }
  EXPECT_EQ(s.find("1NNC")->params, "k=1");
  EXPECT_EQ(s.settings, o.fingerprint());
  // Every method (SBFC and LR/MLP too) keeps the balanced accuracy and macro-F1 of its
  // setting of best accuracy; on balanced, well-separated blobs they are near the accuracy.
  for (const MethodOutcome& m : s.methods) {
    ASSERT_FALSE(std::isnan(m.balanced_accuracy)) << m.method;
    EXPECT_GE(m.balanced_accuracy, 0.0);
    EXPECT_LE(m.macro_f1, 1.0);
    EXPECT_NEAR(m.balanced_accuracy, m.accuracy, 0.1) << m.method;
    EXPECT_EQ(to_json(s)["methods"][&m - s.methods.data()]["balanced_accuracy"].get<double>(), m.balanced_accuracy);
  }
  EXPECT_EQ(s.find("FlyNN")->details["trace"].size(), 3u);
  // kNN on standardised features ran on the same folds beside the paper's kNNC.
  const nlohmann::json& z = s.find("kNNC")->details["standardized"];
  EXPECT_GT(z["accuracy"].get<double>(), 0.6);
  EXPECT_EQ(z["grid"].size(), o.knn_grid.size());

  const DatasetStudy back = study_from_json(nlohmann::json::parse(to_json(s).dump()));
  EXPECT_EQ(to_json(back), to_json(s));
  EXPECT_THROW(study_from_json(nlohmann::json{{"dataset", "x"}}), Error);
  // A result stored before these metrics were kept reads as "not computed".
  nlohmann::json old = to_json(s);
  for (auto& m : old["methods"]) {
    m.erase("balanced_accuracy");
    m.erase("macro_f1");
  }
  const DatasetStudy before = study_from_json(old);
  EXPECT_TRUE(std::isnan(before.methods[0].balanced_accuracy));
  EXPECT_FALSE(to_json(before)["methods"][0].contains("macro_f1"));

  // The fingerprint follows result-changing settings only.
  StudyOptions t = o;
  t.threads = 7;
  EXPECT_EQ(t.fingerprint(), o.fingerprint());
  t.search.budget = 4;
  EXPECT_NE(t.fingerprint(), o.fingerprint());
}

TEST(EvalStudy, AFailingMethodIsRecordedAndTheOthersRun) {
  const Dataset data = test::blobs(2, 15, 4, 8);
  StudyOptions o = small_options();
  o.knn_grid = {0};  // invalid: kNNC (and so 1NNC) fail
  const DatasetStudy s = run_dataset_study(data, "x", o);
  EXPECT_EQ(s.find("kNNC"), nullptr);
  EXPECT_EQ(s.find("1NNC"), nullptr);
  EXPECT_NE(s.methods[1].error.find("k must be at least 1"), std::string::npos) << s.methods[1].error;
  EXPECT_NE(s.find("FlyNN"), nullptr);
  EXPECT_NE(s.find("SBFC"), nullptr);
  // Problems of the data itself are errors of the whole study.
  const Dataset one_class = test::make_dataset({{1, 2}, {2, 1}, {3, 3}}, {"a", "a", "a"});
  EXPECT_THROW(run_dataset_study(one_class, "y", o), Error);
  const Dataset tiny = test::make_dataset({{1, 2}, {2, 1}}, {"a", "b"});
  EXPECT_THROW(run_dataset_study(tiny, "z", o), Error);
}

DatasetStudy fake(const std::string& id, double fly, double knn, double one, double sbfc) {
  DatasetStudy s;
  s.dataset = id;
  s.ok = true;
  const double acc[] = {fly, knn, one, sbfc, knn, knn};
  for (std::size_t i = 0; i < study_methods().size(); ++i) {
    MethodOutcome m;
    m.method = study_methods()[i];
    m.ok = acc[i] >= 0;
    m.accuracy = acc[i];
    if (i == 0) {  // FlyNN's balanced figures; the others' are "not computed"
      m.balanced_accuracy = acc[i] - 0.25;
      m.macro_f1 = acc[i] - 0.5;
    }
    m.params = "p=1, q=\"2\"";  // needs CSV quoting
    s.methods.push_back(m);
  }
  return s;
}

TEST(EvalStudy, Table2CsvAndReport) {
  std::vector<DatasetStudy> studies = {fake("a", 0.9, 0.8, 0.7, 0.5), fake("b", 0.8, 0.85, 0.7, 0.6),
                                       fake("c", 0.7, 0.7, 0.6, -1), fake("d", 0.95, 0.9, 0.9, 0.5)};
  const auto t2 = study_table2(studies);
  ASSERT_EQ(t2.size(), 5u);
  EXPECT_EQ(t2[0].baseline, "kNNC");
  EXPECT_EQ(t2[0].n_datasets, 4u);
  EXPECT_EQ(t2[0].wins, 2u);
  EXPECT_EQ(t2[0].ties, 1u);
  EXPECT_EQ(t2[0].losses, 1u);
  EXPECT_EQ(t2[2].baseline, "SBFC");
  EXPECT_EQ(t2[2].n_datasets, 3u);  // c's SBFC failed

  test::TempDir dir;
  write_per_dataset_csv(dir.file("per_dataset.csv"), studies);
  write_table2_csv(dir.file("table2.csv"), t2);
  const std::string pd = test::read_text(dir.file("per_dataset.csv"));
  EXPECT_EQ(pd.rfind("dataset,method,accuracy,params,seconds\n", 0), 0u);
  EXPECT_NE(pd.find("a,FlyNN,0.9,\"p=1, q=\"\"2\"\"\",0.000\n"), std::string::npos) << pd;
  EXPECT_EQ(pd.find("c,SBFC"), std::string::npos);  // failed methods are not rows
  const std::string t = test::read_text(dir.file("table2.csv"));
  EXPECT_EQ(t.rfind("baseline,n_datasets,frac_better,wins,ties,losses,median_improvement,ttest_p,wilcoxon_p\nkNNC,4,0.5,2,1,1,", 0), 0u) << t;

  ReportContext ctx;
  ctx.command = "flynn reproduce openml --data-dir X";
  ctx.failures = {{"9_broken", "bad file"}};
  const std::string md = openml_report_markdown(studies, t2, ctx);
  EXPECT_NE(md.find("| kNNC | 4 | 0.50 | 2/1/1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.55 | 39/2/30 | 0.35% | 5.3e-2 | 7.6e-2 |"), std::string::npos);  // the paper's row
  EXPECT_NE(md.find("9_broken: bad file"), std::string::npos);
  EXPECT_NE(md.find("c / SBFC FAILED"), std::string::npos);
  EXPECT_NE(md.find("## Balanced accuracy and macro-F1"), std::string::npos);
  EXPECT_NE(md.find("| a | 0.6500 / 0.4000 | — | — | — | — | — |"), std::string::npos) << md;
}

TEST(EvalStudy, SyntheticTable1Cells) {
  SyntheticConfig c;
  c.d = 50;
  c.n = 1000;
  std::vector<DatasetStudy> studies = {fake("dense-d50-n1000-r00", 0.8, 0.8, 0.72, 0.4),
                                       fake("dense-d50-n1000-r01", 0.9, 1.0, 0.8, 0.5),
                                       fake("dense-d50-n10000-r00", 0.1, 0.5, 0.1, 0.1)};
  const auto cells = synthetic_table1({c}, studies);
  const Table1Cell* fly = nullptr;
  for (const auto& cell : cells)
    if (cell.method == "FlyNN") fly = &cell;
  ASSERT_NE(fly, nullptr);
  EXPECT_EQ(fly->normalized.n, 2u);  // the n = 10000 dataset belongs to another configuration
  EXPECT_NEAR(fly->normalized.mean, 0.05, 1e-12);  // (0 + 0.1)/2
  EXPECT_NEAR(fly->normalized.se, 0.05, 1e-12);
  for (const auto& cell : cells) EXPECT_NE(cell.method, "kNNC");
}

}  // namespace
}  // namespace flynn::harness
