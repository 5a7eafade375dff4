// `--report DIR` of `flynn eval`, `flynn predict` and `flynn tune` end to end, on a
// multi-class and a binary shared table: the folder's files, its numbers against the
// command's own, the page against the JSON, and the page as headless Chromium shows it.
#include <gtest/gtest.h>

#include <cairo.h>

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "report_page_check.hpp"
#include "cli_support.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;

// The shared tables (../shared/data/tables beside the OpenML folder); empty when absent.
std::string shared_tables() {
  const std::string openml = test::openml_dir();
  if (openml.empty()) return "";
  const fs::path tables = fs::path(openml).parent_path() / "tables";
  return fs::exists(tables / "MANIFEST.tsv") ? tables.string() : "";
}

struct Table {
  std::string path, flags;
};

Table penguins() { return {shared_tables() + "/penguins.csv.gz", "--label-col species"}; }
Table qsar() { return {test::openml_dir() + "/1494_qsar-biodeg.csv.gz", ""}; }

class ReportCli : public ::testing::Test {
 protected:
  test::TempDir dir_;
  void SetUp() override {
    if (shared_tables().empty()) GTEST_SKIP() << "../shared/data not found";
  }
  // The report folder's JSON, after checking its files and its page against it.
  nlohmann::json read_report(const std::string& folder, bool binary) {
    std::vector<std::string> want = {"report.json", "report.html", "confusion_matrix.png",
                                     "reliability.png"};
    if (binary) want.insert(want.end(), {"roc.png", "precision_recall.png"});
    for (const std::string& f : want) EXPECT_TRUE(fs::is_regular_file(fs::path(folder) / f)) << f;
    EXPECT_EQ(fs::exists(fs::path(folder) / "roc.png"), binary);
    const nlohmann::json j = nlohmann::json::parse(test::read_text(folder + "/report.json"));
    const test::PageCheck page =
        test::check_page_against_json(test::read_text(folder + "/report.html"), j);
    EXPECT_TRUE(page.mismatches.empty()) << page.mismatches.front();
    for (const std::string& p : test::required_pointers(j))
      EXPECT_NE(std::find(page.pointers.begin(), page.pointers.end(), p), page.pointers.end()) << p;
    return j;
  }
};

TEST_F(ReportCli, EvalOnAMultiClassTable) {
  // 344 rows in 4 folds of 86: the pooled out-of-fold accuracy is the mean of the folds'.
  const std::string folder = dir_.file("penguins");
  const auto r = test::run_cli("eval --data " + penguins().path + " " + penguins().flags +
                               " --folds 4 --report " + folder + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["report"]["folder"], folder);
  const nlohmann::json j = read_report(folder, false);
  EXPECT_EQ(j["rows"], out["rows"]);
  EXPECT_EQ(j["classes"], nlohmann::json::parse(R"(["Adelie","Chinstrap","Gentoo"])"));
  EXPECT_NEAR(j["accuracy"].get<double>(), out["accuracy_mean"].get<double>(), 1e-12);
  EXPECT_GT(j["accuracy"].get<double>(), 0.9);
  EXPECT_EQ(j["confusion_matrix"]["counts"].size(), 3u);
  EXPECT_FALSE(j.contains("binary"));
}

