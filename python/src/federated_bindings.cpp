#include "federated_bindings.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "flynn/federated/dp.hpp"
#include "flynn/federated/dp_settings.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "config_dict.hpp"
#include "model_handle.hpp"
#include "numpy_rows.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

using federated::DpEntry;
using federated::DpParams;

/// The DP settings given as Python keywords named as the rows of dp_param_fields
/// (flynn/federated/dp_settings.hpp; None = not given), as the CLI's --dp-* flags give them:
/// no DP when none is given; dp_epsilon and dp_T together turn it on; an unknown keyword
/// is a TypeError listing the rows.
std::optional<DpParams> dp_params(const py::dict& given) {
  const auto& fields = federated::dp_param_fields();
  federated::DpGiven values(fields.size());
  for (auto [key, value] : given) {
    const std::string name = py::str(key);
    const federated::DpParamField* f = federated::find_dp_param(name);
    if (!f) {
      std::string names;
      for (const federated::DpParamField& row : fields) names += (names.empty() ? "" : ", ") + std::string(row.name);
      throw py::type_error("unexpected keyword argument '" + name + "'; the DP settings are " + names);
    }
    if (value.is_none()) continue;
    // dp_T is a count (int) or "auto" (str): its row's kind is Choice for the word.
    const bool count = std::string_view(f->name) == "dp_T" && !py::isinstance<py::str>(value);
    values[static_cast<std::size_t>(f - fields.data())] =
        python_setting(f->name, count ? SettingKind::Unsigned : f->kind, value);
  }
  return federated::dp_params_from_given(values, federated::DpSpelling::Name);
}

/// The rows of dp_param_fields as dictionaries (name, flag, help, kind, enables): what
/// flynn.federated.simulate's DP keywords and their documentation are made from.
py::list dp_param_table() {
  py::list rows;
  for (const federated::DpParamField& f : federated::dp_param_fields()) {
    py::dict row;
    row["name"] = f.name;
    row["flag"] = f.flag;
    row["help"] = f.help;
    row["kind"] = f.values ? f.values : setting_kind_name(f.kind);
    row["enables"] = f.enables;
    rows.append(row);
  }
  return rows;
}

