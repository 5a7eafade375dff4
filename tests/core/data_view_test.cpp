// FlyNN on caller-held features (DataView): for float and uint8 data, packed or strided,
// at any thread count, the view overloads give the same counts, model file bytes, scores
// and predictions as the Dataset overloads; shape and id errors leave the model unchanged.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/data_view.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/random.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

// Pixel-like rows: integers 0..255 (a fraction of them zero), labels by a hidden rule
// so that the model has something to learn. Rows with many zeros take the sparse path.
struct PixelData {
  std::size_t n = 0, d = 0;
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint32_t> ids;  // class ids into {"c0","c1","c2"}
};

PixelData pixels(std::size_t n, std::size_t d, std::uint64_t seed) {
  PixelData p;
  p.n = n;
  p.d = d;
  p.bytes.resize(n * d);
  p.ids.resize(n);
  SeededRng rng(seed);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t cls = static_cast<std::uint32_t>(rng.uniform_below(3));
    p.ids[r] = cls;
    // Every fourth row is almost all zeros (sparse path); the others are dense pixels.
    const bool sparse = r % 4 == 0;
    for (std::size_t j = 0; j < d; ++j) {
      std::uint64_t v = rng.uniform_below(256);
      if (sparse) {
        v = j % 3 == cls && rng.uniform_below(60) == 0 ? v : 0;
      } else if (j % 3 == cls) {
        v = std::min<std::uint64_t>(255, v + 60);
      }
      p.bytes[r * d + j] = static_cast<std::uint8_t>(v);
    }
  }
  return p;
}

// The same numbers as a Dataset of floats, labelled by name.
Dataset as_dataset(const PixelData& p, const LabelSet& labels) {
  Dataset data;
  data.source = "<pixels>";
  data.n_rows = p.n;
  data.n_features = p.d;
  data.features.assign(p.bytes.begin(), p.bytes.end());
  data.has_labels = true;
  data.labels = p.ids;
  data.classes = labels;
  return data;
}

// s = 120 on the pixel data: large enough for the sparse integer path to pay off on the
// sparse rows, small enough (120 · 255 ≤ 32767) for the uint8 kernel on the dense ones.
FlyConfig config_for(std::uint32_t d, Preprocess preprocess, double gamma = 0.8,
                     std::uint32_t s = 120) {
  HyperParams hp;
  hp.m = 512;
  hp.s = s;
  hp.rho = 16;
  hp.gamma = gamma;
  hp.preprocess = preprocess;
  hp.variant = Variant{};  // the paper's method: these tests pin its exact kernels
  return hp.resolve(d);
}

const LabelSet kLabels({"c0", "c1", "c2"});

// Fits one model per form of the same data and checks they are identical in every way a
// user can observe: counts, model file bytes, scores, probabilities and predictions.
void expect_view_matches_dataset(const FlyConfig& config, const Dataset& data, const DataView& view,
                                 const std::vector<std::uint32_t>& ids, int threads) {
  FlyNN from_dataset(config, kLabels, threads);
  from_dataset.fit(data);
  FlyNN from_view(config, kLabels, threads);
  from_view.fit(view, ids);
  ASSERT_EQ(from_view.counts(), from_dataset.counts());
  EXPECT_EQ(io::serialize_model(from_view), io::serialize_model(from_dataset));
  PredictOptions options;
  options.threads = threads;
  EXPECT_EQ(from_view.scores(view, options), from_dataset.scores(data, options));
  EXPECT_EQ(from_view.predict_proba(view, options), from_dataset.predict_proba(data, options));
  EXPECT_EQ(from_view.predict(view, options), from_dataset.predict(data, options));
}

TEST(DataView, Uint8ViewEqualsDatasetAtAnyThreadCount) {
  // 2100 rows: three 1024-row tasks, so several threads really share the work.
  const PixelData p = pixels(2100, 200, 7);
  const Dataset data = as_dataset(p, kLabels);
  const DataView view(p.bytes.data(), p.n, p.d);
  for (Preprocess pre : {Preprocess::None, Preprocess::Normalize, Preprocess::Densify}) {
    const FlyConfig config = config_for(200, pre);
    for (int threads : {1, 2, 3, 0}) {
      SCOPED_TRACE(std::string(preprocess_name(pre)) + " threads " + std::to_string(threads));
      expect_view_matches_dataset(config, data, view, p.ids, threads);
    }
  }
}

TEST(DataView, Uint8RowsTakeTheExactIntegerKernels) {
  // The claim "same kernel as a Dataset's pixel rows" rests on path selection seeing the
  // same numbers; check that these rows do reach the uint8 and sparse integer kernels.
  const PixelData p = pixels(8, 200, 7);
  const Dataset data = as_dataset(p, kLabels);
  const FlyHasher hasher(config_for(200, Preprocess::Normalize));
  EXPECT_STREQ(hasher.row_path(data.row(0)), "sparse-int");
  EXPECT_STREQ(hasher.row_path(data.row(1)), "uint8");
}

