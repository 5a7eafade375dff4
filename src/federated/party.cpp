#include "flynn/federated/party.hpp"

#include "flynn/federated/dp_postprocess.hpp"
#include "flynn/federated/dp_settings.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <functional>
#include <cstring>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "flynn/calibration.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/federated/dp_utility.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/predict_file.hpp"
#include "flynn/io/table_columns.hpp"
#include "flynn/settings_table.hpp"
#include "core/io/byte_codec.hpp"
#include "federated/openssl_util.hpp"
#include "federated/party_messages.hpp"
#include "federated/relayed_text.hpp"

namespace flynn::federated {

namespace {

using detail::Hello;
using detail::decode_hello;
using detail::decode_report;
using detail::encode_report;
using detail::decode_release;
using detail::encode_hello;
using detail::encode_release;
using detail::message_reader;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The label check FlyNN::count would do, done before the agreement so that an unknown
// label is reported to every party instead of failing one party mid-training.
void check_labels(const Dataset& data, const LabelSet& labels) {
  if (!data.has_labels) throw Error(fmt::format("{}: the data has no labels", data.source));
  data.class_ids_in(labels);
}

// A name or category in a table's fingerprint value: the separators of that value
// (, { } |) and % percent-encoded, so the value parses back into columns
// (described_columns).
std::string escaped_name(const std::string& name) {
  std::string r;
  for (char c : name) {
    if (c == '%' || c == ',' || c == '{' || c == '}' || c == '|')
      r += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else
      r += c;
  }
  return r;
}

// The table's columns as one fingerprint value: names (or positions) and categories.
std::string describe_table(const TableSchema& t) {
  std::string r = t.named ? "named:" : "unnamed:";
  for (std::size_t k = 0; k < t.columns.size(); ++k) {
    const TableColumn& c = t.columns[k];
    r += (k ? "," : "") + (t.named ? escaped_name(c.name) : std::to_string(k + 1));
    if (c.categorical()) {
      r += "{";
      for (std::size_t i = 0; i < c.categories.size(); ++i) r += (i ? "|" : "") + escaped_name(c.categories[i]);
      r += "}";
    }
  }
  return r;
}

// Up to eight names, quoted and made inert (they may be another party's text), "and N more".
std::string quoted_names(const std::vector<std::string>& names) {
  std::string r;
  for (std::size_t k = 0; k < names.size() && k < 8; ++k) r += fmt::format("{}'{}'", k ? ", " : "", inert_text(names[k], 60));
  if (names.size() > 8) r += fmt::format(" and {} more", names.size() - 8);
  return r;
}

// One column of a describe_table value: its (escaped) name and its categories' text.
struct DescribedColumn {
  std::string name, categories;
};

// describe_table's value back into columns; "named:" or "unnamed:" in `kind`. Another
// party's value is untrusted text: anything that does not parse gives no columns.
std::vector<DescribedColumn> described_columns(const std::string& value, std::string& kind) {
  const auto colon = value.find(':');
  if (colon == std::string::npos) return {};
  kind = value.substr(0, colon);
  std::vector<DescribedColumn> out;
  DescribedColumn current;
  bool in_categories = false;
  for (std::size_t i = colon + 1; i < value.size(); ++i) {
    const char c = value[i];
    if (in_categories) {
      if (c == '}') in_categories = false;
      else current.categories += c;
    } else if (c == '{') {
      in_categories = true;
    } else if (c == ',') {
      out.push_back(std::move(current));
      current = {};
    } else {
      current.name += c;
    }
  }
  if (colon + 1 < value.size()) out.push_back(std::move(current));
  return out;
}

// Why party p's table columns differ from party 0's, by column; "" when the values do not
// parse (the generic field-by-field message then says it).
std::string table_columns_difference(std::size_t p, const std::string& lead, const std::string& theirs) {
  std::string lead_kind, their_kind;
  const std::vector<DescribedColumn> a = described_columns(lead, lead_kind), b = described_columns(theirs, their_kind);
  if (lead_kind != their_kind || lead_kind != "named")
    return a.size() == b.size() ? ""
                                : fmt::format("party {} is refused: its table has {} columns, party 0's {} (the files "
                                              "have no header to name them)",
                                              p, b.size(), a.size());
  std::vector<std::string> missing, extra;
  const auto has = [](const std::vector<DescribedColumn>& cols, const std::string& name) {
    return std::any_of(cols.begin(), cols.end(), [&](const DescribedColumn& c) { return c.name == name; });
  };
  for (const DescribedColumn& c : a)
    if (!has(b, c.name)) missing.push_back(c.name);
  for (const DescribedColumn& c : b)
    if (!has(a, c.name)) extra.push_back(c.name);
  if (!missing.empty() || !extra.empty()) {
    std::string why = fmt::format("party {} is refused: its table", p);
    if (!missing.empty()) why += fmt::format(" lacks {} of party 0's ({})", missing.size() == 1 ? "a column" : "columns", quoted_names(missing));
    if (!missing.empty() && !extra.empty()) why += " and";
    if (!extra.empty()) why += fmt::format(" has {} that party 0's has not ({})", extra.size() == 1 ? "a column" : "columns", quoted_names(extra));
    return why + "; every party's table needs the same columns";
  }
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (a[k].name != b[k].name)
      return fmt::format("party {} is refused: its columns are in another order than party 0's (column {} is '{}', "
                         "party 0's '{}'); every party's table needs the same columns in the same order",
                         p, k + 1, inert_text(b[k].name, 60), inert_text(a[k].name, 60));
    if (a[k].categories != b[k].categories)
      return fmt::format("party {} is refused: the categories of its text column '{}' differ from party 0's (each "
                         "party learned them from its own rows); give every party the same public schema with "
                         "--schema FILE (`flynn schema` writes one)",
                         p, inert_text(b[k].name, 60));
  }
  return "";
}

// Whether the federation computes missing-value means (an exact all-reduce of the columns'
// sums, stored in the model). Never under DP: the means would leave every party, and sit in
// the released model, unprotected by the mechanism; a DP table with missing cells is
// refused at the agreement instead.
bool means_pending(const Dataset& data, MissingPolicy policy, bool dp) {
  return !dp && policy == MissingPolicy::Mean && !data.schema.empty() && data.schema.fill.empty();
}

// An error whose text quotes the party's rows (a loader's message naming a cell, an
// unknown label): under DP or secure aggregation the other parties and the coordinator get
// kRowsPrivateReason instead, and the text stays in FederationError::local_detail().
struct QuotesRows : Error {
  using Error::Error;
};

constexpr const char* kRowsPrivateReason =
    "its data cannot be used (the reason quotes its rows, so under DP or secure aggregation "
    "it is shown only at that party)";

std::uint64_t draw_seed() {
  SecureRng rng;
  return rng.next_u64();
}

}  // namespace

