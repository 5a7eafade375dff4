#include "test_support.hpp"

#include "flynn/classifier.hpp"
#include "flynn/io/model_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "flynn/random.hpp"

namespace flynn::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() / ("flynn-test-" + std::to_string(::getpid()) + "-" +
                                              std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(p, ec)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("cannot write " + path);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int free_port() {
  const auto r = run_shell(
      "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])'");
  return std::stoi(r.out);
}

CommandResult run_shell(const std::string& command_line) {
  TempDir tmp;
  const std::string out = tmp.file("stdout"), err = tmp.file("stderr");
  const std::string full = "(" + command_line + ") >" + out + " 2>" + err;
  int status = std::system(full.c_str());
  CommandResult r;
  if (status == -1) {
    r.exit_code = -1;
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.exit_code = 128 + WTERMSIG(status);
  }
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

std::string source_dir() { return FLYNN_SOURCE_DIR; }

std::string openml_dir() {
  if (const char* env = std::getenv("FLYNN_OPENML_DIR")) return env;
  // The shared data sits beside the checkout; a clone elsewhere (CI's /tmp clone) falls
  // back to the workplace's fixed location.
  for (const fs::path& p : {fs::path(FLYNN_SOURCE_DIR) / ".." / "shared" / "data" / "openml",
                            fs::path("/work/shared/data/openml")}) {
    if (fs::exists(p / "MANIFEST.tsv")) return fs::canonical(p).string();
  }
  return "";
}

std::string digits_csv() {
  const fs::path p("/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz");
  return fs::exists(p) ? p.string() : "";
}

std::string fashion_mnist_dir() {
  const fs::path p("/usr/share/datasets/fashion-mnist");
  return fs::exists(p / "t10k-images-idx3-ubyte.gz") ? p.string() : "";
}

Dataset make_dataset(const std::vector<std::vector<float>>& rows,
                     const std::vector<std::string>& labels) {
  Dataset d;
  d.source = "<memory>";
  d.n_rows = rows.size();
  d.n_features = rows.empty() ? 0 : rows[0].size();
  for (const auto& r : rows) {
    if (r.size() != d.n_features) throw std::runtime_error("ragged test rows");
    d.features.insert(d.features.end(), r.begin(), r.end());
  }
  d.has_labels = !labels.empty();
  if (d.has_labels) {
    d.classes = LabelSet::sorted(labels);
    for (const auto& l : labels) d.labels.push_back(static_cast<std::uint32_t>(d.classes.find(l)));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) d.row_origin.push_back(i + 1);
  return d;
}

std::vector<float> normal_rows(std::size_t n, std::size_t d, std::uint64_t seed) {
  SeededRng r(seed);
  std::vector<float> x(n * d);
  for (auto& v : x) v = static_cast<float>(r.normal());
  return x;
}

Dataset blobs(std::size_t classes, std::size_t per_class, std::size_t d, std::uint64_t seed,
              double spread) {
  SeededRng rng(seed);
  std::vector<std::vector<float>> centres(classes, std::vector<float>(d));
  for (auto& c : centres)
    for (auto& v : c) v = static_cast<float>(rng.normal());
  std::vector<std::vector<float>> rows;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < per_class; ++i) {
    for (std::size_t c = 0; c < classes; ++c) {
      std::vector<float> r(d);
      for (std::size_t j = 0; j < d; ++j)
        r[j] = centres[c][j] + static_cast<float>(spread * rng.normal());
      rows.push_back(r);
      std::string label = "c";  // (not "c" + …: GCC 12 warns falsely, -Wrestrict)
      label += std::to_string(c);
      labels.push_back(label);
    }
  }
  return make_dataset(rows, labels);
}

void expect_exact_merge_and_forget(const FlyConfig& c, const Dataset& data) {
  std::vector<std::size_t> a, b;
  for (std::size_t r = 0; r < data.n_rows; ++r) (r % 3 == 1 ? b : a).push_back(r);
  const Dataset da = data.subset(a), db = data.subset(b);
  FlyNN whole(c, data.classes, 2);
  whole.fit(data);
  // Parts trained with the statistics of all rows, then merged: the whole model.
  FlyNN pa(c, data.classes, 1), pb(c, data.classes, 2);
  pa.set_feature_stats(whole.feature_stats());
  pb.set_feature_stats(whole.feature_stats());
  pa.partial_fit(da);
  pb.partial_fit(db);
  pa.merge(pb);
  // The counts merge exactly; the calibration is fitted by fit() on the rows it sees, which
  // parts cannot do for the whole, so it is compared apart (calibration_test.cpp).
  pa.set_calibration(whole.calibration());
  EXPECT_EQ(io::serialize_model(pa), io::serialize_model(whole));
  // forget(B) equals training on A with the (fixed) statistics of the first fit.
  FlyNN forgot(c, data.classes, 2);
  forgot.fit(data);
  forgot.forget(db);
  FlyNN only_a(c, data.classes, 1);
  only_a.set_feature_stats(whole.feature_stats());
  only_a.partial_fit(da);
  EXPECT_EQ(forgot.feature_stats(), only_a.feature_stats());
  EXPECT_EQ(forgot.counts().rows_per_class(), only_a.counts().rows_per_class());
  EXPECT_EQ(forgot.counts(), only_a.counts());
  only_a.set_calibration(forgot.calibration());  // forget keeps the calibration of the fit
  EXPECT_EQ(io::serialize_model(forgot), io::serialize_model(only_a));
}

}  // namespace flynn::test
