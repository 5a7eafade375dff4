// Trains FlyNN on four fifths of a labelled data file (CSV, ARFF, IDX or LIBSVM), predicts
// the remaining fifth, prints the accuracy, and round-trips the model through a file.
//
//   flynn_example DATA_FILE [MODEL_OUT]
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <flynn/flynn.hpp>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_FILE [MODEL_OUT]\n", argv[0]);
    return 2;
  }
  try {
    const flynn::Dataset data = flynn::io::load_dataset(argv[1]);

    // Every fifth row is held out for testing.
    std::vector<std::size_t> train_rows, test_rows;
    for (std::size_t i = 0; i < data.n_rows; ++i) (i % 5 == 4 ? test_rows : train_rows).push_back(i);
    const flynn::Dataset train = data.subset(train_rows);
    const flynn::Dataset test = data.subset(test_rows);

    // flynn's defaults for this shape; any field of HyperParams overrides one.
    const flynn::FlyConfig config = flynn::HyperParams{}.resolve(
        static_cast<std::uint32_t>(data.n_features), data.classes.size());
    flynn::FlyNN model(config, data.classes);
    model.fit(train);

    const std::vector<std::uint32_t> predicted = model.predict(test);
    std::printf("flynn %s: %zu training rows, %zu test rows, %zu classes, m=%u s=%u rho=%u\n",
                flynn::version_string, train.n_rows, test.n_rows, model.labels().size(),
                config.m, config.s, config.rho);
    std::printf("test accuracy %.4f\n", flynn::accuracy(test.labels, predicted));

    const std::string path = argc > 2 ? argv[2] : "flynn_example.flynn";
    flynn::io::save_model(model, path);
    const flynn::FlyNN reloaded = flynn::io::load_model(path);
    if (reloaded.predict(test) != predicted) {
      std::fprintf(stderr, "the reloaded model predicts differently\n");
      return 1;
    }
    std::printf("model saved to %s and reloaded: same predictions\n", path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