/// Runs `flynn federated simulate`'s federation on in-memory rows: split among `parties`
/// threads, each runs the FlyNNFL protocol; returns the aggregated model and a report.
py::tuple simulate(const py::array& X, const LabelIds& y, std::vector<std::string> labels,
                   const HyperParams& hyper_given, int parties, const std::string& split,
                   std::uint64_t split_seed, const py::dict& dp,
                   std::optional<std::vector<float>> feature_centres,
                   std::optional<std::vector<float>> feature_scales, int threads,
                   const std::optional<py::array>& X_test, const std::optional<LabelIds>& y_test) {
  if (parties < 1 || parties > 4096)
    throw Error("parties = " + std::to_string(parties) + ": must be in [1, 4096]");
  const federated::SplitSpec spec = federated::SplitSpec::parse(split);
  const NumpyRows rows(X);
  if (y.ndim() != 1 || static_cast<std::size_t>(y.shape(0)) != rows.n_rows())
    throw std::invalid_argument("expected one class id per row");
  for (py::ssize_t r = 0; r < y.shape(0); ++r)
    if (y.data()[r] >= labels.size())
      throw std::invalid_argument("row " + std::to_string(r) + ": class id out of range");

  federated::FederationSettings settings;
  settings.hyper = hyper_given;
  // As `flynn federated simulate`: reproducible by default, like training.
  if (!settings.hyper.seed) settings.hyper.seed = Defaults::seed;
  settings.labels = LabelSet(std::move(labels));
  settings.dp = dp_params(dp);
  if (feature_centres || feature_scales) {
    // As --feature-stats: public statistics, checked like the file's values.
    if (!feature_centres || !feature_scales)
      throw std::invalid_argument("feature_stats must be (centres, scales)");
    settings.feature_stats = FeatureStats{std::move(*feature_centres), std::move(*feature_scales)};
    io::check_feature_stats(*settings.feature_stats, "feature_stats");
  }
  settings.threads = federated::threads_per_party(threads, parties);

  if (X_test.has_value() != y_test.has_value()) throw std::invalid_argument("X_test and y_test go together");
  std::optional<NumpyRows> test_rows;
  if (X_test) {
    test_rows.emplace(*X_test);
    if (test_rows->n_cols() != rows.n_cols())
      throw std::invalid_argument("X_test has " + std::to_string(test_rows->n_cols()) + " features, X " +
                                  std::to_string(rows.n_cols()));
    if (y_test->ndim() != 1 || static_cast<std::size_t>(y_test->shape(0)) != test_rows->n_rows())
      throw std::invalid_argument("expected one class id per row of X_test");
    for (py::ssize_t r = 0; r < y_test->shape(0); ++r)
      if (y_test->data()[r] >= settings.labels.size())
        throw std::invalid_argument("X_test row " + std::to_string(r) + ": class id out of range");
  }

  std::optional<federated::ColonyOutcome> out;
  std::vector<std::uint64_t> party_rows;
  {
    py::gil_scoped_release nogil;
    // Parties hold Datasets (copies of their shards), as `flynn federated simulate` does.
    const Dataset all = labelled_dataset(rows, y.data(), settings.labels);
    all.require_trainable();
    const auto parts =
        federated::split_rows(all.labels, all.classes.size(), parties, spec, split_seed);
    std::vector<Dataset> shards;
    shards.reserve(parts.size());
    for (const auto& p : parts) shards.push_back(all.subset(p));
    std::vector<const Dataset*> ptrs;
    for (const Dataset& d : shards) ptrs.push_back(&d);
    // The test rows dealt among the parties too (at random, stratified, as `flynn federated
    // simulate --test` deals them), for the federated evaluation.
    std::vector<Dataset> test_shards;
    std::vector<const Dataset*> test_ptrs;
    if (test_rows) {
      const Dataset test = labelled_dataset(*test_rows, y_test->data(), settings.labels);
      for (const auto& p : federated::split_rows(test.labels, test.classes.size(), parties, federated::SplitSpec{},
                                                 split_seed + 1))
        test_shards.push_back(test.subset(p));
      for (const Dataset& d : test_shards) test_ptrs.push_back(&d);
    }
    out.emplace(federated::run_colony(ptrs, settings, {}, test_ptrs));
  }
  py::dict report;
  report["parties"] = parties;
  report["split"] = spec.describe();
  report["split_seed"] = split_seed;
  report["rows_per_party"] = out->rows;
  report["seed"] = out->model.config().seed;
  report["wall_seconds"] = out->wall_seconds;
  if (out->privacy) {
    py::dict p;
    p["epsilon_total"] = out->privacy->total;
    p["epsilon_per_party"] = out->privacy->per_party;
    p["epsilon_per_pick"] = out->privacy->per_pick;
    p["T"] = out->privacy->T;
    p["parties"] = out->privacy->parties;
    p["unit"] = federated::dp_unit_name(settings.dp->unit);
    p["postprocess"] = federated::dp_postprocess_name(settings.dp->postprocess);
    // Every DP setting the federation ran with, under its keyword.
    py::dict given;
    for (const federated::DpParamField& f : federated::dp_param_fields())
      given[f.name] = setting_object(*f.get(*settings.dp));
    p["settings"] = given;
    report["privacy"] = p;
  } else {
    report["privacy"] = py::none();
  }
  if (test_rows) {
    // The federated evaluation: what every party learns of the summed confusion matrices.
    const federated::FederatedEvaluation& e = out->evaluation;
    py::dict t;
    t["parties"] = e.parties;
    t["parties_with_test_rows"] = e.parties_with_rows;
    if (!e.skipped.empty()) {
      t["skipped"] = e.skipped;
    } else {
      t["rows"] = e.rows;
      t["accuracy"] = e.accuracy;
      t["balanced_accuracy"] = e.balanced_accuracy;
      py::array_t<std::uint64_t> m({static_cast<py::ssize_t>(e.classes), static_cast<py::ssize_t>(e.classes)});
      std::copy(e.confusion.begin(), e.confusion.end(), m.mutable_data());
      t["confusion_matrix"] = m;
      if (settings.dp) t["covered_by_dp"] = false;
    }
    report["federation_test"] = t;
  }
  return py::make_tuple(ModelHandle(std::move(out->model)), report);
}

