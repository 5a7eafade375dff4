// Trains FlyNN on rows already in memory (no Dataset, no file): two noisy clusters per
// class in 8 dimensions, read in place through flynn::DataView. Shows fit, predict_proba,
// exact unlearning with forget and each row's FlyHash.
//
//   flynn_in_memory_example
#include <cstdint>
#include <cstdio>
#include <exception>
#include <span>
#include <vector>

#include <flynn/flynn.hpp>

int main() {
  try {
    constexpr std::size_t n = 400, d = 8;
    std::vector<float> rows(n * d);      // n × d, row-major
    std::vector<std::uint32_t> ids(n);   // class ids < labels.size()
    flynn::SeededRng rng(7);
    for (std::size_t i = 0; i < n; ++i) {
      ids[i] = static_cast<std::uint32_t>(i % 2);
      for (std::size_t j = 0; j < d; ++j)
        rows[i * d + j] = static_cast<float>((ids[i] == 0 ? (j < d / 2) : (j >= d / 2)) + 0.3 * rng.uniform01());
    }

    const flynn::FlyConfig config = flynn::HyperParams{}.resolve(d, 2);
    flynn::FlyNN model(config, flynn::LabelSet({"cat", "dog"}));
    model.fit(flynn::DataView(std::span<const float>(rows), d), ids);   // one pass of counting

    const flynn::DataView all(rows.data(), n, d);
    const std::vector<double> p = model.predict_proba(all);             // n × L
    std::printf("P(dog | row 1) = %.3f\n", p[1 * 2 + 1]);
    std::printf("accuracy %.3f\n", flynn::accuracy(ids, model.predict(all)));

    const std::vector<std::uint32_t> h = model.hash(flynn::DataView(rows.data(), 1, d));  // ρ winners
    std::printf("row 0 hashes to %zu of %u units\n", h.size(), config.m);

    model.forget(flynn::DataView(rows.data(), 1, d), std::span(ids).first(1));  // exact unlearning
    std::printf("rows per class after forgetting row 0: %llu, %llu\n",
                static_cast<unsigned long long>(model.counts().rows_per_class()[0]),
                static_cast<unsigned long long>(model.counts().rows_per_class()[1]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
