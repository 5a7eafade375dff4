// The memory guard runs where memory is allocated (hasher construction, training,
// prediction), not when a model is constructed or loaded: a model made on a larger
// machine still loads, and says what it needs when asked to work.
#include <gtest/gtest.h>

#include <string>

#include "flynn/classifier.hpp"
#include "flynn/detail/memory.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

// Pretends this machine has `bytes` of memory for the lifetime of the object.
class FakeMemory {
 public:
  explicit FakeMemory(std::uint64_t bytes) { detail::override_physical_memory_bytes(bytes); }
  ~FakeMemory() { detail::override_physical_memory_bytes(0); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

FlyConfig wide_config() {
  FlyConfig c;
  c.input_dim = 20;
  c.m = 200000;  // with 10 classes: ~48 MB to train and predict, 8 MB of counts
  c.s = 10;
  c.rho = 8;
  c.gamma = 0.5;
  c.seed = 5489;
  return c;
}

TEST(MemoryGuard, ModelsConstructAndLoadButWorkOnlyWhenTheyFit) {
  const Dataset data = test::blobs(10, 5, 20, 1);
  test::TempDir dir;
  const std::string path = dir.file("wide.flynn");
  {
    FlyNN trained(wide_config(), data.classes, 1);
    trained.fit(data);
    io::save_model(trained, path);
  }
  FakeMemory small(64ULL << 20);  // 64 MiB: half of it is less than the model needs
  EXPECT_EQ(model_memory_bytes(wide_config(), 10) > (32ULL << 20), true);
  FlyNN fresh(wide_config(), data.classes, 1);  // constructs
  FlyNN loaded = io::load_model(path, 1);      // loads
  EXPECT_EQ(loaded.counts().total_rows(), 50u);
  const std::string train_error = error_of([&] { fresh.fit(data); });
  EXPECT_NE(train_error.find("m = 200000 with 10 classes needs about"), std::string::npos)
      << train_error;
  EXPECT_NE(error_of([&] { loaded.predict(data); }).find("GiB"), std::string::npos);
  EXPECT_NE(error_of([&] { wide_config().validate(10); }).find("GiB"), std::string::npos);
  EXPECT_EQ(error_of([&] { wide_config().validate(); }), "");
}

TEST(MemoryGuard, HasherConstructionChecksTheLiftingMatrix) {
  FakeMemory small(64ULL << 20);
  FlyConfig c = wide_config();
  c.m = 10000000;  // 10^7 units × s = 10 × 4 bytes = 400 MB of lifting matrix
  const std::string e = error_of([&] { FlyHasher h(c, 1); });
  EXPECT_NE(e.find("m = 10000000, s = 10 (the lifting matrix) needs about"), std::string::npos) << e;
}

}  // namespace
}  // namespace flynn
