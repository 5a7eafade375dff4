// Calibrated probabilities fitted at training time (flynn/calibration.hpp): one decision
// rule (predict is the first argmax of predict_proba on every row, every variant, class
// weighting, scoring and pairs setting, every predict path), exact leave-one-out scores,
// the fit's determinism and partition invariance, its rule, and the model file's record.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "flynn/calibration.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/predict_file.hpp"
#include "flynn/io/row_stream.hpp"
#include "flynn/io/train_file.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::blobs;

// Rows of first-argmax of n × L probabilities.
std::vector<std::uint32_t> first_argmax(const std::vector<double>& p, std::size_t L) {
  std::vector<std::uint32_t> out(p.size() / L);
  for (std::size_t r = 0; r < out.size(); ++r) out[r] = argmax_class(p.data() + r * L, L);
  return out;
}

// Imbalanced, overlapping classes (so scores tie and priors matter): 3 classes of 120, 40
// and 15 rows in 6 dimensions, rounded to one decimal so that rows repeat.
Dataset imbalanced_rows(std::uint64_t seed) {
  const std::size_t sizes[3] = {120, 40, 15};
  std::vector<std::vector<float>> rows;
  std::vector<std::string> labels;
  SeededRng rng(seed);
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < sizes[c]; ++i) {
      std::vector<float> row(6);
      for (std::size_t j = 0; j < 6; ++j)
        row[j] = static_cast<float>(std::round((rng.uniform01() * 2.0 + (j == c ? 0.8 : 0.0)) * 10.0) / 10.0);
      rows.push_back(row);
      labels.push_back(fmt::format("k{}", c));
    }
  return test::make_dataset(rows, labels);
}

struct Setting {
  const char* name;
  HyperParams hyper;
};

std::vector<Setting> settings() {
  std::vector<Setting> out;
  for (const char* v : {"paper", "sign", "z", "zsign", "zsign-q", "thermo", "thermo-sign", "anchor", "anchor+paper",
                        "zsign-q+paper", "zsign+paper"}) {
    HyperParams h;
    h.variant = parse_variant(v);
    h.m = 512;
    out.push_back({v, h});
  }
  HyperParams binary;  // γ = 0, absolute scores: the bit-packed scorer
  binary.variant = Variant{};
  binary.gamma = 0.0;
  binary.m = 512;
  out.push_back({"paper, gamma 0", binary});
  HyperParams relative = binary;
  relative.gamma = 0.8;
  relative.filter_scoring = FilterScoring::Relative;
  out.push_back({"paper, relative", relative});
  HyperParams balanced;
  balanced.m = 512;
  balanced.class_weight = ClassWeight::parse("balanced");
  out.push_back({"balanced weights", balanced});
  HyperParams given = balanced;
  given.class_weight = ClassWeight::parse("k0=0.5,k2=3");
  out.push_back({"given weights", given});
  HyperParams pairs;
  pairs.m = 512;
  pairs.pairs = 2;
  out.push_back({"pairs", pairs});
  HyperParams pairs_absolute = pairs;
  pairs_absolute.filter_scoring = FilterScoring::Absolute;
  pairs_absolute.class_weight = ClassWeight::parse("balanced");
  out.push_back({"pairs, absolute, balanced", pairs_absolute});
  return out;
}

TEST(Calibration, PredictIsTheFirstArgmaxOfPredictProbaForEverySettingAndPath) {
  const Dataset train = imbalanced_rows(1), test = imbalanced_rows(2);
  const std::size_t L = train.classes.size();
  std::size_t rows_checked = 0;
  for (const Setting& s : settings()) {
    SCOPED_TRACE(s.name);
    FlyNN model(s.hyper.resolve(6, L), train.classes, 2);
    model.fit(train);
    EXPECT_EQ(model.calibration().source, CalibrationSource::LeaveOneOut);
    // Also under a calibration whose prior orders near-ties, and under the default.
    for (const Calibration& c : {model.calibration(), Calibration{0.3, 0.3, CalibrationSource::Given, 0}, Calibration{}}) {
      model.set_calibration(c);
      for (const Dataset* d : {&train, &test}) {
        const std::vector<double> p = model.predict_proba(*d);
        EXPECT_EQ(model.predict(*d), first_argmax(p, L));
        const DataView view(*d);
        EXPECT_EQ(model.predict(view), first_argmax(model.predict_proba(view), L));
        EXPECT_EQ(model.predict(view), model.predict(*d));
        // The logits order the classes as the probabilities do.
        EXPECT_EQ(first_argmax(model.logits(view), L), model.predict(view));
        rows_checked += d->n_rows;
      }
    }
  }
  EXPECT_GT(rows_checked, 0u);
}

