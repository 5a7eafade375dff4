// Under DP nothing derived from a party's rows leaves it except the noised release: a
// category that occurs in one row of one party is in no message and
// no file once the federation reads its tables against a public schema, and without one a
// DP federation over a table with text columns is refused naming --schema. Also: messages
// that quote rows stay at their party, per-party timings are withheld under DP and secure
// aggregation, and under secure aggregation the row-total checks are applied to the sums.
#include <gtest/gtest.h>

#include <mutex>
#include <span>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flynn/build_config.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/communicator.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/public_schema.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "pki.hpp"
#include "public_schema_tables.hpp"
#include "test_support.hpp"

#if FLYNN_HAVE_GRPC
#include "flynn/federated/grpc.hpp"
#endif

namespace flynn::federated {
namespace {

using test::kSchemaJson;
using test::kSecret;
using test::party_table;

io::LoadOptions party_options() {
  io::LoadOptions o;
  o.impute = false;  // as DataOptions::party_load_options
  return o;
}

std::vector<Dataset> tables(const PublicSchema* schema, int parties = 3) {
  std::vector<Dataset> out;
  for (int p = 0; p < parties; ++p) {
    const io::LoadOptions o = schema ? public_schema_load_options(party_options(), *schema) : party_options();
    out.push_back(io::parse_csv(party_table(p), o, fmt::format("party{}.csv", p)));
  }
  return out;
}

FederationSettings settings_for(bool dp) {
  FederationSettings s;
  s.hyper.m = 128;
  s.hyper.rho = 8;
  s.hyper.seed = 5;
  s.labels = LabelSet::parse_list("a,b");
  s.threads = 1;
  if (dp) {
    DpParams p;
    p.epsilon = 4;
    p.T = 12;
    s.dp = p;
  }
  return s;
}

// ---- a colony whose every payload is recorded ----------------------------------------------

// Every byte string any party sends or receives.
struct Recorder {
  std::mutex mutex;
  std::vector<std::string> seen;
  void add(std::string_view bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.emplace_back(bytes);
  }
  template <class T>
  void add(std::span<T> values) {
    add(std::string_view(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  }
  bool contains(const std::string& needle) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const std::string& s : seen)
      if (s.find(needle) != std::string::npos) return true;
    return false;
  }
};

// A party's endpoint that records its traffic and may claim secure aggregation, so the
// protocol takes its secure-aggregation paths over threads.
class RecordingComm final : public Communicator {
 public:
  RecordingComm(Communicator& inner, Recorder& rec, bool secure) : inner_(inner), rec_(rec), secure_(secure) {}
  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string backend() const override { return "recorded threads"; }
  bool secure_aggregation() const override { return secure_; }

 protected:
  void do_broadcast(std::string& bytes, int root) override {
    rec_.add(bytes);
    inner_.broadcast(bytes, root);
    rec_.add(bytes);
  }
  void do_allreduce(std::span<std::uint32_t> v) override {
    rec_.add(v);
    inner_.allreduce_sum(v);
    rec_.add(v);
  }
  void do_allreduce(std::span<std::uint64_t> v) override {
    rec_.add(v);
    inner_.allreduce_sum(v);
    rec_.add(v);
  }
  std::vector<std::string> do_allgather(std::string_view mine) override {
    rec_.add(mine);
    std::vector<std::string> all = inner_.allgather(mine);
    for (const std::string& b : all) rec_.add(b);
    return all;
  }

