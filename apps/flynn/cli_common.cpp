#include "cli_common.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <iostream>

#include <fmt/format.h>

#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/train_file.hpp"
#include "flynn/error.hpp"
#include "flynn/settings_table.hpp"

namespace flynn::cli {

void CommonOptions::add_to(CLI::App* app, bool with_json) {
  app->add_option("--threads", threads, "Worker threads (0 = all cores); never changes results")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()));
  app->add_flag("--quiet,-q", quiet, "No progress indicator");
  if (with_json) app->add_flag("--json", json, "Print a machine-readable JSON summary on stdout");
}

HyperParams HyperParamOptions::params() const {
  HyperParams p;
  flags_.apply(hyper_param_fields(), p);
  return p;
}

CLI::Option* HyperParamOptions::option(std::string_view name) const {
  const auto& fields = hyper_param_fields();
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (name == fields[i].name) return flags_.option(i);
  throw Error(fmt::format("no hyper-parameter flag named '{}'", name));
}

void DataOptions::add_to(CLI::App* app) {
  bind_options(app, io::load_flag_fields(), flags);
  input_limit.add_to(app);
  missing_opt = app->get_option("--missing");
}

io::LoadOptions DataOptions::load_options() const {
  io::LoadFlags given = flags;
  given.max_input_bytes = input_limit.bytes();
  io::LoadOptions o = io::load_options(given);
  o.missing_given = missing_given();
  return o;
}

io::LoadOptions DataOptions::party_load_options() const {
  io::LoadOptions o = load_options();
  o.impute = false;
  return o;
}

void InputLimitOption::add_to(CLI::App* app) {
  app->add_option("--max-input-bytes", text,
                  fmt::format("Largest input (decompressed data, model file, decoded model "
                              "counts) in bytes, suffixes K M G T (default {} = 4G)",
                              io::kDefaultMaxInputBytes))
      ->group("Data format");
}

std::uint64_t InputLimitOption::bytes() const {
  return text.empty() ? io::kDefaultMaxInputBytes : parse_byte_size(text, "--max-input-bytes");
}

void ModelMemoryOption::add_to(CLI::App* app) {
  app->add_option("--max-model-memory", text,
                  fmt::format("Largest estimated memory a model may need once loaded (counts, "
                              "score table, lifting matrix, scratch), suffixes K M G T "
                              "(default: {} plus {} bytes per byte of the model file, at most "
                              "this machine's memory)",
                              memory_size_text(kModelMemoryFloor), kModelMemoryPerFileByte))
      ->group("Data format");
}

io::ModelMemoryLimit ModelMemoryOption::limit(ModelUse use) const {
  io::ModelMemoryLimit l;
  l.bytes = text.empty() ? 0 : parse_byte_size(text, "--max-model-memory");
  l.use = use;
  return l;
}

namespace {

// The shared validator of make_integer_options_strict (check_strict_integer).
CLI::Validator strict_integer(bool is_signed) {
  return CLI::Validator(
      [is_signed](std::string& value) { return check_strict_integer(value, is_signed); }, "",
      "strict integer");
}

void make_strict(CLI::App* app, const CLI::Validator& unsigned_check, const CLI::Validator& signed_check) {
  for (CLI::Option* opt : app->get_options()) {
    const std::string type = opt->get_type_name();
    // transform, not check: the validator rewrites the value, and transform puts it first,
    // ahead of an option's own Range check.
    if (type == "UINT") opt->transform(unsigned_check);
    if (type == "INT") opt->transform(signed_check);
  }
  for (CLI::App* sub : app->get_subcommands({})) make_strict(sub, unsigned_check, signed_check);
}

}  // namespace

void make_integer_options_strict(CLI::App& app) {
  make_strict(&app, strict_integer(false), strict_integer(true));
}

ProgressBar::ProgressBar(std::string what, bool enabled)
    : what_(std::move(what)), enabled_(enabled && ::isatty(STDERR_FILENO)) {
  start_ = last_ = std::chrono::steady_clock::now();
  if (!enabled_) return;
  fn_ = [this](std::size_t done, std::size_t total) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (elapsed < 1.0 || std::chrono::duration<double>(now - last_).count() < 0.1) return true;
    last_ = now;
    const double frac = total ? static_cast<double>(done) / total : 0.0;
    const double eta = frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0;
    std::fprintf(stderr, "\r%s %5.1f%% (%zu/%zu) ETA %.0fs   ", what_.c_str(), 100.0 * frac, done,
                 total, eta);
    std::fflush(stderr);
    shown_ = true;
    return true;
  };
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::finish() {
  if (shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
}

void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << std::endl; }

void print_report(const eval::Report& r, bool json) {
  if (json)
    print_json(r.json);
  else
    std::cout << r.text;
}

std::function<ProgressFn(std::string_view phase)> phase_progress(std::optional<ProgressBar>& bar, bool quiet) {
  return [&bar, quiet](std::string_view phase) -> ProgressFn {
    bar.reset();
    if (phase.empty()) return {};
    return bar.emplace(std::string(phase), !quiet).callback();
  };
}


void FeatureStatsOption::add_to(CLI::App* app) {
  app->add_option("--feature-stats", path,
                  "Standardisation statistics from public knowledge, not the training rows: a CSV of 2 rows "
                  "(centres, then scales > 0), one value per feature; needed for standardising variants under DP");
}

std::optional<FeatureStats> FeatureStatsOption::load(std::uint64_t max_bytes) const {
  if (path.empty()) return std::nullopt;
  return io::load_feature_stats(path, max_bytes);
}

}  // namespace flynn::cli