TEST(Calibration, ThePriorsShareDecidesTiesAndTheDecisionFollowsIt) {
  // Control: the property above is not vacuous. With a prior weight, rows whose scores tie
  // (or nearly) go to the frequent class, where the score order takes the first class; the
  // prediction follows the probabilities there.
  const Dataset train = imbalanced_rows(1);
  HyperParams h;  // relative scores: the large class k0 is not nearest to every row
  h.variant = Variant{};
  h.filter_scoring = FilterScoring::Relative;
  h.m = 512;
  FlyNN model(h.resolve(6, 3), train.classes, 1);
  model.fit(train);
  // A flat softmax (t = 1) with half the weight on the priors: near-ties go to k0.
  model.set_calibration(Calibration{1.0, 0.5, CalibrationSource::Given, 0});
  const Dataset test = imbalanced_rows(7);
  const std::vector<double> s = model.scores(test);
  const std::vector<std::uint32_t> predicted = model.predict(test);
  std::size_t differ = 0;
  for (std::size_t r = 0; r < test.n_rows; ++r) differ += predicted[r] != argmin_class(s.data() + r * 3, 3);
  EXPECT_GT(differ, 0u) << "the prior weight should order some near-ties differently from the score order";
  // With prior weight 0 the decisions are the score order's (ties to the first class).
  model.set_calibration(Calibration{0.3, 0.0, CalibrationSource::Given, 0});
  const std::vector<std::uint32_t> plain = model.predict(test);
  for (std::size_t r = 0; r < test.n_rows; ++r) EXPECT_EQ(plain[r], argmin_class(s.data() + r * 3, 3)) << r;
}

TEST(Calibration, FilePredictionsFollowTheProbabilitiesAndPrintThemExactly) {
  const Dataset train = imbalanced_rows(3);
  FlyNN model(HyperParams{}.resolve(6, 3), train.classes, 2);
  model.fit(train);
  model.set_calibration(Calibration{0.2, 0.2, CalibrationSource::Given, 0});
  test::TempDir dir;
  const Dataset rows = imbalanced_rows(4);
  std::string csv;
  for (std::size_t r = 0; r < rows.n_rows; ++r) {
    for (std::size_t j = 0; j < rows.n_features; ++j) csv += fmt::format("{},", rows.row(r)[j]);
    csv += rows.classes.name(rows.labels[r]) + "\n";
  }
  test::write_text(dir.file("rows.csv"), csv);
  io::RowStream stream(dir.file("rows.csv"), io::model_load_options({}, model), io::ChunkLimits{.max_rows = 7});
  io::FilePredictionOptions o;
  o.proba = true;
  std::size_t seen = 0;
  std::ostringstream printed;
  io::predict_file(stream, model, o, [&](const io::PredictedChunk& chunk) {
    EXPECT_EQ(chunk.classes, first_argmax(chunk.proba, 3));
    io::write_predictions_csv(printed, model, chunk);
    seen += chunk.classes.size();
  });
  EXPECT_EQ(seen, rows.n_rows);
  // Every printed line: the prediction is the first largest of the printed probabilities.
  std::istringstream lines(printed.str());
  std::string line;
  std::size_t checked = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 5u);
    std::vector<double> p = {std::stod(f[2]), std::stod(f[3]), std::stod(f[4])};
    EXPECT_EQ(f[1], model.labels().name(argmax_class(p.data(), 3))) << line;
    ++checked;
  }
  EXPECT_EQ(checked, rows.n_rows);
}

// The model trained without row r, for the leave-one-out check.
FlyNN without_row(const FlyConfig& c, const Dataset& data, std::size_t r, const FeatureStats& stats) {
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < data.n_rows; ++i)
    if (i != r) keep.push_back(i);
  FlyNN m(c, data.classes, 1);
  m.set_feature_stats(stats);
  m.partial_fit(data.subset(keep));
  return m;
}

TEST(Calibration, LeaveOneOutScoresEqualTheModelTrainedWithoutTheRow) {
  const Dataset data = imbalanced_rows(5);
  for (const Setting& s : settings()) {
    if (s.hyper.class_weight && s.hyper.class_weight->mode == ClassWeight::Mode::Balanced)
      continue;  // "balanced" weights follow the rows, which the leave-one-out scores keep
    SCOPED_TRACE(s.name);
    const FlyConfig c = s.hyper.resolve(6, 3);
    FlyNN model(c, data.classes, 1);
    model.fit(data);
    std::vector<std::uint32_t> ids = data.row_class_ids_in(data.classes);
    const std::vector<double> loo = model.leave_one_out_scores(DataView(data), ids);
    for (std::size_t r : {std::size_t{0}, std::size_t{57}, std::size_t{130}, std::size_t{174}}) {
      const FlyNN other = without_row(c, data, r, model.feature_stats());
      const std::vector<double> truth = other.scores(data.subset({r}));
      for (std::size_t l = 0; l < 3; ++l)
        EXPECT_NEAR(loo[r * 3 + l], truth[l], 1e-9 * std::max(1.0, std::abs(truth[l]))) << "row " << r << " class " << l;
    }
  }
}