 private:
  Communicator& inner_;
  Recorder& rec_;
  bool secure_;
};

struct ColonyRun {
  std::vector<std::string> models;    // each party's model file ("" when it failed)
  std::vector<std::string> errors;    // each party's error ("" = none)
  std::vector<std::string> details;   // FederationError::local_detail of each party
  std::vector<std::vector<PartyReport>> reports;
};

ColonyRun run_recorded(const std::vector<PartyInput>& inputs, const FederationSettings& settings,
                       bool secure, Recorder& rec) {
  const int tau = static_cast<int>(inputs.size());
  ThreadColony colony(tau);
  ColonyRun run;
  run.models.resize(tau);
  run.errors.resize(tau);
  run.details.resize(tau);
  run.reports.resize(tau);
  std::vector<std::thread> threads;
  for (int p = 0; p < tau; ++p)
    threads.emplace_back([&, p] {
      RecordingComm comm(colony.party(p), rec, secure);
      try {
        const PartyResult result = train_party(comm, inputs[p], settings);
        run.reports[p] = compare_models(comm, result, run.models[p]);
      } catch (const FederationError& e) {
        run.errors[p] = e.what();
        run.details[p] = e.local_detail();
      } catch (const std::exception& e) {
        run.errors[p] = e.what();
        colony.abort(e.what());
      }
    });
  for (auto& t : threads) t.join();
  return run;
}

std::vector<PartyInput> inputs_of(const std::vector<Dataset>& data) {
  std::vector<PartyInput> in;
  for (const Dataset& d : data) in.push_back(PartyInput{&d, ""});
  return in;
}

// ---- the public schema keeps a row's category out of every message and file ------------------

TEST(DpPublicSchema, WithoutSchemaDpOverTextColumnsIsRefusedNamingTheFlag) {
  const std::vector<Dataset> data = tables(nullptr);
  ASSERT_TRUE(data[1].schema.has_categorical());
  Recorder rec;
  const ColonyRun run = run_recorded(inputs_of(data), settings_for(true), false, rec);
  for (int p = 0; p < 3; ++p) {
    EXPECT_NE(run.errors[p].find("--schema FILE"), std::string::npos) << run.errors[p];
    EXPECT_EQ(run.errors[p].find(kSecret), std::string::npos) << run.errors[p];
    EXPECT_TRUE(run.models[p].empty());
  }
  EXPECT_FALSE(rec.contains(kSecret));
  // The same through the threads simulator the CLI and Python use.
  try {
    run_colony({&data[0], &data[1], &data[2]}, settings_for(true));
    ADD_FAILURE() << "no error";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("--schema"), std::string::npos) << e.what();
  }
}

TEST(DpPublicSchema, CategoryOfOneRowIsInNoMessageAndNoModel) {
  const PublicSchema schema = parse_public_schema(kSchemaJson, "schema.json");
  const std::vector<Dataset> data = tables(&schema);
  // Read against the schema, the secret row's colour is an all-zero block: d stays 5.
  EXPECT_EQ(data[1].n_features, 5u);
  EXPECT_EQ(data[1].row(0)[2] + data[1].row(0)[3] + data[1].row(0)[4], 0.0f);
  EXPECT_EQ(data[1].row(1)[2] + data[1].row(1)[3] + data[1].row(1)[4], 1.0f);
  for (const bool secure : {false, true}) {
    Recorder rec;
    FederationSettings s = settings_for(true);
    s.schema = schema;
    const ColonyRun run = run_recorded(inputs_of(data), s, secure, rec);
    for (int p = 0; p < 3; ++p) {
      ASSERT_EQ(run.errors[p], "") << "secure " << secure;
      EXPECT_EQ(run.models[p], run.models[0]);
      EXPECT_EQ(run.models[p].find(kSecret), std::string::npos);
    }
    EXPECT_FALSE(rec.contains(kSecret)) << "secure " << secure;
    const FlyNN model = io::deserialize_model(run.models[0], "model");
    EXPECT_EQ(model.table_schema(), schema.table);  // only the schema's categories
    EXPECT_TRUE(model.provenance().differentially_private);
  }
  // The test has power: without DP or schema the category travels in the agreement's
  // fingerprint (the others refuse party 1, naming the text column whose categories differ),
  // and party 1 alone would store it in its model.
  Recorder rec;
  const std::vector<Dataset> own = tables(nullptr);
  const ColonyRun run = run_recorded(inputs_of(own), settings_for(false), false, rec);
  EXPECT_NE(run.errors[0].find("the categories of its text column 'colour' differ"), std::string::npos)
      << run.errors[0];
  EXPECT_TRUE(rec.contains(kSecret));
  Recorder alone_rec;
  const ColonyRun alone = run_recorded({PartyInput{&own[1], ""}}, settings_for(false), false, alone_rec);
  ASSERT_EQ(alone.errors[0], "");
  EXPECT_NE(alone.models[0].find(kSecret), std::string::npos);
}

TEST(DpPublicSchema, PartiesAgreeOnTheSchemaByDigest) {
  const PublicSchema schema = parse_public_schema(kSchemaJson, "schema.json");
  std::string other_json = kSchemaJson;
  other_json.replace(other_json.find("\"red\""), 5, "\"teal\"");  // same d, other categories
  const PublicSchema other = parse_public_schema(other_json, "other.json");
  EXPECT_NE(public_schema_digest(schema), public_schema_digest(other));
  std::vector<Dataset> data = tables(&schema);
  data[2] = io::parse_csv(party_table(2), public_schema_load_options(party_options(), other), "party2.csv");
  // A settings copy per party: party 2 has the other schema. Run by hand over threads.
  ThreadColony colony(3);
  std::vector<std::string> errors(3);
  std::vector<std::thread> threads;
  for (int p = 0; p < 3; ++p)
    threads.emplace_back([&, p] {
      FederationSettings s = settings_for(true);
      s.schema = p == 2 ? other : schema;
      try {
        train_party(colony.party(p), PartyInput{&data[p], ""}, s);
      } catch (const FederationError& e) {
        errors[p] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int p = 0; p < 3; ++p) {
    EXPECT_NE(errors[p].find("party 2 is refused: its public schema differs"), std::string::npos) << errors[p];
    EXPECT_EQ(errors[p].find("teal"), std::string::npos) << errors[p];  // a digest, not the categories
  }
}

TEST(DpPublicSchema, DataNotReadAgainstTheSchemaIsRefused) {
  const PublicSchema schema = parse_public_schema(kSchemaJson, "schema.json");
  const std::vector<Dataset> own = tables(nullptr);  // categories from the rows: 4 colours
  FederationSettings s = settings_for(true);
  s.schema = schema;
  try {
    run_colony({&own[0], &own[1]}, s);
    ADD_FAILURE() << "no error";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("public schema"), std::string::npos) << e.what();
  }
  // (Party 0's own table holds exactly the schema's colours, so it fits: the check
  // compares what the model would store, however the table was read.)
  EXPECT_NO_THROW(check_fits_public_schema(own[0], schema));
  EXPECT_THROW(check_fits_public_schema(own[1], schema), Error);
}

TEST(DpPublicSchema, AllNumericTablesNeedNoSchemaUnderDp) {
  const Dataset a = io::parse_csv("x,y,label\n1,2,a\n3,4,b\n2,2,a\n", party_options(), "a.csv");
  const Dataset b = io::parse_csv("x,y,label\n1,1,b\n3,3,a\n4,4,b\n", party_options(), "b.csv");
  const ColonyOutcome out = run_colony({&a, &b}, settings_for(true));
  EXPECT_EQ(out.model.table_schema().n_features(), 2u);
  EXPECT_FALSE(out.model.table_schema().has_categorical());
}

// ---- messages that quote rows stay at their party ------------------------------------------

TEST(DpPublicSchema, ALoadersMessageQuotingARowStaysAtItsParty) {
  const PublicSchema schema = parse_public_schema(kSchemaJson, "schema.json");
  std::vector<Dataset> data = tables(&schema);
  // Party 1's numeric column holds text: the loader's message names the cell.
  std::string bad = party_table(1);
  bad.replace(bad.find("\n1,") + 1, 1, "secret-cell");
  std::string load_error;
  try {
    io::parse_csv(bad, public_schema_load_options(party_options(), schema), "party1.csv");
  } catch (const Error& e) {
    load_error = e.what();
  }
  ASSERT_NE(load_error.find("secret-cell"), std::string::npos) << load_error;
  for (const bool dp : {true, false}) {
    for (const bool secure : {false, true}) {
      std::vector<PartyInput> in = inputs_of(data);
      in[1] = PartyInput{nullptr, load_error};
      FederationSettings s = settings_for(dp);
      s.schema = schema;
      Recorder rec;
      const ColonyRun run = run_recorded(in, s, secure, rec);
      const bool kept = dp || secure;
      for (int p = 0; p < 3; ++p) {
        EXPECT_NE(run.errors[p].find("party 1 says:"), std::string::npos) << run.errors[p];
        // Under DP or secure aggregation the others hear only that party 1 failed.
        EXPECT_EQ(run.errors[p].find("secret-cell") == std::string::npos, kept) << run.errors[p];
      }
      EXPECT_EQ(rec.contains("secret-cell"), !kept) << dp << secure;
      EXPECT_EQ(run.details[1].find("secret-cell") != std::string::npos, kept) << run.details[1];
      EXPECT_EQ(run.details[0], "");
    }
  }
}

TEST(DpPublicSchema, AnUnknownLabelStaysAtItsParty) {
  const PublicSchema schema = parse_public_schema(kSchemaJson, "schema.json");
  std::vector<Dataset> data = tables(&schema);
  std::string t = party_table(2);
  t.replace(t.rfind(",a\n"), 3, ",secret-label\n");
  data[2] = io::parse_csv(t, public_schema_load_options(party_options(), schema), "party2.csv");
  FederationSettings s = settings_for(true);
  s.schema = schema;
  Recorder rec;
  const ColonyRun run = run_recorded(inputs_of(data), s, false, rec);
  for (int p = 0; p < 3; ++p) {
    EXPECT_NE(run.errors[p].find("party 2 says: \"its data cannot be used"), std::string::npos) << run.errors[p];
    EXPECT_EQ(run.errors[p].find("secret-label"), std::string::npos) << run.errors[p];
  }
  EXPECT_NE(run.details[2].find("secret-label"), std::string::npos) << run.details[2];
  EXPECT_FALSE(rec.contains("secret-label"));
}

// ---- reports and secure aggregation's checks ----------------------------------------------

TEST(DpPublicSchema, TimingsAndRowsAreWithheldUnderDpAndSecureAggregation) {
  const PublicSchema schema = parse_public_schema(kSchemaJson, "schema.json");
  const std::vector<Dataset> data = tables(&schema);
  for (const bool dp : {false, true}) {
    for (const bool secure : {false, true}) {
      FederationSettings s = settings_for(dp);
      s.schema = schema;
      Recorder rec;
      const ColonyRun run = run_recorded(inputs_of(data), s, secure, rec);
      const bool withheld = dp || secure;
      for (int p = 0; p < 3; ++p) {
        ASSERT_EQ(run.errors[p], "");
        for (const PartyReport& r : run.reports[p]) {
          EXPECT_EQ(r.timings.has_value(), !withheld) << dp << secure;
          EXPECT_EQ(r.rows.has_value(), !withheld) << dp << secure;
        }
      }
    }
  }
  // The simulator, which runs every party, still reports every party's timings.
  FederationSettings s = settings_for(true);
  s.schema = schema;
  const ColonyOutcome out = run_colony({&data[0], &data[1], &data[2]}, s);
  for (const PartyReport& r : out.reports) EXPECT_TRUE(r.timings.has_value());
}

TEST(DpPublicSchema, SecureAggregationAppliesTheRowTotalChecksToTheSums) {
  // Every party holds rows of class "a" only: a classifier needs two classes.
  std::vector<Dataset> data;
  for (int p = 0; p < 3; ++p)
    data.push_back(io::parse_csv(fmt::format("{},1,a\n{},2,a\n", p, p + 1), party_options(), "a.csv"));
  for (const bool secure : {false, true}) {
    Recorder rec;
    const ColonyRun run = run_recorded(inputs_of(data), settings_for(false), secure, rec);
    for (int p = 0; p < 3; ++p)
      EXPECT_NE(run.errors[p].find("rows of 1 class in total: a classifier needs at least two"),
                std::string::npos)
          << "secure " << secure << ": " << run.errors[p];
  }
  // Two classes between them (none holds both): both paths train the same model.
  data[1] = io::parse_csv("1,1,b\n2,2,b\n", party_options(), "b.csv");
  Recorder r1, r2;
  const ColonyRun clear = run_recorded(inputs_of(data), settings_for(false), false, r1);
  const ColonyRun masked = run_recorded(inputs_of(data), settings_for(false), true, r2);
  ASSERT_EQ(clear.errors[0], "");
  ASSERT_EQ(masked.errors[0], "");
  EXPECT_EQ(clear.models[0], masked.models[0]);
}

// ---- the schema file ------------------------------------------------------------------------

TEST(PublicSchemaFile, RoundTripsAndNormalisesPositionalSchemas) {
  const PublicSchema s = parse_public_schema(kSchemaJson, "s.json");
  EXPECT_TRUE(s.table.named);
  EXPECT_EQ(s.features, 5u);
  EXPECT_EQ(s.table.label_name, "label");
  EXPECT_EQ(parse_public_schema(public_schema_json(s), "again.json"), s);
  // Five unnamed numeric columns say no more than "features": 5.
  const PublicSchema cols = parse_public_schema(
      R"({"format": "flynn table schema", "version": 1, "columns": [{}, {}, {}, {}, {}]})", "c.json");
  const PublicSchema d5 =
      parse_public_schema(R"({"format": "flynn table schema", "version": 1, "features": 5})", "d.json");
  EXPECT_TRUE(cols.table.empty());
  EXPECT_EQ(cols, d5);
  EXPECT_EQ(public_schema_digest(cols), public_schema_digest(d5));
  EXPECT_NE(public_schema_digest(s), public_schema_digest(d5));
  // With fill values.
  const PublicSchema f = parse_public_schema(
      R"({"format": "flynn table schema", "version": 1, "columns": [{"name": "x"}, {"name": "c",
          "categories": ["u", "v"]}], "label": "y", "fill": [0.1, 0, 0]})", "f.json");
  EXPECT_EQ(f.table.fill, (std::vector<float>{0.1f, 0, 0}));
  EXPECT_EQ(parse_public_schema(public_schema_json(f), "f2.json"), f);
}

