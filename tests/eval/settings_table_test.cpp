// The table of settings (flynn/settings_table.hpp, flynn/federated/settings.hpp): every row
// reaches exactly its own member, and every setting round-trips through the text form the
// CLI and the wire use, into the resolved config, its JSON, the federation fingerprint and
// first_difference. A member of HyperParams or FlyConfig without a row fails to compile
// here (the structured bindings name every member); a row without an example below fails.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <optional>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/federated/dp_settings.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/settings.hpp"
#include "flynn/settings_table.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using federated::SharedSettings;

// Which members of `h` are set, in declaration order. Adding a member to HyperParams
// breaks this binding: add it here and give it a row in the table.
std::vector<bool> given_members(const HyperParams& h) {
  const auto& [m, expansion_factor, s, connection_sparsity, rho, wta_ratio, wta_nnz, gamma, seed,
               preprocess, variant, class_weight, filter_scoring, pairs, paper_half_min_columns,
               value_transform] = h;
  return {m.has_value(),   expansion_factor.has_value(), s.has_value(),
          connection_sparsity.has_value(), rho.has_value(), wta_ratio.has_value(),
          wta_nnz.has_value(), gamma.has_value(), seed.has_value(), preprocess.has_value(),
          variant.has_value(), class_weight.has_value(), filter_scoring.has_value(), pairs.has_value(),
          paper_half_min_columns.has_value(), value_transform.has_value()};
}

// A valid config, and one copy per member of FlyConfig with only that member changed (in
// declaration order). Adding a member to FlyConfig breaks this binding.
FlyConfig base_config() {
  FlyConfig c;
  c.input_dim = 6;
  c.m = 200;
  c.s = 3;
  c.rho = 10;
  c.gamma = 0.5;
  c.seed = 11;
  c.preprocess = Preprocess::Normalize;
  c.variant = Variant{};
  return c;
}

std::vector<FlyConfig> one_member_changed() {
  std::vector<FlyConfig> out;
  auto changed = [&out](auto edit) {
    FlyConfig c = base_config();
    auto& [d, m, s, rho, gamma, seed, preprocess, variant, class_weight, filter_scoring, pairs,
           paper_half_min_columns, value_transform] = c;
    edit(d, m, s, rho, gamma, seed, preprocess, variant, class_weight, filter_scoring, pairs, paper_half_min_columns,
         value_transform);
    out.push_back(c);
  };
  changed([](auto& d, auto&...) { d = 7; });
  changed([](auto&, auto& m, auto&...) { m = 201; });
  changed([](auto&, auto&, auto& s, auto&...) { s = 4; });
  changed([](auto&, auto&, auto&, auto& rho, auto&...) { rho = 11; });
  changed([](auto&, auto&, auto&, auto&, auto& gamma, auto&...) { gamma = 0.25; });
  changed([](auto&, auto&, auto&, auto&, auto&, auto& seed, auto&...) { seed = 12; });
  changed([](auto&, auto&, auto&, auto&, auto&, auto&, auto& pre, auto&...) { pre = Preprocess::None; });
  changed([](auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto& v, auto&, auto&, auto&, auto&, auto&) { v = parse_variant("sign"); });
  changed([](auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto& w, auto&, auto&, auto&, auto&) { w = ClassWeight::parse("balanced"); });
  changed([](auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto& f, auto&, auto&, auto&) { f = FilterScoring::Relative; });
  changed([](auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto& p, auto&, auto&) { p = 2; });
  changed([](auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto& q, auto&) { q = 5; });
  changed([](auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto&, auto& t) {
    t = ValueTransform::Log1p;
  });
  return out;
}

// A non-default value of every hyper-parameter for d = 6, and the config field it moves.
struct Example {
  std::string text;
  std::string config_field;  // the ConfigField::name resolve() changes
  // Another setting both configs of the round trip share, where the row needs one (a
  // paper-half variant for paper_half_min_columns: d = 6 defaults to anchor).
  std::optional<Variant> variant = std::nullopt;
};
const std::map<std::string, Example>& hyper_examples() {
  static const std::map<std::string, Example> e = {
      {"m", {"300", "m"}},
      {"expansion_factor", {"40.5", "m"}},
      {"s", {"4", "s"}},
      {"connection_sparsity", {"0.875", "s"}},  // exact in binary: the text reads back as written
      {"rho", {"20", "rho"}},
      {"wta_ratio", {"0.125", "rho"}},
      {"wta_nnz", {"30", "rho"}},
      {"gamma", {"0.25", "gamma"}},
      {"seed", {"18446744073709551615", "seed"}},
      {"preprocess", {"none", "preprocess"}},
      {"variant", {"standardize+anchors=4", "variant"}},  // d = 6: the default is anchor, same s, ρ
      {"class_weight", {"yes=5,no=0.5", "class_weight"}},
      {"filter_scoring", {"absolute", "filter scoring"}},  // d = 6: the default (anchor) scores relatively
      {"pairs", {"3", "pairs"}},
      {"paper_half_min_columns", {"5", "paper_half_min_columns", parse_variant("anchor+paper")}},
      {"value_transform", {"log1p", "value_transform"}},  // d = 6: anchor, which standardises
  };
  return e;
}