TEST(Calibration, TheFitIsTheSameForAnyThreadCountViewAndChunking) {
  const Dataset data = blobs(4, 150, 12, 11, 1.5);
  HyperParams h;
  h.m = 2048;
  const FlyConfig c = h.resolve(12, 4);
  std::string first;
  Calibration fitted;
  for (int threads : {1, 2, 3}) {
    FlyNN m(c, data.classes, threads);
    m.fit(data);
    if (first.empty()) {
      first = io::serialize_model(m);
      fitted = m.calibration();
    }
    EXPECT_EQ(io::serialize_model(m), first) << threads << " threads";
  }
  EXPECT_EQ(fitted.source, CalibrationSource::LeaveOneOut);
  EXPECT_EQ(fitted.rows, data.n_rows);
  // The same rows through a view of the caller's floats.
  FlyNN v(c, data.classes, 2);
  v.fit(DataView(data), data.row_class_ids_in(data.classes));
  EXPECT_EQ(v.calibration(), fitted);
  // Learned chunk by chunk with a sample, then calibrated: fit()'s model.
  FlyNN chunked(c, data.classes, 2);
  chunked.set_feature_stats(v.feature_stats());
  CalibrationSample sample(c, data.n_rows);
  for (std::size_t first_row = 0; first_row < data.n_rows; first_row += 97) {
    std::vector<std::size_t> part;
    for (std::size_t r = first_row; r < std::min(data.n_rows, first_row + 97); ++r) part.push_back(r);
    chunked.partial_fit(data.subset(part), {}, &sample);
  }
  chunked.calibrate(sample);
  EXPECT_EQ(io::serialize_model(chunked), first);
}

TEST(Calibration, ASampleOfManyRowsIsBoundedAndTheSameHoweverTheRowsArePartitioned) {
  const Dataset data = blobs(2, 13000, 4, 21, 2.0);  // 26000 rows: more than kCalibrationRows
  HyperParams h;
  h.variant = Variant{};
  h.m = 1024;
  const FlyConfig c = h.resolve(4, 2);
  FlyNN model(c, data.classes, 2);
  CalibrationSample whole(c, data.n_rows);
  model.partial_fit(data, {}, &whole);
  EXPECT_GT(whole.rows(), kCalibrationRows * 9 / 10);
  EXPECT_LT(whole.rows(), kCalibrationRows * 11 / 10);
  // Three parts, each sampled with the total's rate, give the same rows: the same sums.
  CalibrationSample merged = whole.emptied();
  for (std::size_t part = 0; part < 3; ++part) {
    std::vector<std::size_t> rows;
    for (std::size_t r = part; r < data.n_rows; r += 3) rows.push_back(r);
    CalibrationSample mine(c, data.n_rows);
    model.count(data.subset(rows), {}, &mine);
    merged.merge(mine);
  }
  EXPECT_EQ(merged.rows(), whole.rows());
  EXPECT_EQ(model.calibration_loss(merged).totals(), model.calibration_loss(whole).totals());
  // Identical rows are held once with their multiplicity.
  CalibrationSample dup(c, 3);
  const std::uint32_t codes[4] = {1, 2, 3, 4};
  std::vector<std::uint32_t> wide(c.codes_per_row(), 0);
  std::copy(codes, codes + 4, wide.begin());
  for (int i = 0; i < 5; ++i) dup.add(0, wide.data());
  EXPECT_EQ(dup.size(), 1u);
  EXPECT_EQ(dup.rows(), 5u);
}