TEST_F(ReportCli, EvalOnABinaryTableHasItsCurves) {
  // 1055 rows in 5 folds of 211.
  const std::string folder = dir_.file("qsar");
  const auto r = test::run_cli("eval --data " + qsar().path + " --folds 5 --report " + folder +
                               " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  const nlohmann::json j = read_report(folder, true);
  // The report answers by predict's rule with the calibration fitted on these out-of-fold
  // scores; cross-validation's accuracy is the score order's. They differ only on near-ties
  // where the class frequencies decide (docs/guide/probabilities.md).
  EXPECT_NEAR(j["accuracy"].get<double>(), out["accuracy_mean"].get<double>(), 0.01);
  EXPECT_NEAR(j["balanced_accuracy"].get<double>(), out["balanced_accuracy"].get<double>(), 0.01);
  EXPECT_GT(j["binary"]["roc_auc"].get<double>(), 0.75);
  EXPECT_GT(j["binary"]["average_precision"].get<double>(),
            j["binary"]["prevalence"].get<double>());
  EXPECT_NE(r.out.find("report.html"), std::string::npos);
}

TEST_F(ReportCli, PredictWithLabelsAndTune) {
  const std::string model = dir_.file("m.flynn"), folder = dir_.file("predict");
  ASSERT_EQ(
      test::run_cli("train --data " + qsar().path + " --model " + model + " --quiet").exit_code, 0);
  const auto p = test::run_cli("predict --model " + model + " --data " + qsar().path + " --out " +
                               dir_.file("p.csv") + " --report " + folder + " --json --quiet");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const auto out = nlohmann::json::parse(p.out);
  const nlohmann::json j = read_report(folder, true);
  EXPECT_EQ(j["rows"], out["rows"]);
  EXPECT_DOUBLE_EQ(j["accuracy"].get<double>(), out["accuracy"].get<double>());
  // The CSV keeps its columns: probabilities only with --proba.
  EXPECT_EQ(test::read_text(dir_.file("p.csv")).substr(0, 15), "row,prediction\n");

  const std::string tuned = dir_.file("tune");
  const auto t = test::run_cli("tune --data " + penguins().path + " " + penguins().flags +
                               " --model " + dir_.file("t.flynn") +
                               " --budget 2 --folds 4 --report " + tuned + " --json --quiet");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto tj = nlohmann::json::parse(t.out);
  const nlohmann::json rj = read_report(tuned, false);
  EXPECT_NEAR(rj["accuracy"].get<double>(), tj["accuracy"].get<double>(), 1e-12);  // 4 folds of 86
  EXPECT_DOUBLE_EQ(rj["facts"]["temperature"].get<double>(), tj["temperature"].get<double>());
}

TEST_F(ReportCli, ClearErrorsBeforeAnyWork) {
  // Rows without labels.
  const std::string model = dir_.file("m.flynn");
  ASSERT_EQ(
      test::run_cli("train --data " + qsar().path + " --model " + model + " --quiet").exit_code, 0);
  // The model's 41 columns, no class column.
  std::string header, row;
  for (int c = 1; c <= 41; ++c) {
    header += (c > 1 ? ",V" : "V") + std::to_string(c);
    row += c > 1 ? ",0" : "0";
  }
  const std::string unlabelled = dir_.file("x.csv");
  test::write_text(unlabelled, header + "\n" + row + "\n");
  test::expect_clean_error(test::run_cli("predict --model " + model + " --data " + unlabelled +
                                         " --report " + dir_.file("r") + " --quiet"),
                           "--report needs the rows' classes");
  EXPECT_FALSE(fs::exists(dir_.file("r")));
  // A folder of other files is never written over.
  const std::string mine = dir_.file("mine");
  fs::create_directory(mine);
  test::write_text(mine + "/notes.txt", "keep");
  const auto r = test::run_cli("eval --data " + qsar().path + " --report " + mine + " --quiet");
  test::expect_clean_error(r, "holding other files");
  EXPECT_EQ(test::read_text(mine + "/notes.txt"), "keep");
  EXPECT_FALSE(fs::exists(mine + "/report.json"));
}

// Headless Chromium: the page of each table, as a browser lays it out with its figures.
class ReportBrowser : public ReportCli {
 protected:
  // Opens `html` once (1280 × height): the DOM the browser parsed, and its screenshot
  // (empty when Chromium fails).
  std::pair<std::string, std::string> open_page(const std::string& html, int height) {
    const std::string png = html + ".png";
    const auto r = test::run_shell(
        "timeout 120 chromium --headless --no-sandbox --disable-gpu "
        "--disable-background-networking "
        "--disable-component-update --no-first-run --hide-scrollbars --window-size=1280," +
        std::to_string(height) + " --screenshot=" + png + " --dump-dom file://" + html +
        " 2>/dev/null");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return {r.out, fs::exists(png) ? png : ""};
  }
};

// Pixels of a PNG: how many are not white, and how many are close to `rgb`.
struct PixelCount {
  std::size_t total = 0, inked = 0, near_colour = 0;
};

PixelCount count_pixels(const std::string& png, unsigned rgb) {
  PixelCount c;
  cairo_surface_t* s = cairo_image_surface_create_from_png(png.c_str());
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(s);
    return c;
  }
  const int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
  const int stride = cairo_image_surface_get_stride(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  const auto close = [](unsigned a, unsigned b) { return (a > b ? a - b : b - a) < 40; };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const std::uint32_t p = *reinterpret_cast<const std::uint32_t*>(data + y * stride + 4 * x);
      const unsigned r = p >> 16 & 255, g = p >> 8 & 255, b = p & 255;
      ++c.total;
      c.inked += r < 235 || g < 235 || b < 235;
      c.near_colour += close(r, rgb >> 16 & 255) && close(g, rgb >> 8 & 255) && close(b, rgb & 255);
    }
  cairo_surface_destroy(s);
  return c;
}

TEST_F(ReportBrowser, HeadlessChromiumShowsBothPages) {
  if (test::run_shell("command -v chromium").exit_code != 0)
    GTEST_SKIP() << "chromium not installed";
  for (const auto& [name, table, binary] :
       {std::tuple{"penguins", penguins(), false}, std::tuple{"qsar", qsar(), true}}) {
    const std::string folder = dir_.file(name);
    ASSERT_EQ(test::run_cli("eval --data " + table.path + " " + table.flags +
                            " --folds 4 --report " + folder + " --quiet")
                  .exit_code,
              0);
    // The DOM Chromium parsed holds every number cell of the file.
    const std::string html = folder + "/report.html";
    const auto [dom, shot] = open_page(html, binary ? 4200 : 2600);
    const auto cells = [](const std::string& text) {
      std::size_t n = 0;
      for (std::size_t at = text.find("data-key="); at != std::string::npos;
           at = text.find("data-key=", at + 1))
        ++n;
      return n;
    };
    EXPECT_EQ(cells(dom), cells(test::read_text(html))) << name;
    // The figures are drawn: the screenshot has the reliability bars' blue (#1f77b4) and,
    // for two classes, far down the page, the ROC curve's.
    ASSERT_FALSE(shot.empty());
    const PixelCount c = count_pixels(shot, 0x1f77b4);
    EXPECT_GT(c.inked, c.total / 50) << name;  // text, tables and figures, not a blank page
    EXPECT_GT(c.near_colour, 2000u) << name;   // the figures' blue
    fs::copy_file(shot, dir_.file(std::string(name) + "-page.png"));
    if (const char* keep = std::getenv("FLYNN_REPORT_SHOTS"))
      fs::copy_file(shot, fs::path(keep) / (std::string(name) + ".png"),
                    fs::copy_options::overwrite_existing);
  }
}

}  // namespace
}  // namespace flynn
