// libFuzzer target: the model-file loader, past the checksum (fuzz builds define
// FLYNN_FUZZ_SKIP_MODEL_CRC, see fuzz/CMakeLists.txt). Every input must either be rejected
// with a flynn::Error or parse into contents that survive a save/load cycle unchanged:
// re-serialising gives a file that parses to the same contents and re-serialises to the
// same bytes (the count stream's compressed bytes may differ from the input's, since files
// written by older builds used zlib level 9). Acceptance of an impossible model (counts
// that break the loader's bounds) shows up as an Error on the second parse, a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"

namespace {

// Small limits, so the fuzzer explores the checks instead of large allocations.
constexpr std::uint64_t kLimit = 16u << 20;

flynn::FlyNN rebuild(flynn::io::ModelContents mc) {
  flynn::FlyNN model(mc.config, std::move(mc.labels), std::move(mc.counts), 1);
  model.set_provenance(mc.provenance);
  model.set_feature_stats(std::move(mc.stats));
  model.set_calibration(mc.calibration);
  model.set_missing_policy(mc.missing_policy);
  return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  flynn::io::ModelContents mc;
  try {
    mc = flynn::io::parse_model(bytes, "fuzz.flynn", kLimit);
  } catch (const flynn::Error&) {
    return 0;  // a clean rejection
  }
  // Rebuilding the lifting matrix costs m·s; keep it small under the fuzzer.
  if (std::uint64_t(mc.config.m) * mc.config.s > (1u << 20) || mc.config.input_dim > (1u << 16))
    return 0;
  const std::string once = flynn::io::serialize_model(rebuild(mc));
  flynn::io::ModelContents back;
  try {
    back = flynn::io::parse_model(once, "resaved.flynn", kLimit);
  } catch (const flynn::Error&) {
    std::abort();  // the loader accepted what it then refuses to read back
  }
  if (!(back.config == mc.config) || !(back.labels == mc.labels) || !(back.counts == mc.counts) ||
      !(back.provenance == mc.provenance) || !(back.calibration == mc.calibration) ||
      back.missing_policy != mc.missing_policy)
    std::abort();
  if (flynn::io::serialize_model(rebuild(std::move(back))) != once) std::abort();
  return 0;
}
