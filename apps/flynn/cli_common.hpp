#pragma once
// Pieces shared by the flynn subcommands: option groups registered the same way on every
// subcommand, the progress bar, and small output helpers. Commands only parse, call the
// library and print.
#include <chrono>
#include <cstdint>
#include <vector>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "flynn/classifier.hpp"
#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/eval/report.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/train_file.hpp"
#include "flynn/progress.hpp"
#include "flynn/settings_table.hpp"
#include "flynn/value_parsing.hpp"

namespace flynn::cli {

/// --threads, --quiet, --json.
struct CommonOptions {
  int threads = 0;
  bool quiet = false;
  bool json = false;
  void add_to(CLI::App* app, bool with_json = true);
};

/// The flags of a table of settings (settings_table.hpp's hyper_param_fields,
/// dp_settings.hpp's dp_param_fields): one flag per row, with its help, in `group`; each
/// parsed by CLI11 in the row's kind (strict integers: make_integer_options_strict).
template <class Field>
class SettingFlags {
 public:
  void add_to(CLI::App* app, const std::vector<Field>& fields, const std::string& group) {
    // Sized once: CLI11 keeps pointers into the slots.
    slots_.assign(fields.size(), Slot{});
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const Field& f = fields[i];
      Slot& s = slots_[i];
      switch (f.kind) {
        case SettingKind::Unsigned: s.option = app->add_option(f.flag, s.count, f.help); break;
        case SettingKind::Real: s.option = app->add_option(f.flag, s.real, f.help); break;
        case SettingKind::Choice: s.option = app->add_option(f.flag, s.name, f.help); break;
      }
      s.option->group(group);
      s.kind = f.kind;
    }
  }
  /// The value of each row given (by the table's order; none: not given).
  std::vector<std::optional<SettingValue>> given() const {
    std::vector<std::optional<SettingValue>> out(slots_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if (!s.option->count()) continue;
      switch (s.kind) {
        case SettingKind::Unsigned: out[i] = s.count; break;
        case SettingKind::Real: out[i] = s.real; break;
        case SettingKind::Choice: out[i] = s.name; break;
      }
    }
    return out;
  }
  /// The flag of row `i`, after add_to.
  CLI::Option* option(std::size_t i) const { return slots_.at(i).option; }

 private:
  // One slot per row; the member of the row's kind is the one bound.
  struct Slot {
    std::uint64_t count = 0;
    double real = 0;
    std::string name;
    SettingKind kind = SettingKind::Unsigned;
    CLI::Option* option = nullptr;
  };
  std::vector<Slot> slots_;
};

/// The hyper-parameter flags of every subcommand that trains (hyper_param_fields).
struct HyperParamOptions {
  void add_to(CLI::App* app) { flags_.add_to(app, hyper_param_fields(), "Hyper-parameters"); }
  /// The flags given, as HyperParams (unset fields: not given).
  HyperParams params() const;
  /// The flag of the table's row `name` ("m", "seed"), after add_to; throws flynn::Error
  /// for a name the table does not have.
  CLI::Option* option(std::string_view name) const;

 private:
  SettingFlags<HyperParamField> flags_;
};

/// --max-input-bytes: the cap on what one input may hold once decompressed (data files,
/// model files and a model's decoded counts), so /dev/zero, an endless pipe, a gzip bomb or
/// a forged size field ends in an error naming the limit instead of exhausting memory.
/// Accepts a byte count with an optional binary suffix: 1048576, 512K, 64M, 4G, 1T.
struct InputLimitOption {
  std::string text;  ///< as given; empty = io::kDefaultMaxInputBytes
  void add_to(CLI::App* app);
  /// The limit in bytes; throws flynn::Error naming the flag on a malformed or zero value.
  std::uint64_t bytes() const;
};