// The federation's rows per class are checked in the clear or summed under secure
// aggregation, so all parties reach the same verdict. Under secure aggregation the totals
// are the parties' to know, not the coordinator's, which relays the verdict.
void check_row_totals(const std::vector<std::uint64_t>& totals, const LabelSet& labels,
                      bool secure) {
  std::size_t classes_with_rows = 0;
  for (std::size_t l = 0; l < labels.size(); ++l) {
    // A count never exceeds its class's rows: this bound rules out overflow in the
    // 32-bit all-reduce (which, like MPI_SUM, would wrap silently).
    if (totals[l] > std::numeric_limits<std::uint32_t>::max())
      throw FederationError(fmt::format("class '{}' has {} rows in total, more than 2^32 - 1",
                                        labels.name(l), secure ? "too many" : std::to_string(totals[l])));
    classes_with_rows += totals[l] > 0;
  }
  if (classes_with_rows < 2)
    throw FederationError(fmt::format(
        "the parties hold rows of {} class{} in total: a classifier needs at least two",
        classes_with_rows, classes_with_rows == 1 ? "" : "es"));
}

void check_aggregated_counts(const ClassCounts& aggregated, const std::vector<std::uint64_t>& totals,
                             std::uint32_t codes_per_row, const LabelSet& labels, bool secure) {
  for (std::size_t l = 0; l < labels.size(); ++l) {
    std::uint64_t sum = 0;
    const std::uint32_t* c = aggregated.of_class(l);
    for (std::uint32_t i = 0; i < aggregated.m(); ++i) sum += c[i];
    if (sum != totals[l] * codes_per_row)
      throw FederationError(
          secure ? fmt::format("aggregated counts of class '{}' do not sum to the parties' rows "
                               "× codes per row: a party's counts disagree with its row totals",
                               labels.name(l))
                 : fmt::format("aggregated counts of class '{}' sum to {}, but the parties "
                               "announced {} rows × codes per row = {}",
                               labels.name(l), sum, totals[l], totals[l] * codes_per_row));
  }
}

ClassCounts aggregate_exact_counts(const std::vector<ClassCounts>& parts, std::uint32_t codes_per_row,
                                   const LabelSet& labels) {
  if (parts.empty()) throw FederationError("no party's counts to aggregate");
  const std::size_t L = labels.size();
  const std::uint32_t m = parts[0].m();
  std::vector<std::uint64_t> totals(L, 0), sums(L * std::size_t(m), 0);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const ClassCounts& part = parts[p];
    if (part.n_classes() != L || part.m() != m || part.rows_per_class().size() != L)
      throw FederationError(fmt::format(
          "party {} sent counts of {} classes × {} cells ({} row totals), party 0 {} × {} for {} classes",
          p, part.n_classes(), part.m(), part.rows_per_class().size(), parts[0].n_classes(), m, L));
    for (std::size_t l = 0; l < L; ++l) totals[l] += part.rows_per_class()[l];
    for (std::size_t i = 0; i < sums.size(); ++i) sums[i] += part.values()[i];
  }
  check_row_totals(totals, labels, false);
  ClassCounts aggregated(L, m);
  for (std::size_t i = 0; i < sums.size(); ++i) {
    // A row adds at most one to each unit of its class; with the totals bounded above, no
    // checked count can exceed 2^32 - 1.
    if (sums[i] > totals[i / m])
      throw FederationError(fmt::format("class '{}' has a count of {} at unit {}, more than its {} rows",
                                        labels.name(i / m), sums[i], i % m, totals[i / m]));
    aggregated.values()[i] = static_cast<std::uint32_t>(sums[i]);
  }
  aggregated.rows_per_class() = totals;
  check_aggregated_counts(aggregated, totals, codes_per_row, labels, false);
  return aggregated;
}

std::string expand_rank(const std::string& pattern, int rank) {
  std::string out = pattern;
  const std::string key = "{rank}", value = std::to_string(rank);
  for (std::size_t pos = out.find(key); pos != std::string::npos;
       pos = out.find(key, pos + value.size()))
    out.replace(pos, key.size(), value);
  return out;
}