TEST(SettingsTable, EveryHyperParamsMemberHasExactlyOneRow) {
  const auto& fields = hyper_param_fields();
  ASSERT_EQ(fields.size(), given_members(HyperParams{}).size());
  std::set<std::string> names, flags;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const HyperParamField& f = fields[i];
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(names.insert(f.name).second);
    EXPECT_TRUE(flags.insert(f.flag).second);
    EXPECT_FALSE(f.help.empty());
    ASSERT_TRUE(hyper_examples().count(f.name)) << "give the new row an example above";
    HyperParams h;
    EXPECT_FALSE(f.get(h));
    f.set(h, parse_setting(f.kind, hyper_examples().at(f.name).text, f.name));
    std::vector<bool> want(fields.size(), false);
    want[i] = true;  // the row reaches its own member, in declaration order, and no other
    EXPECT_EQ(given_members(h), want);
    ASSERT_TRUE(f.get(h));
    EXPECT_EQ(setting_text(*f.get(h)), hyper_examples().at(f.name).text);
    EXPECT_EQ(find_hyper_param(f.name), &f);
  }
  EXPECT_EQ(find_hyper_param("nope"), nullptr);
}

TEST(SettingsTable, EveryFlyConfigMemberHasExactlyOneRow) {
  const auto& fields = config_fields();
  const std::vector<FlyConfig> changed = one_member_changed();
  ASSERT_EQ(fields.size(), changed.size());
  const FlyConfig base = base_config();
  for (std::size_t j = 0; j < changed.size(); ++j)
    for (std::size_t i = 0; i < fields.size(); ++i)
      EXPECT_EQ(fields[i].get(changed[j]) != fields[i].get(base), i == j)
          << fields[i].name << " after changing member " << j;
  for (std::size_t j = 0; j < changed.size(); ++j)
    EXPECT_EQ(base.first_difference(changed[j]), fields[j].name);
}

// CLI text → HyperParams → the wire's (name, value) pairs → HyperParams → resolved config:
// the same value, and the config's JSON, fingerprint and first_difference see the change.
TEST(SettingsTable, EveryHyperParamRoundTripsToTheModelsConfig) {
  const std::uint32_t d = 6;
  const LabelSet labels({"a", "b", "c"});
  HyperParams none;
  none.seed = 1;  // every config below has a seed: the seed row changes it
  for (const HyperParamField& f : hyper_param_fields()) {
    SCOPED_TRACE(f.name);
    const Example& e = hyper_examples().at(f.name);
    HyperParams context = none;
    if (e.variant) context.variant = e.variant;
    const FlyConfig base = context.resolve(d, labels.size());
    SharedSettings given;
    given.labels = labels;
    given.hyper = context;
    f.set(given.hyper, parse_setting(f.kind, e.text, f.name));

    const auto pairs = federated::settings_to_text(given);
    const SharedSettings back = federated::settings_from_text(pairs, labels);
    EXPECT_EQ(federated::settings_to_text(back), pairs);
    ASSERT_TRUE(f.get(back.hyper));
    EXPECT_EQ(setting_text(*f.get(back.hyper)), e.text);

    const FlyConfig c = back.hyper.resolve(d, labels.size());
    EXPECT_EQ(c.first_difference(base), e.config_field);
    EXPECT_EQ(c, given.hyper.resolve(d, labels.size()));
    const ConfigField* row = nullptr;
    for (const ConfigField& cf : config_fields())
      if (cf.name == e.config_field) row = &cf;
    ASSERT_NE(row, nullptr);
    EXPECT_NE(eval::config_json(c)[row->key], eval::config_json(base)[row->key]);
    // The fingerprint sees it, except the seed (agreed separately, party.hpp).
    EXPECT_EQ(federated::fingerprint(c, labels, std::nullopt) !=
                  federated::fingerprint(base, labels, std::nullopt),
              row->fingerprinted);
  }
}