TEST(Calibration, TheRuleTakesTheLeastLossThatKeepsTheScoreOrdersAccuracy) {
  const std::vector<Calibration>& grid = calibration_grid();
  const std::size_t G = grid.size();
  std::vector<std::uint64_t> totals(calibration_totals_size(), 0);
  for (std::size_t k = 0; k < G; ++k) {
    totals[k] = 1000 + k;   // the first candidate has the least loss …
    totals[G + k] = 50;     // … but every candidate decides worse than the score order
  }
  totals[2 * G] = 60;
  const Calibration c = choose_calibration(totals, 100);
  EXPECT_EQ(c.prior_weight, 0.0) << "only prior weight 0 (the score order's decisions) qualifies";
  EXPECT_EQ(c.temperature, grid[0].temperature);
  EXPECT_EQ(c.source, CalibrationSource::LeaveOneOut);
  EXPECT_EQ(c.rows, 100u);
  // A candidate with a prior weight that keeps the accuracy and has less loss wins.
  std::size_t k = 0;
  while (grid[k].prior_weight == 0.0) ++k;
  totals[k] = 10;
  totals[G + k] = 60;
  EXPECT_EQ(choose_calibration(totals, 100), (Calibration{grid[k].temperature, grid[k].prior_weight,
                                                          CalibrationSource::LeaveOneOut, 100}));
  // Control: without the accuracy it does not.
  totals[G + k] = 59;
  EXPECT_EQ(choose_calibration(totals, 100).prior_weight, 0.0);
  EXPECT_EQ(choose_calibration(totals, 0), Calibration{});
  totals.pop_back();
  EXPECT_THROW(choose_calibration(totals, 100), Error);
  // The grid is made by multiplication: the same bits on every machine.
  EXPECT_EQ(grid.front().temperature, 1e-3);
  EXPECT_NEAR(grid.back().temperature, 10.0, 1e-9);
}

TEST(Calibration, TheFittedProbabilitiesBeatTheClassFrequenciesOnHeldOutRows) {
  // The fit on leave-one-out scores transfers: on rows the model never saw, its log-loss
  // is below always answering the training class frequencies, and below the default's.
  // One draw of blobs (the seed fixes the centres), split into training and held-out rows.
  const Dataset all = blobs(3, 300, 8, 31, 2.5);
  std::vector<std::size_t> first, rest;
  for (std::size_t r = 0; r < all.n_rows; ++r) (r < 600 ? first : rest).push_back(r);
  const Dataset train = all.subset(first), test = all.subset(rest);
  FlyNN model(HyperParams{}.resolve(8, 3), train.classes, 2);
  model.fit(train);
  const auto log_loss = [&](const FlyNN& m) {
    const std::vector<double> p = m.predict_proba(test);
    const std::vector<std::uint32_t> y = test.row_class_ids_in(m.labels());
    double total = 0.0;
    for (std::size_t r = 0; r < test.n_rows; ++r) total -= std::log(std::max(p[r * 3 + y[r]], 1e-15));
    return total / static_cast<double>(test.n_rows);
  };
  const double fitted = log_loss(model);
  EXPECT_LT(fitted, std::log(3.0));
  FlyNN plain(model.config(), model.labels(), 2);
  plain.set_feature_stats(model.feature_stats());
  plain.set_counts(model.counts());
  EXPECT_EQ(plain.calibration(), Calibration{});
  EXPECT_LE(fitted, log_loss(plain) + 1e-12);
}

TEST(Calibration, TheModelFileKeepsTheCalibrationAndTheMissingPolicy) {
  const Dataset data = imbalanced_rows(9);
  FlyNN model(HyperParams{}.resolve(6, 3), data.classes, 1);
  model.fit(data);
  model.set_missing_policy(MissingPolicy::Zero);
  const std::string bytes = io::serialize_model(model);
  const FlyNN back = io::deserialize_model(bytes, "mem", 1);
  EXPECT_EQ(back.calibration(), model.calibration());
  EXPECT_EQ(back.missing_policy(), std::optional<MissingPolicy>(MissingPolicy::Zero));
  EXPECT_EQ(io::serialize_model(back), bytes);
  EXPECT_EQ(io::parse_model(bytes, "mem").format_version, io::kModelFormatVersion);
  // A paper model made from counts alone stores nothing new: version 1, as before.
  HyperParams paper;
  paper.variant = Variant{};
  FlyNN counted(paper.resolve(6, 3), data.classes, 1);
  counted.set_counts(counted.count(data));
  EXPECT_EQ(io::parse_model(io::serialize_model(counted), "mem").format_version, io::kPaperModelFormatVersion);
}

TEST(Calibration, InvalidCalibrationsAreRefused) {
  FlyNN model(HyperParams{}.resolve(6, 3), LabelSet({"a", "b", "c"}), 1);
  EXPECT_THROW(model.set_calibration(Calibration{0.0, 0.0, CalibrationSource::Given, 0}), Error);
  EXPECT_THROW(model.set_calibration(Calibration{0.1, 1.0, CalibrationSource::Given, 0}), Error);
  EXPECT_THROW(model.set_calibration(Calibration{0.1, -0.1, CalibrationSource::Given, 0}), Error);
  EXPECT_THROW(model.set_calibration(Calibration{std::nan(""), 0.1, CalibrationSource::Given, 0}), Error);
  EXPECT_EQ(model.calibration(), Calibration{});
}

}  // namespace
}  // namespace flynn