std::vector<std::pair<std::string, std::string>> fingerprint(const FlyConfig& c,
                                                             const LabelSet& labels,
                                                             const std::optional<DpParams>& dp) {
  std::vector<std::pair<std::string, std::string>> f = {
      {"federation protocol", std::to_string(kProtocolVersion)},
      {"model format version", std::to_string(io::kModelFormatVersion)},
      {"hash version", std::to_string(io::kHashVersion)},
      {"label list", labels.joined()},
  };
  // The configuration's fields from the table of settings (settings_table.hpp), in their
  // canonical text (doubles in 17 significant digits: parties agree bit for bit); the seed
  // is agreed separately. Fields with an omitted_at value (the variant: "paper") come after
  // "differential privacy" and only when they differ from it, so the paper's hello blocks
  // stay byte for byte as they were (and the bytes the scaling study reports with them).
  auto add_config = [&](bool omittable) {
    for (const ConfigField& field : config_fields()) {
      if (!field.fingerprinted || (field.omitted_at != nullptr) != omittable) continue;
      const std::string value = setting_text(field.get(c));
      if (field.omitted_at && value == field.omitted_at) continue;
      f.emplace_back(field.name, value);
    }
  };
  add_config(false);
  f.emplace_back("differential privacy", dp ? "on" : "off");
  add_config(true);
  if (dp)
    for (auto& field : dp_fingerprint(*dp)) f.push_back(std::move(field));
  return f;
}

void agree_on_status(Communicator& comm, const std::string& local_error,
                     const std::string& stage) {
  io::ByteWriter w;
  w.str(detail::bounded_reason(local_error));
  const std::vector<std::string> all = comm.allgather(w.data(), stage);
  std::string failures;
  for (int p = 0; p < static_cast<int>(all.size()); ++p) {
    io::ByteReader r = message_reader(all[p], p, "status");
    const std::string err = r.str();
    r.done();
    // Another process's words: marked as its own, escaped and cut (relayed_text.hpp).
    if (!err.empty())
      failures += fmt::format("{}{}", failures.empty() ? "" : "; ", relayed_from(fmt::format("party {}", p), err));
  }
  if (!failures.empty()) throw FederationError(fmt::format("{} failed: {}", stage, failures));
}

namespace {

// ---- train_party's phases ------------------------------------------------------------------
// Each phase reads what the ones before it left in PartyState. Every party runs the same
// phases and so makes the same collectives in the same order; a phase that can fail on one
// party only reports it through a collective (the hello block, agree_on_status) instead of
// throwing past it.

struct PartyState {
  PartyState(Communicator& c, const PartyInput& in, const FederationSettings& s)
      : comm(c), input(in), settings(s), labels(s.labels), rank(c.rank()), tau(c.size()),
        dp(s.dp.has_value()), secure(c.secure_aggregation()), rows(in.data) {}

  Communicator& comm;
  const PartyInput& input;
  const FederationSettings& settings;
  const LabelSet& labels;
  const Clock::time_point t_start = Clock::now();
  const int rank, tau;
  const bool dp;
  // With secure aggregation nothing private travels in the clear: row totals and DP
  // releases go through the (masked) all-reduce instead of the all-gathers.
  const bool secure;
  // Under DP or secure aggregation no text quoting this party's rows may leave it.
  bool rows_private() const { return dp || secure; }