TEST(SettingsTable, JsonDescribeAndPythonKeysComeFromTheTable) {
  const FlyConfig c = base_config();
  const nlohmann::json j = eval::config_json(c);
  EXPECT_EQ(j.size(), config_fields().size());
  for (const ConfigField& f : config_fields()) EXPECT_TRUE(j.contains(f.key)) << f.key;
  EXPECT_EQ(j.dump(), R"({"class_weight":"none","d":6,"filter_scoring":"absolute","gamma":0.5,"m":200,)"
                      R"("pairs":0,"paper_half_min_columns":0,"preprocess":"normalize","rho":10,"s":3,"seed":11,)"
                      R"("value_transform":"none","variant":"paper"})");
  EXPECT_EQ(c.describe(), "d=6, m=200, s=3, rho=10, gamma=0.5, seed=11, preprocess=normalize");
  FlyConfig v = c;
  v.variant = parse_variant("zsign");
  v.gamma = 0.8;
  EXPECT_EQ(v.describe(), "d=6, m=200, s=3, rho=10, gamma=0.8, seed=11, preprocess=normalize, variant=zsign");
  // The fingerprint: the config's rows in table order, the variant after "differential
  // privacy" and only when not paper (the paper's hello blocks as before the table).
  std::vector<std::string> keys;
  for (const auto& [k, value] : federated::fingerprint(v, LabelSet({"a"}), std::nullopt)) keys.push_back(k);
  const std::vector<std::string> want = {"federation protocol", "model format version", "hash version",
                                         "label list", "d (input dimension)", "m", "s", "rho", "gamma",
                                         "preprocess", "differential privacy", "variant"};
  EXPECT_EQ(keys, want);
  // Relative scoring (every variant's default but paper's) is shown and fingerprinted.
  v.filter_scoring = FilterScoring::Relative;
  EXPECT_EQ(v.describe(),
            "d=6, m=200, s=3, rho=10, gamma=0.8, seed=11, preprocess=normalize, variant=zsign, filter_scoring=relative");
  keys.clear();
  for (const auto& [k, value] : federated::fingerprint(v, LabelSet({"a"}), std::nullopt)) keys.push_back(k);
  EXPECT_EQ(keys.back(), "filter scoring");
  std::set<std::string> python;
  for (const ConfigField& f : config_fields()) EXPECT_TRUE(python.insert(f.python).second);
  EXPECT_TRUE(python.count("n_features"));
}

TEST(SettingsTable, FederationSettingsRoundTrip) {
  SharedSettings s;
  s.labels = LabelSet({"x", "y"});
  s.hyper.gamma = 0.1 + 0.2;  // not 0.3: the text is exact
  s.hyper.variant = parse_variant("zsign+paper");
  s.missing = MissingPolicy::Zero;
  federated::DpParams dp;
  dp.epsilon = 2.5;
  dp.T = 40;
  dp.exponent = federated::DpExponent::Reference;
  dp.unit = federated::DpUnit::Record;
  dp.postprocess = federated::DpPostprocess::Threshold;
  s.dp = dp;
  const auto pairs = federated::settings_to_text(s);
  std::set<std::string> names;
  for (const auto& [k, v] : pairs) names.insert(k);
  // Every row of the table that is set travels: the hyper-parameters given, missing, DP.
  for (const char* want : {"gamma", "variant", "missing", "dp_epsilon", "dp_T", "dp_exponent",
                           "dp_unit", "dp_postprocess"})
    EXPECT_TRUE(names.count(want)) << want;
  EXPECT_EQ(names.size(), 8u);
  const SharedSettings back = federated::settings_from_text(pairs, s.labels);
  EXPECT_EQ(*back.hyper.gamma, 0.1 + 0.2);
  EXPECT_EQ(*back.hyper.variant, *s.hyper.variant);
  EXPECT_EQ(back.missing, MissingPolicy::Zero);
  ASSERT_TRUE(back.dp);
  EXPECT_EQ(back.dp->epsilon, 2.5);
  EXPECT_EQ(back.dp->T, 40u);
  EXPECT_EQ(back.dp->exponent, federated::DpExponent::Reference);
  EXPECT_EQ(back.dp->unit, federated::DpUnit::Record);
  EXPECT_EQ(back.dp->postprocess, federated::DpPostprocess::Threshold);
  EXPECT_EQ(back.labels.joined(), "x,y");
  // Nothing given: nothing sent, and nothing read back.
  EXPECT_TRUE(federated::settings_to_text(SharedSettings{}).empty());
  const SharedSettings empty = federated::settings_from_text({}, LabelSet({"a"}));
  EXPECT_FALSE(empty.dp);
  EXPECT_FALSE(empty.missing);
  EXPECT_TRUE(given_members(empty.hyper) == std::vector<bool>(hyper_param_fields().size(), false));
  // Every name of the federation's table is a hyper-parameter row or one of the others.
  std::size_t hyper = 0;
  for (const auto& f : federated::federation_setting_fields()) hyper += find_hyper_param(f.name) != nullptr;
  EXPECT_EQ(hyper, hyper_param_fields().size());
  EXPECT_EQ(federated::federation_setting_fields().size(), hyper_param_fields().size() + 6);
}