/// One party's DP release of its L × m counts: T (index, value) pairs, indices into the
/// class-major counts, sorted by index; noise from the OS-seeded secure generator.
/// `unit` is the privacy unit (DpUnit: "paper" spends epsilon/parties, "record" epsilon),
/// as simulate's dp_unit.
py::tuple privatize(const py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>& counts,
                    double epsilon, std::uint32_t T, std::uint32_t parties,
                    const std::string& exponent, const std::string& unit) {
  if (parties < 1) throw Error("parties must be at least 1");
  DpParams p;
  p.epsilon = epsilon;
  p.T = T;
  p.exponent = federated::parse_dp_exponent(exponent);
  p.unit = federated::parse_dp_unit(unit);
  const std::size_t n = static_cast<std::size_t>(counts.size());
  p.validate(n);
  const federated::DpMechanism mechanism(p, parties);
  std::vector<DpEntry> release;
  {
    py::gil_scoped_release nogil;
    federated::SecureRng rng;
    release = federated::privatize(counts.data(), n, mechanism, rng);
  }
  py::array_t<std::uint32_t> index(static_cast<py::ssize_t>(release.size()));
  py::array_t<std::uint32_t> value(static_cast<py::ssize_t>(release.size()));
  for (std::size_t i = 0; i < release.size(); ++i) {
    index.mutable_data()[i] = release[i].index;
    value.mutable_data()[i] = release[i].value;
  }
  return py::make_tuple(index, value);
}

/// Sums releases ((index, value) array pairs) into dense counts of n entries.
py::array_t<std::uint32_t> sum_releases(const std::vector<std::pair<
                                            py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>,
                                            py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>>>& releases,
                                        std::size_t n) {
  std::vector<std::vector<DpEntry>> entries;
  for (const auto& [index, value] : releases) {
    if (index.size() != value.size())
      throw std::invalid_argument("a release needs as many values as indices");
    std::vector<DpEntry>& e = entries.emplace_back(static_cast<std::size_t>(index.size()));
    for (py::ssize_t i = 0; i < index.size(); ++i) e[i] = {index.data()[i], value.data()[i]};
  }
  const std::vector<std::uint32_t> sum = federated::sum_releases(entries, n);
  py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(n));
  std::copy(sum.begin(), sum.end(), out.mutable_data());
  return out;
}

/// The exact aggregate of the parties' (counts, rows per class) pairs, through the checks a
/// federation applies (federated::aggregate_exact_counts): returns (counts, rows_per_class).
py::tuple aggregate_counts(const std::vector<std::pair<
                               py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>,
                               py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>>>& parts,
                           std::vector<std::string> labels, std::uint32_t m, std::uint32_t codes_per_row) {
  const LabelSet label_set(std::move(labels));
  const std::size_t L = label_set.size();
  std::vector<ClassCounts> counts;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto& [values, rows] = parts[p];
    if (static_cast<std::size_t>(values.size()) != L * m || static_cast<std::size_t>(rows.size()) != L)
      throw federated::FederationError(
          "party " + std::to_string(p) + " sent " + std::to_string(values.size()) + " counts and " +
          std::to_string(rows.size()) + " row totals; " + std::to_string(L) + " classes × cells = " +
          std::to_string(m) + " need " + std::to_string(L * m) + " and " + std::to_string(L));
    ClassCounts& c = counts.emplace_back(L, m, std::vector<std::uint32_t>(values.data(), values.data() + values.size()));
    c.rows_per_class().assign(rows.data(), rows.data() + rows.size());
  }
  ClassCounts total;
  {
    py::gil_scoped_release nogil;
    total = federated::aggregate_exact_counts(counts, codes_per_row, label_set);
  }
  py::array_t<std::uint32_t> out({static_cast<py::ssize_t>(L), static_cast<py::ssize_t>(m)});
  std::copy(total.values().begin(), total.values().end(), out.mutable_data());
  py::array_t<std::uint64_t> rows(static_cast<py::ssize_t>(L));
  std::copy(total.rows_per_class().begin(), total.rows_per_class().end(), rows.mutable_data());
  return py::make_tuple(out, rows);
}

}  // namespace

void bind_federated(py::module_& m) {
  m.def("simulate", &simulate, py::arg("X"), py::arg("y"), py::arg("labels"), py::arg("hyper"),
        py::arg("parties"), py::arg("split"), py::arg("split_seed"), py::arg("dp"),
        py::arg("feature_centres"), py::arg("feature_scales"), py::arg("threads"), py::arg("X_test") = py::none(),
        py::arg("y_test") = py::none());
  m.def("dp_param_fields", &dp_param_table,
        "The DP settings' table (flynn/federated/dp_settings.hpp): one dict per row (name, flag, "
        "help, kind, enables); simulate's DP keywords are its names.");
  m.def("privatize", &privatize, py::arg("counts"), py::arg("epsilon"), py::arg("T"),
        py::arg("parties"), py::arg("exponent"), py::arg("unit") = "paper");
  m.def("aggregate_counts", &aggregate_counts, py::arg("parts"), py::arg("labels"), py::arg("cells"),
        py::arg("codes_per_row"));
  m.def("sum_releases", &sum_releases, py::arg("releases"), py::arg("n"));
}

}  // namespace flynn::python