  // 1. agreement
  FlyConfig config;                       // the federation's (its seed from party 0)
  std::vector<std::uint64_t> local_rows;  // this party's rows per class of `labels`
  std::optional<DpParams> dp_params;      // settings.dp with T fixed (--dp-T auto resolved)
  bool seed_given = false;                // by party 0's settings (else party 0 drew it)
  // 2. statistics
  std::vector<std::uint64_t> totals;  // the federation's rows per class (not under DP)
  const Dataset* rows;                // the rows to count: input.data, or `filled`
  Dataset filled;                     // input.data with missing cells filled
  TableSchema table;                  // the model's table
  FeatureStats stats;
  // 3. local training
  ClassCounts counts;
  std::vector<DpEntry> release;
  std::optional<DpMechanism> mechanism;
  std::optional<FlyNN> local;  // its lifting matrix is reused for the final model
  // The rows of this party central training's calibration would score (not under DP).
  std::optional<CalibrationSample> sample;
  // 4. aggregation
  Traffic control, aggregate_traffic;
  PartyTimings times;
};

// The local checks of the data against the settings, and the configuration they resolve
// to (its seed not yet agreed); every problem at once (examine_party_data).
FlyConfig check_and_resolve(PartyState& st, const Dataset& data) {
  DataExamination e = examine_party_data(st.settings, st.labels, st.tau, data);
  if (e.problems.empty()) {
    st.dp_params = e.dp_params;
    return *e.config;
  }
  std::string all = e.problems.size() == 1 ? e.problems[0]
                                           : fmt::format("{} problems with this party's data: ", e.problems.size());
  for (std::size_t k = 0; e.problems.size() > 1 && k < e.problems.size(); ++k)
    all += fmt::format("{}({}) {}", k ? "; " : "", k + 1, e.problems[k]);
  if (e.quotes_rows) throw QuotesRows(all);
  throw Error(all);
}

// What the parties must agree on, as (field, value) pairs compared one by one.
std::vector<std::pair<std::string, std::string>> party_fingerprint(const PartyState& st,
                                                                   const Dataset& data) {
  const FederationSettings& settings = st.settings;
  auto fp = fingerprint(st.config, st.labels, settings.dp);
  if (settings.feature_stats)
    fp.emplace_back("feature statistics", io::feature_stats_digest(*settings.feature_stats));
  // The public schema by digest (the data fits it, checked before): the categories stay
  // out of the hello block. A positional schema fixes d only, so a named all-numeric
  // table still agrees on its column names.
  if (settings.schema) fp.emplace_back("public schema", public_schema_digest(*settings.schema));
  // Tables only, so positional data's hello blocks stay as they were.
  if (!data.schema.empty()) {
    if (!settings.schema || settings.schema->table.empty())
      fp.emplace_back("table columns", describe_table(data.schema));
    fp.emplace_back("missing values",
                    std::string(missing_policy_name(settings.missing)) +
                        (means_pending(data, settings.missing, st.dp) ? " (federation means)" : ""));
  }
  return fp;
}

// This party's hello block: its fingerprint, seed and (in the clear only) rows per class,
// or the reason it cannot take part (redacted into `local_detail` when it quotes rows).
Hello make_hello(PartyState& st, std::string& local_detail) {
  Hello mine;
  try {
    if (st.labels.empty()) throw Error("the federation's label list is empty: every party needs the same class names");
    if (!st.input.data) throw QuotesRows(st.input.error.empty() ? "no data" : st.input.error);
    const Dataset& data = *st.input.data;
    st.config = check_and_resolve(st, data);
    mine.fingerprint = party_fingerprint(st, data);
    mine.seed_given = st.settings.hyper.seed.has_value();
    mine.seed = mine.seed_given ? *st.settings.hyper.seed : (st.rank == 0 ? draw_seed() : 0);
    // Rows per class id of the federation's list (check_labels made every used name known).
    std::vector<long> id_of(data.classes.size());
    for (std::size_t c = 0; c < data.classes.size(); ++c) id_of[c] = st.labels.find(data.classes.name(c));
    st.local_rows.assign(st.labels.size(), 0);
    for (std::uint32_t c : data.labels) ++st.local_rows[static_cast<std::size_t>(id_of[c])];
    if (!st.rows_private()) {
      mine.has_rows = true;
      mine.rows_per_class = st.local_rows;
    }
  } catch (const QuotesRows& e) {
    mine = Hello{};
    mine.error = st.rows_private() ? kRowsPrivateReason : detail::bounded_reason(e.what());
    if (st.rows_private()) local_detail = e.what();
  } catch (const std::exception& e) {
    mine = Hello{};
    mine.error = detail::bounded_reason(e.what());
  }
  return mine;
}

// Throws unless every party could start and every fingerprint and given seed equals
// party 0's.
void check_hellos(const std::vector<Hello>& hellos, const std::string& local_detail) {
  std::string failures;
  for (std::size_t p = 0; p < hellos.size(); ++p)
    if (!hellos[p].error.empty())
      failures += fmt::format("{}{}", failures.empty() ? "" : "; ",
                              relayed_from(fmt::format("party {}", p), hellos[p].error));
  if (!failures.empty())
    throw FederationError(fmt::format("the federation cannot start: {}", failures), local_detail);
  const Hello& lead = hellos[0];
  // A field's value by name, "(none)" when the fingerprint leaves it out (a field at the
  // value its row omits, such as the variant at "paper", is absent, not shifted).
  using Fingerprint = std::vector<std::pair<std::string, std::string>>;
  const auto value_of = [](const Fingerprint& f, const std::string& name) -> std::string {
    for (const auto& [field, value] : f)
      if (field == name) return value;
    return "(none)";
  };
  for (std::size_t p = 1; p < hellos.size(); ++p) {
    const auto& theirs = hellos[p].fingerprint;
    if (theirs != lead.fingerprint) {
      // Tables that differ are named by column first (a missing column also changes d).
      const std::string lead_table = value_of(lead.fingerprint, "table columns"),
                        their_table = value_of(theirs, "table columns");
      if (lead_table != their_table && lead_table != "(none)" && their_table != "(none)") {
        const std::string why = table_columns_difference(p, lead_table, their_table);
        if (!why.empty()) throw FederationError(why);
      }
      for (const Fingerprint* side : {&lead.fingerprint, &theirs})
        for (const auto& entry : *side) {
          const std::string& field = entry.first;
          const std::string a = value_of(lead.fingerprint, field), b = value_of(theirs, field);
          if (a != b)
            throw FederationError(fmt::format(
                "party {} is refused: its {} differs from party 0's ({} vs {}); every party must "
                "use the same hyper-parameters, seed, preprocessing, label list and flynn version",
                p, inert_text(field, 60), inert_text(b, 60), inert_text(a, 60)));
        }
      throw FederationError(fmt::format(
          "party {} is refused: its fingerprint lists party 0's fields in another order (another "
          "flynn version?)", p));
    }
    if (hellos[p].seed_given && hellos[p].seed != lead.seed)
      throw FederationError(fmt::format(
          "party {} is refused: its seed differs from party 0's ({} vs {}{})", p,
          hellos[p].seed, lead.seed, lead.seed_given ? "" : ", drawn by party 0"));
  }
}

// The digest of the configuration every party agreed on: the fingerprint every party
// showed (equal at every party: checked) and party 0's seed. Masks are bound to it, so
// that parties of different configurations never share a pad (secure_aggregation.hpp).
std::string configuration_digest(const Hello& lead) {
  io::ByteWriter w;
  w.bytes("flynn federated configuration v1");
  w.u8(0);
  w.u32(kProtocolVersion);
  w.u32(static_cast<std::uint32_t>(lead.fingerprint.size()));
  for (const auto& [field, value] : lead.fingerprint) {
    w.str(field);
    w.str(value);
  }
  w.u8(lead.seed_given ? 1 : 0);
  w.u64(lead.seed);
  return ossl::sha256(w.data());
}

// Every all-reduce the agreed configuration implies, in protocol order: the transport
// refuses any other (and bounds what it accepts by them).
std::vector<SumShape> planned_sums(const PartyState& st) {
  const std::size_t classes = st.labels.size(), cells = std::size_t(st.config.cells()) * classes;
  const std::uint32_t d = st.config.input_dim;
  std::vector<SumShape> sums;
  if (!st.dp && st.secure) sums.push_back({std::string(purpose::kRowTotals), 8, classes});
  if (means_pending(*st.input.data, st.settings.missing, st.dp))
    sums.push_back({std::string(purpose::kImputationSums), 8, ImputationSums(d).to_limbs().size()});
  if (!st.settings.feature_stats && st.config.variant.standardize)
    sums.push_back({std::string(purpose::kFeatureSums), 8,
                    FeatureSums(d, st.config.value_transform).to_limbs().size()});
  if (!st.dp) sums.push_back({std::string(purpose::kCounts), 4, cells});
  else if (st.secure) sums.push_back({std::string(purpose::kDpRelease), 8, cells});
  if (!st.dp) sums.push_back({std::string(purpose::kCalibration), 8, calibration_totals_size() + 1});
  sums.push_back({std::string(purpose::kEvaluation), 8, classes * classes});  // evaluate_together
  return sums;
}

// Phase 1: the hello all-gather. Returns the hellos (every party passed). Only then, with
// every fingerprint equal to this party's own, may anything be summed (on_agreement).
std::vector<Hello> agree_on_config(PartyState& st) {
  std::string local_detail;  // this party's reason when the others get a redacted one
  const Hello mine = make_hello(st, local_detail);
  const std::vector<std::string> blocks = st.comm.allgather(encode_hello(mine), purpose::kAgreement);
  std::vector<Hello> hellos;
  for (int p = 0; p < st.tau; ++p) hellos.push_back(decode_hello(blocks[p], p));
  check_hellos(hellos, local_detail);
  st.config.seed = hellos[0].seed;
  st.seed_given = hellos[0].seed_given;
  st.comm.on_agreement(configuration_digest(hellos[0]), planned_sums(st));
  return hellos;
}

// Rows per class of the whole federation (not under DP: they are not protected by the
// mechanism), summed in the clear or, under secure aggregation, by a masked all-reduce;
// either way every party then applies the same checks to the same totals.
void sum_row_totals(PartyState& st, const std::vector<Hello>& hellos) {
  const LabelSet& labels = st.labels;
  st.totals.assign(labels.size(), 0);
  if (!st.dp && st.secure) {
    // Every party passed the agreement, so every party makes this call.
    st.totals = st.local_rows;
    st.comm.allreduce_sum(std::span<std::uint64_t>(st.totals), purpose::kRowTotals);
    check_row_totals(st.totals, labels, true);
  } else if (!st.dp) {
    for (int p = 0; p < st.tau; ++p) {
      if (hellos[p].rows_per_class.size() != labels.size())
        throw FederationError(fmt::format("party {} sent {} class totals for {} classes", p,
                                          hellos[p].rows_per_class.size(), labels.size()));
      for (std::size_t l = 0; l < labels.size(); ++l) st.totals[l] += hellos[p].rows_per_class[l];
    }
    check_row_totals(st.totals, labels, false);
  }
}

// Phase 2: the statistics the federation computes together. Tables awaiting means: one
// all-reduce of exact sums of the non-missing cells; every party fills its rows (a copy,
// only when it has missing cells) with the same means. The fingerprint made the condition
// the same on every party. Standardising variants: one all-reduce of exact per-feature sums
// (FeatureSums limbs), so every party derives the statistics central training on the
// pooled rows would, whatever the split.
void agree_on_statistics(PartyState& st) {
  const FederationSettings& settings = st.settings;
  const Dataset& data = *st.input.data;
  // The model's table: the public schema's when there is one (the data fits it, its id
  // column's name aside), so that nothing of a party's own table is released.
  st.table = settings.schema && !settings.schema->table.empty() ? settings.schema->table
                                                                : data.schema;
  if (means_pending(data, settings.missing, st.dp)) {
    std::vector<std::uint64_t> limbs = ImputationSums::of(data).to_limbs();
    st.comm.allreduce_sum(std::span<std::uint64_t>(limbs), purpose::kImputationSums);
    const ImputationSums total = ImputationSums::from_limbs(limbs, st.config.input_dim);
    if (has_missing(data)) {
      st.filled = data;
      io::complete_table(st.filled, total);
      st.rows = &st.filled;
      st.table = st.filled.schema;
    } else {
      st.table = io::completed_schema(st.table, total);
    }
  }
  if (settings.feature_stats) {
    st.stats = *settings.feature_stats;  // public: nothing of the rows is exchanged
  } else if (st.config.variant.standardize) {
    std::vector<std::uint64_t> limbs = FeatureSums::of(*st.rows, st.config.value_transform).to_limbs();
    st.comm.allreduce_sum(limbs, purpose::kFeatureSums);
    st.stats = FeatureSums::from_limbs(limbs, st.config.input_dim, st.config.value_transform).stats();
  }
}

// Phase 3: hashing and counting this party's rows, and under DP privatizing the counts.
// Returns the failure (empty when none): reported to every party by agree_on_status.
std::string count_locally(PartyState& st) {
  const FederationSettings& settings = st.settings;
  PartyTimings& times = st.times;
  std::string local_error;
  const double cpu_start = flynn::detail::thread_cpu_seconds();
  try {
    auto t = Clock::now();
    st.local.emplace(st.config, st.labels, settings.threads);
    st.local->set_feature_stats(st.stats);
    // The rows central training on the pooled rows would calibrate on: a function of each
    // row and the federation's row count, so each party picks its own share of them.
    if (!st.dp)
      st.sample.emplace(st.config, std::accumulate(st.totals.begin(), st.totals.end(), std::uint64_t{0}));
    times.setup = since(t);
    t = Clock::now();
    st.counts = st.local->count(*st.rows, settings.progress, st.sample ? &*st.sample : nullptr);
    times.local = since(t);
    if (st.dp) {
      t = Clock::now();
      st.mechanism.emplace(*st.dp_params, static_cast<std::uint32_t>(st.tau));
      SecureRng rng;  // never the seeded generator of the lifting matrix
      st.release = privatize(st.counts, *st.mechanism, rng);
      // E.g. the budget ledger: it records the release, or refuses it (reported to every
      // party by the status round, before anything leaves this party).
      if (settings.approve_release) settings.approve_release(account(*st.mechanism));
      times.privatize = since(t);
    }
  } catch (const std::exception& e) {
    local_error = e.what();
  }
  times.compute_cpu = flynn::detail::thread_cpu_seconds() - cpu_start;
  return local_error;
}

// Phase 4 under DP with secure aggregation: a sparse release cannot be masked without
// revealing its indices, so each party sends its release as a dense vector (zeros
// elsewhere) into the masked all-reduce. 64-bit words, so the modular sum cannot wrap (τ
// values below 2^32 each); the 32-bit cap sum_releases applies is checked on the result.
void sum_releases_masked(PartyState& st, ClassCounts& aggregated) {
  const std::size_t cells = std::size_t(st.config.cells()) * st.labels.size();
  std::vector<std::uint64_t> dense(cells, 0);
  for (const DpEntry& e : st.release) dense[e.index] = e.value;
  st.comm.allreduce_sum(std::span<std::uint64_t>(dense), purpose::kDpRelease);
  std::vector<std::uint32_t>& values = aggregated.values();
  for (std::size_t i = 0; i < cells; ++i) {
    if (dense[i] > std::numeric_limits<std::uint32_t>::max())
      throw FederationError(fmt::format(
          "the DP releases sum to {} at entry {}, more than 2^32 - 1", dense[i], i));
    values[i] = static_cast<std::uint32_t>(dense[i]);
  }
}

// Phase 4: aggregation, the one data collective, and under DP the release's
// post-processing (free under DP: it reads only the aggregated sum and public parameters),
// the same on every party, so the models stay identical.
ClassCounts aggregate_counts(PartyState& st) {
  const std::size_t cells = std::size_t(st.config.cells()) * st.labels.size();
  ClassCounts aggregated(st.labels.size(), st.config.cells());
  if (!st.dp) {
    std::vector<std::uint32_t>& values = st.counts.values();
    st.comm.allreduce_sum(values, purpose::kCounts);
    aggregated.values() = std::move(values);
    aggregated.rows_per_class() = st.totals;
  } else if (st.secure) {
    sum_releases_masked(st, aggregated);
  } else {
    const std::vector<std::string> all = st.comm.allgather(encode_release(st.release), purpose::kDpRelease);
    std::vector<std::vector<DpEntry>> releases;
    for (int p = 0; p < st.tau; ++p) releases.push_back(decode_release(all[p], p, st.dp_params->T));
    try {
      aggregated.values() = sum_releases(releases, cells);
    } catch (const Error& e) {
      throw FederationError(e.what());
    }
  }
  if (st.dp)
    postprocess_release(aggregated.values(), st.config.cells(), st.labels.size(), st.config.cell_blocks(st.config.gamma),
                        st.mechanism->noise_scale, st.dp_params->postprocess);
  return aggregated;
}

// Phase 5 without DP: the calibration central training fits (FlyNN::calibrate), from every
// party's loss sums of its sampled rows' leave-one-out scores against the aggregated
// counts. The sums are exact integers (fixed-point losses, row tallies), so their total is
// the pooled rows' whatever the split, and every party chooses the same calibration. One
// masked all-reduce under secure aggregation: a party's sums stay hidden like its counts.
void calibrate_together(PartyState& st) {
  const CalibrationLoss loss = st.local->calibration_loss(*st.sample);
  std::vector<std::uint64_t> sums = loss.totals();
  sums.push_back(loss.rows());
  st.comm.allreduce_sum(std::span<std::uint64_t>(sums), purpose::kCalibration);
  const std::uint64_t rows = sums.back();
  sums.pop_back();
  try {
    st.local->set_calibration(choose_calibration(sums, rows));
  } catch (const Error& e) {
    throw FederationError(e.what());
  }
}

// Phase 5: the released model (the local model with the federation's counts, calibration,
// table and missing-value policy, its DP provenance) and what the party reports about the run.
PartyResult release_model(PartyState& st, ClassCounts aggregated) {
  const auto t = Clock::now();
  st.local->set_counts(std::move(aggregated));
  if (st.dp)
    st.local->set_calibration(dp_calibration());  // from public quantities only
  else
    calibrate_together(st);
  st.local->set_table_schema(std::move(st.table));
  st.local->set_missing_policy(st.settings.missing);  // as central training records it
  PartyResult result(std::move(*st.local));
  if (st.dp) {
    Provenance prov;
    prov.differentially_private = true;
    prov.epsilon = st.settings.dp->epsilon;
    prov.dp_T = st.dp_params->T;
    prov.dp_parties = static_cast<std::uint32_t>(st.tau);
    result.model.set_provenance(prov);
    result.privacy = account(*st.mechanism);
    // The party's own check of the release (local: nothing of it is sent).
    if (st.rows->n_rows > 0 && st.rows->has_labels) {
      try {
        result.release_warning = release_warning(
            check_release(result.model, *st.rows, st.counts, *st.mechanism, static_cast<std::uint32_t>(st.tau)));
      } catch (const Error& e) {  // e.g. rows the model cannot score: said locally, never sent
        result.release_warning = std::string("the released model could not be checked on this party's rows: ") + e.what();
      }
    }
  }
  st.times.finalize = since(t);
  st.times.total = since(st.t_start);
  result.rank = st.rank;
  result.parties = st.tau;
  result.backend = st.comm.backend();
  result.rows = st.rows->n_rows;
  result.seed_drawn = !st.seed_given;
  result.timings = st.times;
  result.control_traffic = st.control;
  result.aggregate_traffic = st.aggregate_traffic;
  return result;
}

}  // namespace