TEST(DataView, FloatViewPackedAndStridedEqualsDataset) {
  const Dataset data = test::blobs(3, 700, 17, 11);
  std::vector<std::uint32_t> ids = data.labels;  // blobs' classes are c0,c1,c2 = kLabels
  ASSERT_EQ(data.classes, kLabels);
  // The same rows with 5 padding floats after each (as in an array slice).
  const std::size_t stride = data.n_features + 5;
  std::vector<float> padded(data.n_rows * stride, -1e30f);
  for (std::size_t r = 0; r < data.n_rows; ++r)
    std::copy_n(data.row(r), data.n_features, padded.begin() + r * stride);
  const DataView packed(std::span<const float>(data.features), data.n_features);
  const DataView strided(padded.data(), data.n_rows, data.n_features, stride);
  for (Preprocess pre : {Preprocess::None, Preprocess::Normalize, Preprocess::Densify}) {
    const FlyConfig config = config_for(17, pre, 0.5, 12);
    for (int threads : {1, 2, 4}) {
      SCOPED_TRACE(std::string(preprocess_name(pre)) + " threads " + std::to_string(threads));
      expect_view_matches_dataset(config, data, packed, ids, threads);
      expect_view_matches_dataset(config, data, strided, ids, threads);
    }
  }
}

TEST(DataView, RealDigitsAsBytes) {
  const std::string path = test::digits_csv();
  if (path.empty()) GTEST_SKIP() << "scikit-learn's digits.csv.gz is not installed";
  Dataset data = io::load_dataset(path);
  std::vector<std::uint8_t> bytes(data.features.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    ASSERT_EQ(data.features[i], static_cast<float>(static_cast<std::uint8_t>(data.features[i])));
    bytes[i] = static_cast<std::uint8_t>(data.features[i]);
  }
  const DataView view(bytes.data(), data.n_rows, data.n_features);
  HyperParams paper;
  paper.variant = Variant{};  // merge/forget of parts needs shared statistics otherwise
  const FlyConfig config = paper.resolve(static_cast<std::uint32_t>(data.n_features));
  FlyNN a(config, data.classes, 2), b(config, data.classes, 2);
  a.fit(data);
  b.fit(view, data.labels);
  EXPECT_EQ(io::serialize_model(a), io::serialize_model(b));
  EXPECT_EQ(a.predict(data), b.predict(view));
}

TEST(DataView, AlgebraOnViewsMatchesDataset) {
  const PixelData p = pixels(900, 200, 3);
  const DataView all(p.bytes.data(), p.n, p.d);
  const DataView first = all.rows(0, 500), rest = all.rows(500, 400);
  const std::span<const std::uint32_t> ids(p.ids);
  const FlyConfig config = config_for(200, Preprocess::Normalize);
  FlyNN whole(config, kLabels, 2);
  whole.fit(all, ids);
  FlyNN parts(config, kLabels, 3);
  parts.fit(first, ids.subspan(0, 500));
  parts.partial_fit(rest, ids.subspan(500));
  EXPECT_EQ(parts.counts(), whole.counts());
  FlyNN forgotten(config, kLabels, 1);
  forgotten.fit(all, ids);
  forgotten.forget(rest, ids.subspan(500));
  FlyNN only_first(config, kLabels, 1);
  only_first.fit(first, ids.subspan(0, 500));
  EXPECT_EQ(forgotten.counts(), only_first.counts());
}

TEST(DataView, ShapeAndIdErrorsLeaveTheModelUnchanged) {
  const PixelData p = pixels(50, 200, 5);
  const FlyConfig config = config_for(200, Preprocess::Normalize);
  FlyNN model(config, kLabels, 1);
  model.fit(DataView(p.bytes.data(), p.n, p.d), p.ids);
  const ClassCounts before = model.counts();

  const std::vector<std::uint8_t> narrow(10 * 199, 1);
  EXPECT_THROW(
      {
        try {
          model.partial_fit(DataView(narrow.data(), 10, 199), std::vector<std::uint32_t>(10, 0));
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "199 features per row, but the model expects 200");
          throw;
        }
      },
      Error);
  EXPECT_THROW(model.predict(DataView(narrow.data(), 10, 199)), Error);

  const DataView view(p.bytes.data(), p.n, p.d);
  std::vector<std::uint32_t> short_ids(p.ids.begin(), p.ids.end() - 1);
  EXPECT_THROW(model.partial_fit(view, short_ids), Error);
  std::vector<std::uint32_t> bad_ids = p.ids;
  bad_ids[7] = 3;
  try {
    model.partial_fit(view, bad_ids);
    ADD_FAILURE() << "class id 3 accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "row 7: class id 3 is not below the model's 3 classes");
  }
  // Forgetting rows the model never learned (as another class) fails as a whole.
  std::vector<std::uint32_t> wrong_class = p.ids;
  for (auto& c : wrong_class) c = (c + 1) % 3;
  EXPECT_THROW(model.forget(view, wrong_class), Error);
  EXPECT_EQ(model.counts(), before);
}

TEST(DataView, ConstructionErrors) {
  const std::vector<float> values(12, 1.0f);
  EXPECT_THROW(DataView(std::span<const float>(values), 5), Error);
  EXPECT_THROW(DataView(std::span<const float>(values), 0), Error);
  EXPECT_THROW(DataView(values.data(), 2, 6, 4), Error);
  EXPECT_THROW(DataView(static_cast<const float*>(nullptr), 2, 6), Error);
  const DataView v(std::span<const float>(values), 4);
  EXPECT_EQ(v.n_rows(), 3u);
  EXPECT_EQ(v.rows(1, 2).floats(), values.data() + 4);
  EXPECT_EQ(v.rows(1, 2).bytes(), nullptr);
  EXPECT_THROW(v.rows(2, 2), Error);
  EXPECT_TRUE(DataView().empty());
}

}  // namespace
}  // namespace flynn