TEST(PublicSchemaFile, MalformedFilesAreNamed) {
  auto error = [](const std::string& body) {
    try {
      parse_public_schema("{\"format\": \"flynn table schema\", \"version\": 1" + body + "}", "bad.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("").find("give the table's \"columns\""), std::string::npos);
  EXPECT_NE(error(", \"colums\": []").find("unknown key \"colums\""), std::string::npos);
  EXPECT_NE(error(", \"columns\": [{\"name\": \"a\"}, {}]").find("every column has a \"name\" or none"),
            std::string::npos);
  EXPECT_NE(error(", \"columns\": [{\"categories\": [\"u\", \"u\"]}]").find("twice"), std::string::npos);
  EXPECT_NE(error(", \"columns\": [{\"categories\": [\"NA\"]}]").find("no cell can hold"), std::string::npos);
  EXPECT_NE(error(", \"columns\": [{\"categories\": [\" u\"]}]").find("no cell can hold"), std::string::npos);
  EXPECT_NE(error(", \"columns\": [{}], \"features\": 2").find("make 1 features"), std::string::npos);
  EXPECT_NE(error(", \"columns\": [{}, {}], \"fill\": [1]").find("1 fill values for 2"), std::string::npos);
  EXPECT_NE(error(", \"columns\": [{}], \"label\": \"y\"").find("named table"), std::string::npos);
  EXPECT_NE(error(", \"columns\": [{\"name\": \"y\"}], \"label\": \"y\"").find("also a feature"),
            std::string::npos);
  EXPECT_NE(error(", \"features\": 0").find("[1, 2^32 - 1]"), std::string::npos);
  EXPECT_NE(error(", \"features\": 3,").find("not a JSON schema file"), std::string::npos);
  try {
    parse_public_schema(R"({"format": "flynn table schema", "version": 2, "features": 1})", "v.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("version 2"), std::string::npos) << e.what();
  }
}

// ---- over gRPC: what the coordinator receives, what the parties write -----------------------

#if FLYNN_HAVE_GRPC

// Three parties with secure aggregation in this process; every Contribution payload the
// coordinator receives is recorded, and the coordinator asks for the model.
struct GrpcRun {
  std::vector<std::string> payloads;
  std::vector<std::string> models;
  std::string coordinator_model;
  std::vector<std::string> errors;
};

GrpcRun grpc_run(const std::string& pki, const std::vector<Dataset>& data, const FederationSettings& base) {
  CoordinatorOptions o;
  o.listen = "127.0.0.1:0";
  o.parties = static_cast<int>(data.size());
  o.tls = {pki + "/ca.pem", pki + "/server.pem", pki + "/server.key"};
  o.deadline_seconds = 60;
  o.secure_aggregation = true;
  o.wants_model = true;
  o.settings.labels = base.labels;
  o.settings.hyper = base.hyper;
  o.settings.dp = base.dp;
  GrpcRun run;
  std::mutex mutex;
  o.observe = [&](int, std::uint64_t, const std::string&, std::string_view payload) {
    std::lock_guard<std::mutex> lock(mutex);
    run.payloads.emplace_back(payload);
  };
  Coordinator coordinator(o);
  run.models.resize(data.size());
  run.errors.resize(data.size());
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < data.size(); ++p)
    threads.emplace_back([&, p] {
      try {
        JoinOptions j;
        j.server = fmt::format("127.0.0.1:{}", coordinator.port());
        j.tls = {pki + "/ca.pem", fmt::format("{}/party{}.pem", pki, p), fmt::format("{}/party{}.key", pki, p)};
        auto comm = GrpcParty::join(j);
        FederationSettings s = base;
        s.hyper = comm->settings().hyper;
        s.dp = comm->settings().dp;
        const PartyResult result = train_party(*comm, PartyInput{&data[p], ""}, s);
        compare_models(*comm, result, run.models[p]);
        comm->finish(run.models[p]);
      } catch (const std::exception& e) {
        run.errors[p] = e.what();
      }
    });
  try {
    run.coordinator_model = coordinator.run().model_file;
  } catch (const std::exception& e) {
    run.errors.push_back(std::string("coordinator: ") + e.what());
  }
  for (auto& t : threads) t.join();
  return run;
}

bool any_contains(const std::vector<std::string>& blobs, const std::string& needle) {
  for (const std::string& b : blobs)
    if (b.find(needle) != std::string::npos) return true;
  return false;
}

TEST(DpPublicSchemaGrpc, CoordinatorReceivesNoCategoryOfTheRows) {
  test::TempDir dir;
  test::make_federation_pki(dir.file("pki"), {"party0", "party1", "party2"});
  const PublicSchema schema = parse_public_schema(kSchemaJson, "schema.json");
  FederationSettings s = settings_for(true);
  s.schema = schema;
  const GrpcRun run = grpc_run(dir.file("pki"), tables(&schema), s);
  for (const std::string& e : run.errors) EXPECT_EQ(e, "");
  ASSERT_FALSE(run.payloads.empty());
  EXPECT_FALSE(any_contains(run.payloads, kSecret));
  EXPECT_FALSE(any_contains(run.models, kSecret));
  ASSERT_FALSE(run.coordinator_model.empty());
  EXPECT_EQ(run.coordinator_model, run.models[0]);
  EXPECT_EQ(run.coordinator_model.find(kSecret), std::string::npos);
  // Power: without DP and schema the coordinator reads the category in the agreement
  // (whose tables then differ: the federation is refused, after the coordinator saw it).
  const GrpcRun clear = grpc_run(dir.file("pki"), tables(nullptr), settings_for(false));
  EXPECT_NE(clear.errors[0].find("the categories of its text column 'colour' differ"), std::string::npos)
      << clear.errors[0];
  EXPECT_TRUE(any_contains(clear.payloads, kSecret));
}

#endif  // FLYNN_HAVE_GRPC

}  // namespace
}  // namespace flynn::federated