PartyResult train_party(Communicator& comm, const PartyInput& input,
                        const FederationSettings& settings) {
  PartyState st(comm, input, settings);
  const std::vector<Hello> hellos = agree_on_config(st);
  sum_row_totals(st, hellos);
  agree_on_statistics(st);
  st.times.agree = since(st.t_start);

  // The aggregation all-reduce's size is known now: let the transport prepare it (e.g.
  // precompute masks) while this party counts.
  if (!st.dp || st.secure)
    comm.expect_allreduce(std::size_t(st.config.cells()) * st.labels.size(), st.dp ? 8 : 4,
                          st.dp ? purpose::kDpRelease : purpose::kCounts, 1);  // after the status
  const std::string local_error = count_locally(st);
  auto t = Clock::now();
  agree_on_status(comm, local_error, std::string(purpose::kTrainingStatus));
  st.times.wait = since(t);
  st.control = comm.traffic();

  t = Clock::now();
  ClassCounts aggregated = aggregate_counts(st);
  st.times.aggregate = since(t);
  st.aggregate_traffic = comm.traffic() - st.control;
  st.times.training = since(st.t_start);
  // Catches a party whose counts disagree with the totals it announced. Not under DP.
  if (!st.dp) check_aggregated_counts(aggregated, st.totals, st.config.codes_per_row(), st.labels, st.secure);
  return release_model(st, std::move(aggregated));
}

