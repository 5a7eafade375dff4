// The SIMD target pin and the report of which kernels run (flynn/simd.hpp).
#include <hwy/targets.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "core/flyhash_kernels.hpp"
#include "core/one_row_kernel.hpp"
#include "flynn/detail/simd.hpp"
#include "flynn/error.hpp"
#include "flynn/simd.hpp"

namespace flynn {

namespace {

std::mutex pin_mutex;
std::string pinned;            // guarded by pin_mutex
std::int64_t pinned_bits = 0;  // the targets the pin disables; guarded by pin_mutex

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Highway's name of each target bit of this architecture, best (lowest bit) first.
template <class Fn>
void for_each_named_target(Fn fn) {
  for (int bit = 0; bit < 63; ++bit) {
    const std::int64_t target = std::int64_t{1} << bit;
    const std::string name = hwy::TargetName(target);
    if (name != "Unknown") fn(target, name);
  }
}

// The targets in `mask` that have names, best first, separated by spaces.
std::string target_list(std::int64_t mask) {
  std::string out;
  for_each_named_target([&](std::int64_t target, const std::string& name) {
    if (mask & target) out += (out.empty() ? "" : " ") + name;
  });
  return out;
}

// Every target any of the kernels is compiled for (the one-row kernels add AVX3_DL).
constexpr std::int64_t kBuilt = HWY_TARGETS | HWY_AVX3_DL;

}  // namespace

std::int64_t detail::simd::supported_targets() {
  const std::int64_t targets = hwy::SupportedTargets();
  hwy::GetChosenTarget().DeInit();  // the next dispatch chooses again, from `targets`
  return targets;
}

namespace {

// pin_target without first applying the environment's pin.
void apply_pin(const std::string& name) {
  const std::lock_guard<std::mutex> lock(pin_mutex);
  if (name.empty()) {
    hwy::DisableTargets(0);
    pinned.clear();
    pinned_bits = 0;
    return;
  }
  std::int64_t target = 0;
  std::string canonical;
  for_each_named_target([&](std::int64_t t, const std::string& n) {
    if (lower(n) == lower(name)) target = t, canonical = n;
  });
  if (target == 0 || !(target & kBuilt))
    throw Error(fmt::format("unknown SIMD target '{}': this build has {}", name,
                            target_list(kBuilt)));
  hwy::DisableTargets(0);
  const std::int64_t cpu = detail::simd::supported_targets();
  if (!(cpu & target)) {
    hwy::DisableTargets(pinned_bits);  // as it was
    throw Error(fmt::format("this CPU cannot run SIMD target {}; it runs {}", canonical,
                            target_list(cpu & kBuilt)));
  }
  // Every better target: the bits below this one's.
  pinned_bits = target - 1;
  hwy::DisableTargets(pinned_bits);
  pinned = canonical;
}

// Applies the environment's pin the first time it is called; "" or the error it gave.
const std::string& environment_pin_error() {
  static const std::string error = [] {
    const char* value = std::getenv(flynn::simd::kTargetVariable);
    if (!value || !*value) return std::string();
    try {
      apply_pin(value);
    } catch (const Error& e) {
      return fmt::format("{}={}: {}", flynn::simd::kTargetVariable, value, e.what());
    }
    return std::string();
  }();
  return error;
}

}  // namespace

void simd::pin_target(const std::string& name) {
  environment_pin_error();  // first, so that the environment never overrides this pin
  apply_pin(name);
}

void detail::simd::pin_target_from_environment() {
  const std::string& error = environment_pin_error();
  if (!error.empty()) throw Error(error);
}

std::string simd::pinned_target() {
  environment_pin_error();
  const std::lock_guard<std::mutex> lock(pin_mutex);
  return pinned;
}

std::string detail::simd::target_name() {
  pin_target_from_environment();
  return kernels::simd_target_name();
}

simd::KernelReport simd::kernel_report() {
  detail::simd::pin_target_from_environment();
  KernelReport r;
  r.target = kernels::simd_target_name();
  r.pinned = pinned_target();
  r.cpu_targets = target_list(detail::simd::supported_targets() & kBuilt);
  r.block_rows = kernels::block_shape(kernels::Lane::U8, 1).rows;
  const auto layout = kernels::one_row_layout();
  r.one_row = layout.has_value();
  r.one_row_kernel = layout ? kernels::one_row_kernel_name(*layout) : "none";
  return r;
}

std::string simd::kernel_report_text(const KernelReport& r) {
  std::string out = fmt::format("SIMD target: {}{}\n", r.target,
                                r.pinned.empty()
                                    ? ""
                                    : fmt::format(" (pinned to {}: better targets disabled)",
                                                  r.pinned));
  out += fmt::format("CPU targets (this build): {}\n", r.cpu_targets);
  out += fmt::format("block kernels: in use, {} rows per block of byte rows\n", r.block_rows);
  out += r.one_row ? fmt::format("one-row kernel: in use, {}\n", r.one_row_kernel)
                   : fmt::format("one-row kernel: none (a lone row costs a block of {})\n",
                                 r.block_rows);
  return out;
}

}  // namespace flynn
