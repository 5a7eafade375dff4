// libFuzzer target: the model-file loader. Every input must either be rejected with a
// flynn::Error or parse into contents that re-serialise to exactly the same bytes (the
// format has one encoding per model), so acceptance of a damaged file is a finding too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  flynn::io::ModelContents mc;
  try {
    mc = flynn::io::parse_model(bytes, "fuzz.flynn");
  } catch (const flynn::Error&) {
    return 0;  // a clean rejection
  }
  // Rebuilding the lifting matrix costs m·s; keep it small under the fuzzer.
  if (std::uint64_t(mc.config.m) * mc.config.s > (1u << 20) || mc.config.input_dim > (1u << 16))
    return 0;
  flynn::FlyNN model(mc.config, mc.labels, mc.counts, 1);
  model.set_provenance(mc.provenance);
  if (flynn::io::serialize_model(model) != bytes) std::abort();
  return 0;
}