void expect_refused(const std::vector<std::pair<std::string, std::string>>& pairs,
                    const std::string& needle) {
  try {
    federated::settings_from_text(pairs, LabelSet({"a", "b"}));
    ADD_FAILURE() << "accepted; expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(SettingsTable, TheWireFormIsStrict) {
  expect_refused({{"colour", "red"}}, "unknown setting 'colour'");
  expect_refused({{"m", "10"}, {"m", "10"}}, "setting 'm' is given twice");
  expect_refused({{"m", "ten"}}, "m: 'ten' is not an unsigned integer");
  expect_refused({{"m", "-1"}}, "m: '-1' is not an unsigned integer");
  expect_refused({{"m", "18446744073709551616"}}, "is not an unsigned integer");
  expect_refused({{"m", "010"}}, "m: '010' is not in canonical form (expected '10')");
  expect_refused({{"gamma", "0.5x"}}, "gamma: '0.5x' is not a finite number");
  expect_refused({{"gamma", "nan"}}, "not a finite number");
  expect_refused({{"gamma", "0.8"}}, "gamma: '0.8' is not in canonical form (expected '0.80000000000000004')");
  expect_refused({{"preprocess", "l2"}}, "preprocess: 'l2' is not in canonical form (expected 'normalize')");
  expect_refused({{"preprocess", "sideways"}}, "preprocess: 'sideways' is not one of");
  expect_refused({{"variant", "fancy"}}, "variant: 'fancy' is not one of");
  expect_refused({{"missing", "ZERO"}}, "missing: 'ZERO' is not in canonical form");
  expect_refused({{"dp_T", "10"}}, "the DP settings need both dp_epsilon and dp_T");
  expect_refused({{"dp_epsilon", "0"}, {"dp_T", "10"}}, "epsilon");
  expect_refused({{"dp_epsilon", "1"}, {"dp_T", "4294967296"}}, "dp_T");
  expect_refused({{"dp_epsilon", "1"}, {"dp_T", "5"}, {"dp_unit", "party"}}, "party");
}

// Every valid variant has a text that parses back to it: the named ones by name, the
// others by variant_name's description.
TEST(SettingsTable, EveryValidVariantHasAText) {
  int described = 0;
  for (bool standardize : {false, true})
    for (bool signed_lifting : {false, true})
      for (std::uint32_t thermometer : {0u, 2u, 8u, 64u})
        for (std::uint32_t quantize : {0u, 1u, 16u, 1024u})
          for (bool paper_half : {false, true}) {
            const Variant v{standardize, signed_lifting, thermometer, quantize, paper_half};
            try {
              v.validate();
            } catch (const Error&) {
              continue;
            }
            const std::string name = variant_name(v);
            EXPECT_EQ(parse_variant(name), v) << name;
            described += name.find('=') != std::string::npos;
          }
  EXPECT_GT(described, 5);
  EXPECT_THROW(parse_variant("standardize+signed+quantize=16"), Error);  // that is zsign-q
  EXPECT_THROW(parse_variant("thermometer=4"), Error);                    // needs standardize
  EXPECT_THROW(parse_variant("standardize+standardize"), Error);
  EXPECT_THROW(parse_variant("standardize+"), Error);
  EXPECT_THROW(parse_variant("standardize+quantize=016"), Error);
}

TEST(SettingsTable, WithGivenOverridesEveryGivenField) {
  HyperParams base;
  base.m = 100;
  base.gamma = 0.5;
  for (const HyperParamField& f : hyper_param_fields()) {
    SCOPED_TRACE(f.name);
    HyperParams mine;
    f.set(mine, parse_setting(f.kind, hyper_examples().at(f.name).text, f.name));
    const HyperParams out = with_given(base, mine);
    EXPECT_EQ(setting_text(*f.get(out)), hyper_examples().at(f.name).text);
    // The others stay the coordinator's.
    for (const HyperParamField& g : hyper_param_fields()) {
      if (&g != &f) {
        EXPECT_EQ(g.get(out), g.get(base)) << g.name;
      }
    }
  }
}

// The DP rows (flynn/federated/dp_settings.hpp): each reaches exactly its own member of
// DpParams (adding a member breaks the binding below), and the flags, overrides and the
// fingerprint made from them keep their meaning.
// T and T_auto are one row's (dp_T: a count or "auto").
std::vector<std::string> dp_members(const federated::DpParams& p) {
  const auto& [epsilon, T, exponent, unit, postprocess, T_auto] = p;
  return {fmt::format("{}", epsilon), T_auto ? "auto " + std::to_string(T) : std::to_string(T),
          federated::dp_exponent_name(exponent), federated::dp_unit_name(unit),
          federated::dp_postprocess_name(postprocess)};
}

TEST(SettingsTable, DpRowsReachTheirMembers) {
  const std::map<std::string, SettingValue> examples = {
      {"dp_epsilon", 2.5}, {"dp_T", std::uint64_t{40}}, {"dp_exponent", std::string("reference")},
      {"dp_unit", std::string("record")}, {"dp_postprocess", std::string("threshold")}};
  const auto& fields = federated::dp_param_fields();
  ASSERT_EQ(fields.size(), dp_members(federated::DpParams{}).size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto it = examples.find(fields[i].name);
    ASSERT_NE(it, examples.end()) << fields[i].name << " has no example";
    federated::DpParams p;
    fields[i].set(p, it->second);
    const auto before = dp_members(federated::DpParams{}), after = dp_members(p);
    for (std::size_t j = 0; j < after.size(); ++j) EXPECT_EQ(before[j] != after[j], i == j) << fields[i].name;
    EXPECT_EQ(setting_text(*fields[i].get(p)), setting_text(it->second));
  }
  EXPECT_THROW(fields[1].set(*std::make_unique<federated::DpParams>(), std::uint64_t{1} << 33), Error);

  // The fingerprint's DP part: every field but the post-processing at "none".
  federated::DpParams dp;
  dp.epsilon = 0.1;
  dp.T = 7;
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(federated::dp_fingerprint(dp), (Pairs{{"dp-epsilon", "0.10000000000000001"}, {"dp-T", "7"},
                                                  {"dp-exponent", "paper"}, {"dp-unit", "paper"}}));
  dp.postprocess = federated::DpPostprocess::NoiseUnits;
  EXPECT_EQ(federated::dp_fingerprint(dp).back(), (std::pair<std::string, std::string>{"dp-postprocess", "noise-units"}));

  // Flags: none given is no DP; epsilon and T together; the front-ends' post-processing
  // default; a join party's overrides on top of the coordinator's settings.
  const federated::DpGiven none(fields.size());
  EXPECT_FALSE(federated::dp_params_from_given(none));
  federated::DpGiven both = none;
  both[0] = 4.0;
  both[1] = std::uint64_t{20};
  const auto p = federated::dp_params_from_given(both);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->postprocess, federated::DpPostprocess::NoiseUnits);
  federated::DpGiven only_unit = none;
  only_unit[3] = std::string("record");
  federated::DpGiven only_epsilon = none;
  only_epsilon[0] = 4.0;
  EXPECT_THROW(
      {
        try {
          federated::dp_params_from_given(only_unit);
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "--dp-exponent, --dp-unit and --dp-postprocess need --dp-epsilon and --dp-T");
          throw;
        }
      },
      Error);
  EXPECT_THROW(federated::dp_params_from_given(only_epsilon), Error);
  EXPECT_FALSE(federated::dp_params_over(std::nullopt, none));
  EXPECT_THROW(federated::dp_params_over(std::nullopt, only_epsilon), Error);
  const auto over = federated::dp_params_over(dp, only_unit);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->unit, federated::DpUnit::Record);
  EXPECT_EQ(over->T, 7u);
  EXPECT_EQ(over->postprocess, federated::DpPostprocess::NoiseUnits);
}

}  // namespace
}  // namespace flynn