std::vector<PartyReport> compare_models(Communicator& comm, const PartyResult& result,
                                        std::string& model_file) {
  model_file = io::serialize_model(result.model);
  // Row counts, and the timings that grow with them, are withheld where they are private:
  // under DP (not covered by the mechanism) and under secure aggregation (the coordinator
  // must learn sums only). The block keeps its size either way (zeros in their place), so
  // its length tells nothing either.
  const bool withhold = result.model.provenance().differentially_private ||
                        comm.secure_aggregation();
  PartyReport mine;
  mine.rank = comm.rank();
  if (!withhold) {
    mine.rows = result.rows;
    mine.timings = result.timings;
  }
  mine.control_traffic = result.control_traffic;
  mine.aggregate_traffic = result.aggregate_traffic;
  mine.model_crc32 = io::model_checksum(model_file);
  mine.model_bytes = model_file.size();
  mine.model_sha256 = ossl::sha256(model_file);
  // Over gRPC the report block is signed by its party: the digest in it is what that party
  // signed it would write.
  const std::vector<std::string> all = comm.allgather(encode_report(mine), purpose::kReport);
  std::vector<PartyReport> reports;
  for (int p = 0; p < static_cast<int>(all.size()); ++p) reports.push_back(decode_report(all[p], p));
  for (const PartyReport& rep : reports) {
    if (rep.model_sha256 != mine.model_sha256 || rep.model_crc32 != mine.model_crc32 ||
        rep.model_bytes != mine.model_bytes)
      throw FederationError(fmt::format(
          "parties hold different models: this party (party {}) sha256 {} (crc32 {:08x}, {} bytes), party {} "
          "sha256 {} (crc32 {:08x}, {} bytes)",
          mine.rank, ossl::hex(mine.model_sha256), mine.model_crc32, mine.model_bytes, rep.rank,
          ossl::hex(rep.model_sha256), rep.model_crc32, rep.model_bytes));
  }
  return reports;
}