/// --max-model-memory: the cap on what a model file read may cost in memory once loaded
/// and used, its estimated footprint (model_footprint.hpp: counts, score table, lifting
/// matrix, scratch), checked before anything is built. Same size syntax as
/// --max-input-bytes; default: default_model_memory_limit for the file's size (1 GiB plus
/// 2048 bytes per byte of the file, at most the machine's memory).
struct ModelMemoryOption {
  std::string text;  ///< as given; empty = the default for each file
  void add_to(CLI::App* app);
  /// The limit for a model used as `use`; throws flynn::Error naming the flag on a
  /// malformed or zero value.
  io::ModelMemoryLimit limit(ModelUse use) const;
};

/// Makes every integer option of `app` and of all its subcommands strict, with one shared
/// validator (check_strict_integer, flynn/value_parsing.hpp): the value must be a plain decimal integer (an optional '+'; '-' only for
/// signed options) within the 64-bit range of its kind, so "--seed 18446744073709551616"
/// and "--seed -1" are errors naming the flag and the range instead of saturating or
/// wrapping. The value is rewritten in canonical decimal before CLI11 converts it, so
/// "010" means ten (not octal eight). Narrower targets (32-bit options) are then range
/// checked by CLI11's conversion. Call once, after every subcommand is registered.
void make_integer_options_strict(CLI::App& app);

/// How to read a data file: --format, --label-col, --header, --delimiter, --idx-labels,
/// --max-input-bytes, and for tables --id-col, --feature-cols, --ignore-cols, --missing
/// (table_columns.hpp).
struct DataOptions {
  /// The flags' texts (their meaning: io::load_options); max_input_bytes comes from
  /// input_limit.
  io::LoadFlags flags;
  InputLimitOption input_limit;  ///< --max-input-bytes (also bounds model files read)
  CLI::Option* missing_opt = nullptr;
  void add_to(CLI::App* app);
  /// Whether --missing was given (a federation party otherwise takes the coordinator's).
  bool missing_given() const { return missing_opt && missing_opt->count() > 0; }
  io::LoadOptions load_options() const;
  /// load_options() for a federation party's training rows: missing cells stay NaN until
  /// the federation's means are known (LoadOptions::impute = false, party.hpp step 1c).
  io::LoadOptions party_load_options() const;
  /// The --max-input-bytes limit, for the model files a command reads.
  std::uint64_t max_input_bytes() const { return input_limit.bytes(); }
};

/// --feature-stats FILE (train and the federated commands): standardisation statistics from
/// public knowledge, used instead of the training rows' own (io/feature_stats_file.hpp);
/// what lets a standardising variant train under DP.
struct FeatureStatsOption {
  std::string path;  ///< as given; empty = learn the statistics from the rows
  void add_to(CLI::App* app);
  /// The statistics, or none without the flag; the file is read under `max_bytes`.
  std::optional<FeatureStats> load(std::uint64_t max_bytes) const;
};


/// A TTY-aware progress line on stderr. It appears only after the work has run for a
/// second, redraws at most ten times a second, and is silent when stderr is not a
/// terminal or --quiet was given.
class ProgressBar {
 public:
  ProgressBar(std::string what, bool enabled);
  ~ProgressBar();
  /// The callback to hand to the library.
  const ProgressFn& callback() const { return fn_; }
  /// Erases the line (also done by the destructor).
  void finish();

 private:
  std::string what_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
  ProgressFn fn_;
};

/// Prints a JSON object to stdout (2-space indent).
void print_json(const nlohmann::json& j);

/// Prints a library operation's report to stdout: its JSON with --json, else its text.
void print_report(const eval::Report& r, bool json);

/// A phase-progress callback (io::FileTrainingOptions::progress, TuneFileRun::progress):
/// one progress bar per phase, held in `bar`, shown while the phase lasts.
std::function<ProgressFn(std::string_view phase)> phase_progress(std::optional<ProgressBar>& bar, bool quiet);

// Shared with the study reports (flynn/eval/study_io.hpp).
using eval::config_json;
using eval::human_bytes;

}  // namespace flynn::cli
