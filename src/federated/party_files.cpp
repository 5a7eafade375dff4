#include "flynn/federated/party_files.hpp"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "flynn/io/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/budget_ledger.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/predict_file.hpp"
#include "federated/safety_switches.hpp"

namespace flynn::federated {

namespace fs = std::filesystem;

void check_writable_output(const std::string& path, const std::string& what) {
  const fs::path parent = fs::path(path).parent_path();
  const fs::path dir = parent.empty() ? fs::path(".") : parent;
  if (!fs::is_directory(dir)) throw Error(fmt::format("{}: {} is not a directory", what, dir.string()));
  if (::access(dir.c_str(), W_OK) != 0) throw Error(fmt::format("{}: {} is not writable", what, dir.string()));
  if (fs::is_directory(path)) throw Error(fmt::format("{}: it is a directory", what));
}

Dataset load_party_rows(const std::string& path, const io::LoadOptions& load,
                        const std::optional<PublicSchema>& schema, const std::string& schema_path, bool dp) {
  const io::Format format = load.format == io::Format::Auto ? io::detect_format(path) : load.format;
  if (dp && !schema && format == io::Format::Libsvm)
    throw Error(fmt::format("{}: LIBSVM data takes d from the largest feature index in its rows, which "
                            "the DP release does not protect: give the federation's d in a public schema "
                            "with --schema FILE ({{\"format\": \"flynn table schema\", \"version\": 1, "
                            "\"features\": D}})",
                            path));
  Dataset d;
  if (schema) {
    try {
      d = io::load_dataset(path, public_schema_load_options(load, *schema));
    } catch (const Error& e) {
      throw Error(fmt::format("{} (read against the public schema --schema {})", e.what(), schema_path));
    }
  } else {
    d = io::load_dataset(path, load);
  }
  if (!d.has_labels) throw Error(fmt::format("{}: training data needs a label column", path));
  return d;
}

namespace {

// The federated evaluation of this party's --test rows, read as `flynn predict` reads rows.
FederatedEvaluation evaluate_party_test_rows(Communicator& comm, const FlyNN& model, const PartyFiles& files) {
  std::optional<Dataset> test;
  std::string error;
  if (!files.test.empty()) {
    try {
      io::LoadOptions load = files.load;
      load.impute = true;  // the training rows' cells stay missing for the federation's means; these are filled
      test = io::load_dataset(files.test, io::model_load_options(load, model));
      if (!test->has_labels) throw Error(fmt::format("--test {}: the test rows need a label column", files.test));
    } catch (const std::exception& e) {
      test.reset();
      error = e.what();
    }
  }
  return evaluate_together(comm, model, test ? &*test : nullptr, error);
}

}  // namespace

PartyRun run_party_from_files(Communicator& comm, const PartyFiles& files, FederationSettings settings,
                              std::string local_error, const std::function<void(const PartyRun&)>& await_end) {
  std::unique_ptr<Dataset> data;
  std::unique_ptr<BudgetLedger> ledger;
  if (local_error.empty()) {
    try {
      if (!files.model.empty()) check_writable_output(files.model, "cannot write the model to " + files.model);
      // Read after training (for the model), but a missing file is said before it.
      if (!files.test.empty() && !fs::is_regular_file(files.test))
        throw Error(fmt::format("--test {}: no such file", files.test));
      if (!files.ledger.empty() && !settings.dp)
        throw Error("this party keeps a DP budget ledger (--dp-ledger), but the federation "
                    "releases exact counts (no differential privacy): refusing");
      settings.missing = files.load.missing;
      if (!files.feature_stats.empty())
        settings.feature_stats = io::load_feature_stats(files.feature_stats, files.max_input_bytes);
      if (!files.schema.empty()) settings.schema = load_public_schema(files.schema, files.max_input_bytes);
      Dataset d = load_party_rows(files.data, files.load, settings.schema, files.schema, settings.dp.has_value());
      if (!files.ledger.empty()) {
        // Keyed by the records as loaded (budget_ledger.hpp), so the same rows in another
        // order, spelling or file share the budget; entries of older ledgers, keyed by the
        // file's bytes, still count for this very file.
        ledger = std::make_unique<BudgetLedger>(files.ledger, records_fingerprint(d), files.ledger_budget,
                                                std::vector<std::string>{file_fingerprint(files.data)});
        BudgetLedger* l = ledger.get();
        settings.approve_release = [l, unit = settings.dp->unit, note = files.ledger_note](const PrivacyAccount& a) {
          l->charge(a, unit, note);
        };
      }
      data = std::make_unique<Dataset>(std::move(d));
    } catch (const std::exception& e) {
      data.reset();
      local_error = e.what();
    }
  }
  PartyInput input;
  input.data = data.get();
  input.error = local_error;
  PartyRun run{train_party(comm, input, settings), {}, {}, {}, {}};
  run.reports = compare_models(comm, run.result, run.model_file);
  run.evaluation = evaluate_party_test_rows(comm, run.result.model, files);
  // Every party holds the model whose digest every party signed (compare_models). It is
  // staged beside its target, the parties agree that every one could, and it is put in
  // place only when `await_end` returns (over gRPC: the coordinator's Done); on any
  // failure the staged file is removed, so nothing is left behind.
  std::optional<io::StagedFile> staged;
  std::string write_error;
  if (!files.model.empty()) {
    try {
      staged.emplace(files.model, run.model_file);
      // A test's control only: written at once, as before protocol 3.
      if (!safety_check_on(SafetyCheck::CommitAfterDone)) staged->commit();
    } catch (const std::exception& e) {
      write_error = e.what();
    }
  }
  agree_on_status(comm, write_error, std::string(purpose::kWriting));
  if (await_end) await_end(run);
  if (staged) staged->commit();
  if (ledger) run.ledger_spent = ledger->spent();
  return run;
}

std::string local_detail_line(const std::exception& e, const std::string& who) {
  const auto* fe = dynamic_cast<const FederationError*>(&e);
  if (!fe || fe->local_detail().empty()) return "";
  return fmt::format("{}: this party's reason (not sent to the federation): {}", who, fe->local_detail());
}

PartyFilesCheck check_party_files(const PartyFiles& files, FederationSettings settings, int parties) {
  PartyFilesCheck out;
  const bool dp = settings.dp.has_value();
  const auto attempt = [&](const std::function<void()>& step) {
    try {
      step();
      return true;
    } catch (const std::exception& e) {
      out.problems.emplace_back(e.what());
      return false;
    }
  };
  if (!files.model.empty()) attempt([&] { check_writable_output(files.model, "cannot write the model to " + files.model); });
  if (!files.ledger.empty() && !dp)
    out.problems.emplace_back("this party keeps a DP budget ledger (--dp-ledger), but no DP settings are given "
                              "(--dp-epsilon): a federation without DP refuses it");
  settings.missing = files.load.missing;
  if (!files.feature_stats.empty())
    attempt([&] { settings.feature_stats = io::load_feature_stats(files.feature_stats, files.max_input_bytes); });
  bool schema_read = true;
  if (!files.schema.empty())
    schema_read = attempt([&] { settings.schema = load_public_schema(files.schema, files.max_input_bytes); });
  std::optional<Dataset> data;
  if (schema_read) attempt([&] { data = load_party_rows(files.data, files.load, settings.schema, files.schema, dp); });
  if (data) {
    out.rows = data->n_rows;
    out.features = data->n_features;
    for (std::size_t c = 0; c < data->classes.size(); ++c) out.classes.push_back(data->classes.name(c));
    if (settings.labels.empty()) {
      settings.labels = data->classes;
      out.unchecked.emplace_back(
          "the labels: no label list was given here (the coordinator's --labels decide), so this file's own "
          "classes stood in for it");
    }
    DataExamination e = examine_party_data(settings, settings.labels, parties, *data);
    for (std::string& p : e.problems) out.problems.push_back(std::move(p));
  }
  if (!files.test.empty())
    attempt([&] {
      io::LoadOptions load = files.load;
      load.impute = true;
      const Dataset test = io::load_dataset(files.test, load);
      if (!test.has_labels) throw Error(fmt::format("--test {}: the test rows need a label column", files.test));
    });
  if (!dp)
    out.unchecked.emplace_back(
        "the checks only differential privacy makes (text columns need a public --schema, missing cells need "
        "--missing zero or public fill values, LIBSVM needs --schema): give the federation's --dp-epsilon and "
        "--dp-T to include them");
  return out;
}

}  // namespace flynn::federated