namespace {

// This party's confusion matrix of its test rows under `model` (row: true class).
std::vector<std::uint64_t> local_confusion(const FlyNN& model, const Dataset& test) {
  const std::size_t L = model.labels().size();
  if (!test.has_labels) throw Error("the test rows have no labels");
  std::size_t unknown = 0;
  const std::vector<std::uint32_t> truth = io::truth_ids(test, model.labels(), &unknown);
  if (unknown > 0)
    throw Error(fmt::format("{} test row{} ha{} a label outside the federation's label list ({})", unknown,
                            unknown == 1 ? "" : "s", unknown == 1 ? "s" : "ve", model.labels().joined()));
  const std::vector<std::uint32_t> predicted = model.predict(test);
  std::vector<std::uint64_t> confusion(L * L, 0);
  for (std::size_t r = 0; r < truth.size(); ++r) ++confusion[std::size_t(truth[r]) * L + predicted[r]];
  return confusion;
}

}  // namespace

FederatedEvaluation evaluate_together(Communicator& comm, const FlyNN& model, const Dataset* test,
                                      const std::string& local_error) {
  const std::size_t L = model.labels().size();
  std::vector<std::uint64_t> confusion(L * L, 0);
  std::string error = local_error;
  if (error.empty() && test) {
    try {
      confusion = local_confusion(model, *test);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  // Under DP or secure aggregation a reason may quote the party's rows: it stays here.
  const bool rows_private = model.provenance().differentially_private || comm.secure_aggregation();
  const std::string sent =
      error.empty() || !rows_private ? error : "this party could not read or score its test rows (its reason stays with it)";
  io::ByteWriter w;
  w.u8(test && error.empty() ? 1 : 0);
  w.str(detail::bounded_reason(sent));
  const std::vector<std::string> all = comm.allgather(w.data(), purpose::kEvaluationStatus);
  FederatedEvaluation ev;
  ev.classes = L;
  ev.parties = static_cast<int>(all.size());
  std::string failures;
  for (int p = 0; p < static_cast<int>(all.size()); ++p) {
    io::ByteReader r = message_reader(all[p], p, "evaluation status");
    const std::uint8_t gives = r.u8("gives test rows");
    const std::string err = r.str();
    r.done();
    if (gives > 1) throw FederationError(fmt::format("party {} sent an evaluation status of {}", p, gives));
    ev.parties_with_rows += gives;
    if (!err.empty())
      failures += fmt::format("{}{}", failures.empty() ? "" : "; ", relayed_from(fmt::format("party {}", p), err));
  }
  if (!failures.empty())
    throw FederationError(fmt::format("{} failed: {}", purpose::kEvaluationStatus, failures),
                          sent != error ? error : std::string());
  if (ev.parties_with_rows == 0) {
    ev.skipped = "no party gave test rows";
    return ev;
  }
  if (ev.parties_with_rows == 1 && ev.parties > 1) {
    ev.skipped = "only one party gave test rows: their sum would be that party's own confusion matrix";
    return ev;
  }
  comm.allreduce_sum(std::span<std::uint64_t>(confusion), purpose::kEvaluation);
  ev.confusion = std::move(confusion);
  // From the matrix itself, not row by row through ClassTally: the sum comes from other
  // parties, and a liar's 2^63 in a cell must not become a loop of 2^63 steps.
  double recall_sum = 0;
  std::size_t present = 0;
  std::uint64_t correct = 0;
  for (std::size_t t = 0; t < L; ++t) {
    std::uint64_t support = 0;
    for (std::size_t p = 0; p < L; ++p) support += ev.confusion[t * L + p];
    ev.rows += support;
    correct += ev.confusion[t * L + t];
    if (support == 0) continue;
    ++present;
    recall_sum += static_cast<double>(ev.confusion[t * L + t]) / static_cast<double>(support);
  }
  ev.accuracy = ev.rows ? static_cast<double>(correct) / static_cast<double>(ev.rows) : 0.0;
  ev.balanced_accuracy = present ? recall_sum / static_cast<double>(present) : 0.0;
  return ev;
}

// ---- the local examination of a party's data -------------------------------------------------

DataExamination examine_party_data(const FederationSettings& settings, const LabelSet& labels, int parties,
                                   const Dataset& data) {
  DataExamination out;
  const bool dp = settings.dp.has_value();
  const auto note = [&](const std::function<void()>& check) {
    try {
      check();
    } catch (const std::exception& e) {
      out.problems.emplace_back(e.what());
    }
  };
  try {
    check_labels(data, labels);  // "data.csv:9: label 'zebra' is not one of …"
  } catch (const std::exception& e) {
    out.problems.emplace_back(e.what());
    out.quotes_rows = true;
  }
  // The feature set: from the public schema when there is one; under DP a table with
  // categorical columns must have one (its categories would come from its rows).
  if (settings.schema) {
    note([&] { check_fits_public_schema(data, *settings.schema); });
  } else if (dp && data.schema.has_categorical()) {
    std::vector<std::string> text;
    for (std::size_t k = 0; k < data.schema.columns.size(); ++k)
      if (data.schema.columns[k].categorical())
        text.push_back(data.schema.named ? data.schema.columns[k].name : fmt::format("column {}", k + 1));
    out.problems.push_back(fmt::format(
        "the data has text (categorical) columns ({}): under DP their categories must come from "
        "public knowledge, not the rows, so give every party the same public schema with "
        "--schema FILE (`flynn schema` writes one from a public sample; docs/guide/federated.md, "
        "\"Public schema under DP\")",
        quoted_names(text)));
  }
  if (dp && settings.missing == MissingPolicy::Mean && data.schema.fill.empty() && has_missing(data))
    out.problems.emplace_back(
        "the data has missing cells: with --dp the federation's column means that would fill "
        "them are statistics the DP release does not protect; use --missing zero, give public "
        "fill values in the --schema file, or fill them before training");
  // Under DP the default variant is the paper's: standardising variants' statistics are
  // not protected by the release (an explicit --variant is checked below).
  HyperParams hyper = settings.hyper;
  if (dp && !hyper.variant) hyper.variant = Variant{};
  std::optional<FlyConfig> config;
  note([&] { config = hyper.resolve(static_cast<std::uint32_t>(data.n_features), labels.size()); });
  if (!config) return out;
  if (settings.feature_stats) note([&] { io::check_feature_stats_fit(*settings.feature_stats, *config); });
  if (dp && config->variant.standardize && !settings.feature_stats)
    out.problems.push_back(fmt::format(
        "variant {} standardises features with training statistics, which the DP release "
        "does not protect: give public statistics with --feature-stats FILE (Python: feature_stats=), or use "
        "--variant paper or sign",
        variant_name(config->variant)));
  if (dp)
    note([&] {
      // The one place --dp-T auto becomes a number: from ε, τ and m·L, which every party
      // knows identically (the fingerprint compares them), so every party fixes the same T.
      const auto tau = static_cast<std::uint32_t>(std::max(parties, 1));
      const DpParams resolved = settings.dp->resolved(std::uint64_t(config->cells()) * labels.size(), tau);
      // Also the exact noise scale 2Tτ/ε must be representable: refuse now, not mid-run.
      const DpMechanism check(resolved, tau);
      out.dp_params = resolved;
    });
  out.config = config;
  return out;
}

}  // namespace flynn::federated
