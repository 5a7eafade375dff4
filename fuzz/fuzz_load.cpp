// libFuzzer target: file reading and format detection, the path every command takes.
// The input's first byte picks a file name (and so the format auto-detection by name),
// the rest is written to that file and loaded with load_dataset under small limits:
// transparent gunzip, IDX/ARFF sniffing of files named .csv, and each parser behind it.
// Every input must load into a dataset that satisfies the loaders' invariants or be
// rejected with a flynn::Error.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "dataset_invariants.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

namespace {

const std::string& work_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/flynn-fuzz-load.XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"data.csv", "data.csv.gz", "data.arff", "data.arff.gz",
                                       "data.svm",  "data.libsvm.gz", "train-images-idx3-ubyte",
                                       "data.txt"};
  const std::string path = work_dir() + "/" + kNames[data[0] % 8];
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  flynn::io::LoadOptions o;
  o.max_input_bytes = 1u << 20;  // a gzip bomb stops here
  o.max_values = 1u << 20;
  o.require_labels = false;
  try {
    const flynn::Dataset ds = flynn::io::load_dataset(path, o);
    flynn::fuzz::check_dataset(ds);
  } catch (const flynn::Error&) {
  }
  ::unlink(path.c_str());
  return 0;
}
