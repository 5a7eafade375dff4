// CSV header detection: the pure decision (decide_header) over tables with and
// without a header of every column mix, and the loaders (parse_csv, RowStream) on the
// all-text table that used to lose its header (the CLI's note: tests/cli/header_decision_test.cpp).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/column_number.hpp"
#include "core/io/header_decision.hpp"
#include "flynn/io/load_notes.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/row_stream.hpp"
#include "flynn/table_schema.hpp"
#include "io_test_helpers.hpp"
#include "promoters_table.hpp"
#include "test_support.hpp"

namespace {

using flynn::Dataset;
using flynn::io::LoadOptions;
using flynn::io::detail::decide_header;
using flynn::io::detail::HeaderDecision;
using flynn::test::nucleotides;

// Collects the loaders' notes while it lives.
struct Notes {
  std::vector<std::string> got;
  flynn::io::NoteHandler previous;
  Notes() : previous(flynn::io::set_note_handler([this](const std::string& n) { got.push_back(n); })) {}
  ~Notes() { flynn::io::set_note_handler(previous); }
};

// Splits "a,b,c" on commas (no quoting: the fixtures need none).
std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t c = line.find(',', start);
    out.push_back(line.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start));
    if (c == std::string_view::npos) return out;
    start = c + 1;
  }
}

// Decides for a table given as lines ("\n"-separated), label in the last column.
HeaderDecision decide(const std::string& table, bool label_last = true) {
  std::vector<std::string_view> lines;
  std::string_view t(table);
  while (!t.empty()) {
    const std::size_t nl = t.find('\n');
    lines.push_back(t.substr(0, nl));
    if (nl == std::string_view::npos) break;
    t.remove_prefix(nl + 1);
  }
  const std::vector<std::string_view> first = split(lines.at(0));
  std::vector<std::vector<std::string_view>> below;
  for (std::size_t i = 1; i < lines.size() && below.size() < 64; ++i) below.push_back(split(lines[i]));
  return decide_header(first, below, std::vector<bool>(first.size(), false),
                       label_last ? first.size() - 1 : first.size(), /*complete=*/true);
}

// The same table without quotes, for decide() (which does not unquote).
std::string unquoted(std::string s) {
  std::erase(s, '"');
  return s;
}

// A random table of `rows` rows with `cols` columns of the given kinds ('n' number,
// 'c' category of three values, 'i' id unique per row), label last (two text classes);
// with a header "<kind><j>,...,label" when `with_header`.
std::string table(const std::string& kinds, int rows, bool with_header, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::string s;
  if (with_header) {
    for (std::size_t j = 0; j < kinds.size(); ++j) s += std::string(1, kinds[j]) + "col" + std::to_string(j) + ",";
    s += "label\n";
  }
  const char* cats[] = {"red", "green", "blue"};
  for (int r = 0; r < rows; ++r) {
    for (char k : kinds) {
      if (k == 'n') s += std::to_string(rng() % 1000) + "." + std::to_string(rng() % 10);
      if (k == 'c') s += cats[rng() % 3];
      if (k == 'i') s += "id" + std::to_string(r);
      s += ",";
    }
    s += rng() % 2 ? "yes\n" : "no\n";
  }
  return s;
}

TEST(IoHeaderDecision, AllNumericLineOneIsDataForCertain) {
  const HeaderDecision d = decide("1,2,3\n4,5,6\n");
  EXPECT_FALSE(d.header);
  EXPECT_FALSE(d.guessed);
  EXPECT_FALSE(decide("1,2,3\n").header);
}

TEST(IoHeaderDecision, TextAboveNumbersIsAHeaderForCertain) {
  const HeaderDecision d = decide("a,b,label\n1,2,x\n");
  EXPECT_TRUE(d.header);
  EXPECT_FALSE(d.guessed);
  EXPECT_TRUE(decide("a,b,label\n").header);              // a header alone (no rows)
  EXPECT_TRUE(decide("a,b,label\n1,2\n").header);         // a ragged line 2, as before
}

TEST(IoHeaderDecision, OnlyTheLabelFieldIsText) {
  // "1,2,class" above numeric labels: a header (guessed: its feature names are numbers).
  HeaderDecision d = decide("1,2,class\n3,4,5\n");
  EXPECT_TRUE(d.header);
  EXPECT_TRUE(d.guessed);
  EXPECT_NE(d.reason.find("--header no"), std::string::npos);
  // "1,2,cat" above text labels: data, for certain (numbers are no feature names).
  d = decide("1,2,cat\n3,4,dog\n");
  EXPECT_FALSE(d.header);
  EXPECT_FALSE(d.guessed);
}

TEST(IoHeaderDecision, ColumnMixesWithAndWithoutHeader) {
  // Every mix, with a header and without, 100 rows: the decision is right each time.
  for (const std::string kinds : {"n", "nn", "nnn", "cn", "nc", "c", "cc", "ccc", "ic", "icn",
                                  "cnc", "ccccc"}) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      EXPECT_TRUE(decide(table(kinds, 100, true, seed)).header) << kinds << " seed " << seed;
      EXPECT_FALSE(decide(table(kinds, 100, false, seed)).header) << kinds << " seed " << seed;
    }
  }
}

TEST(IoHeaderDecision, NumericLabelsBelowTextFeatures) {
  // Text features, a numeric label column: the header's label "y" above numbers.
  EXPECT_TRUE(decide("color,shape,y\nred,round,1\nblue,square,2\nred,square,1\n").header);
  EXPECT_FALSE(decide("red,round,1\nblue,square,2\nred,square,1\n").header);
}

TEST(IoHeaderDecision, AllTextTableWithHeaderIsAHeaderAsAGuess) {
  const HeaderDecision d = decide(unquoted(nucleotides(true)));
  EXPECT_TRUE(d.header);
  EXPECT_TRUE(d.guessed);
  EXPECT_NE(d.reason.find("'V2'"), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("--header no"), std::string::npos) << d.reason;
  const HeaderDecision data = decide(unquoted(nucleotides(false)));
  EXPECT_FALSE(data.header);
  EXPECT_TRUE(data.guessed);
  EXPECT_NE(data.reason.find("--header yes"), std::string::npos) << data.reason;
}

TEST(IoHeaderDecision, TooLittleEvidenceKeepsLineOneAsData) {
  // Two rows of categories: nothing repeats below, so nothing shows line 1 to be a
  // header (the rule of earlier versions: data).
  EXPECT_FALSE(decide("a,b,c\nx,y,z\n").header);
  EXPECT_FALSE(decide("red,1,yes\nblue,2,no\n").header);
  // A header-looking line whose values do occur below: data.
  EXPECT_FALSE(decide("red,round,yes\nblue,round,no\nred,square,yes\nblue,round,no\n").header);
  // Repeated values on line 1 (two columns holding 'a'): a data row, not names.
  EXPECT_FALSE(decide("a,a,x\nc,g,y\nc,g,y\nt,t,y\n").header);
}

TEST(IoHeaderDecision, ShortAllTextTableWithHeader) {
  // Three rows below whose values repeat, line 1's never among them: a header.
  EXPECT_TRUE(decide("color,shape,label\nred,round,yes\nblue,square,no\nred,round,yes\n").header);
}

TEST(IoHeaderDecision, ExcludedColumnsAndIdColumns) {
  // An id column (unique text per row) given by number is not looked at; the other
  // columns decide.
  const std::string t = "id,color,label\nr1,red,yes\nr2,blue,no\nr3,red,no\nr4,blue,yes\n";
  std::vector<std::string_view> lines;
  std::vector<std::vector<std::string_view>> below;
  std::string_view rest(t);
  std::vector<std::string_view> first;
  bool first_line = true;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const auto cells = split(rest.substr(0, nl));
    if (first_line) first = cells; else below.push_back(cells);
    first_line = false;
    rest.remove_prefix(nl + 1);
  }
  EXPECT_TRUE(decide_header(first, below, {true, false, false}, 2, true).header);
  EXPECT_TRUE(decide_header(first, below, {false, false, false}, 2, true).header);
}

TEST(IoHeaderDecision, WaitsForRowsOnlyWhenTheDecisionNeedsThem) {
  const std::vector<std::string_view> text = {"a", "b", "label"};
  const std::vector<std::string_view> nums = {"1", "2", "x"};
  const std::vector<std::string_view> cats = {"p", "q", "x"};
  const std::vector<bool> none(3, false);
  // Nothing below yet: wait for line 2 (all rules but "all numbers" need it).
  EXPECT_TRUE(decide_header(text, {}, none, 2, false).need_more);
  // Text above a number: decided on line 2 alone.
  const std::vector<std::vector<std::string_view>> one_num = {nums};
  HeaderDecision d = decide_header(text, one_num, none, 2, false);
  EXPECT_FALSE(d.need_more);
  EXPECT_TRUE(d.header);
  // Text above text: the look-ahead rows decide, so wait for them.
  const std::vector<std::vector<std::string_view>> one_cat = {cats};
  EXPECT_TRUE(decide_header(text, one_cat, none, 2, false).need_more);
  EXPECT_FALSE(decide_header(text, one_cat, none, 2, true).need_more);
}

TEST(IoHeaderDecision, MissingCellsAreNotText) {
  // "?" and "NA" on line 1 are missing values, not names.
  EXPECT_FALSE(decide("1,?,3\n4,5,6\n").header);
  EXPECT_FALSE(decide("NA,2,x\n3,4,y\n").header);
}

TEST(IoHeaderDecision, LookaheadIsBoundedForWideTables) {
  EXPECT_EQ(flynn::io::detail::header_lookahead_rows(10), 64u);
  EXPECT_EQ(flynn::io::detail::header_lookahead_rows(4096), 16u);
  EXPECT_EQ(flynn::io::detail::header_lookahead_rows(10000000), 1u);
}

// ---- the loaders ------------------------------------------------------------------------

TEST(IoHeaderDecision, NucleotideTableReadsAs106RowsAndTwoClasses) {
  Notes notes_;
  std::vector<std::string>& notes = notes_.got;
  LoadOptions o;
  const Dataset d = flynn::io::parse_csv(nucleotides(true), o, "promoters.csv");
  EXPECT_EQ(d.n_rows, 106u);
  EXPECT_EQ(d.classes.joined(), "+,-");
  EXPECT_EQ(d.n_features, 57u * 4u);  // one-hot: a c g t in every column
  ASSERT_EQ(d.schema.columns.size(), 57u);
  EXPECT_EQ(d.schema.columns[0].name, "V2");
  EXPECT_EQ(d.schema.label_name, "class");
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("promoters.csv: line 1 is taken for a header"), std::string::npos)
      << notes[0];

  // --header yes gives the same rows, without a note.
  LoadOptions yes;
  yes.header = LoadOptions::Header::Yes;
  notes.clear();
  const Dataset y = flynn::io::parse_csv(nucleotides(true), yes, "promoters.csv");
  EXPECT_EQ(y.features, d.features);
  EXPECT_EQ(y.schema, d.schema);
  EXPECT_TRUE(notes.empty());

  // Without its header the table is data (106 rows), with a note saying so.
  notes.clear();
  const Dataset headless = flynn::io::parse_csv(nucleotides(false), o, "promoters.csv");
  EXPECT_EQ(headless.n_rows, 106u);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("line 1 is read as data"), std::string::npos) << notes[0];
}

TEST(IoHeaderDecision, RowStreamDecidesAsTheWholeFileLoader) {
  flynn::test::TempDir dir;
  const std::string path = dir.file("promoters.csv");
  flynn::test::write_text(path, nucleotides(true));
  // Training streams text columns only after learning them, so read with the whole
  // file's categories, as prediction does, but unnamed (a named schema whose names are
  // all on line 1 would settle the header without the look-ahead); tiny blocks make the
  // look-ahead wait for more text.
  LoadOptions whole;
  const Dataset all = flynn::io::load_dataset(path, whole);
  flynn::TableSchema positional = all.schema;
  positional.named = false;
  positional.label_name.clear();
  for (auto& c : positional.columns) c.name.clear();
  LoadOptions o;
  o.schema = &positional;
  flynn::io::ChunkLimits limits;
  limits.block_bytes = 64;
  limits.max_rows = 10;
  Notes notes_;
  const std::vector<std::string>& notes = notes_.got;
  flynn::io::RowStream rows(path, o, limits);
  Dataset chunk, joined;
  std::size_t n = 0;
  while (rows.next(chunk)) {
    n += chunk.n_rows;
    if (joined.n_rows == 0) joined = chunk; else joined.append(chunk);
  }
  EXPECT_EQ(n, 106u);
  EXPECT_EQ(joined.features, all.features);
  EXPECT_EQ(joined.labels, all.labels);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("line 1 is taken for a header"), std::string::npos) << notes[0];
}

}  // namespace

namespace {

// ---- header_by_options: what the options settle before the text is looked at ----------

using flynn::io::LabelColumn;
using flynn::io::detail::header_by_options;
using flynn::io::detail::HeaderByOptions;

HeaderByOptions by_options(const LoadOptions& o, const std::vector<std::string>& first,
                           const flynn::TableSchema* model = nullptr) {
  return header_by_options(o, model, first, "t.csv");
}

const std::vector<std::string> kFourColumns{"1", "2", "3", "a"};

TEST(HeaderByOptions, AColumnGivenByNameMeansAHeader) {
  LoadOptions o;
  o.label_column = LabelColumn::parse("class");
  EXPECT_EQ(by_options(o, kFourColumns).header, std::optional<bool>(true));
  LoadOptions ignore;
  ignore.ignore_columns = flynn::io::ColumnSelector::parse("b", "--ignore-cols");
  EXPECT_EQ(by_options(ignore, kFourColumns).header, std::optional<bool>(true));
}

TEST(HeaderByOptions, ANameWithHeaderNoIsAnError) {
  LoadOptions o;
  o.label_column = LabelColumn::parse("class");
  o.header = LoadOptions::Header::No;
  EXPECT_TRUE(flynn::test::contains(flynn::test::error_of([&] { by_options(o, kFourColumns); }),
                                    {"t.csv: the label column is given by name (", "class",
                                     "read without a header"}));
  LoadOptions id;
  id.id_column = LabelColumn::parse("key");
  id.header = LoadOptions::Header::No;
  EXPECT_TRUE(flynn::test::contains(flynn::test::error_of([&] { by_options(id, kFourColumns); }),
                                    {"t.csv: a column is given by name but the file is read "
                                     "without a header"}));
}

TEST(HeaderByOptions, HeaderYesAndNoDecide) {
  LoadOptions yes, no;
  yes.header = LoadOptions::Header::Yes;
  no.header = LoadOptions::Header::No;
  EXPECT_EQ(by_options(yes, kFourColumns).header, std::optional<bool>(true));
  EXPECT_EQ(by_options(no, kFourColumns).header, std::optional<bool>(false));
}

TEST(HeaderByOptions, LineOneHoldingTheModelsNamesIsAHeader) {
  flynn::TableSchema model;
  model.named = true;
  model.columns = {{"2", {}}, {"a", {}}};
  EXPECT_EQ(by_options(LoadOptions{}, kFourColumns, &model).header, std::optional<bool>(true));
  model.columns.push_back({"zz", {}});  // one name missing: the heuristic decides
  const HeaderByOptions r = by_options(LoadOptions{}, kFourColumns, &model);
  EXPECT_FALSE(r.header.has_value());
  // Three model columns, four file columns: the last is the label.
  EXPECT_EQ(r.label, 3u);
  model.named = false;  // an unnamed model says nothing about line 1
  EXPECT_FALSE(by_options(LoadOptions{}, {"2", "a"}, &model).header.has_value());
}

TEST(HeaderByOptions, TheHeuristicSkipsIgnoredAndIdColumnsGivenByNumber) {
  LoadOptions o;
  o.ignore_columns = flynn::io::ColumnSelector::parse("1,9", "--ignore-cols");  // 9: out of range
  o.id_column = LabelColumn::parse("-2");
  const HeaderByOptions r = by_options(o, kFourColumns);
  EXPECT_FALSE(r.header.has_value());
  EXPECT_EQ(r.excluded, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(r.label, 3u);
}

TEST(HeaderByOptions, TheLabelColumnWhereItIsKnown) {
  LoadOptions index;
  index.label_column = LabelColumn::parse("-4");
  EXPECT_EQ(by_options(index, kFourColumns).label, 0u);
  index.label_column = LabelColumn::parse("7");  // out of range: unknown here
  EXPECT_EQ(by_options(index, kFourColumns).label, 4u);
  LoadOptions none;
  none.label_column = LabelColumn::parse("none");
  EXPECT_EQ(by_options(none, kFourColumns).label, 4u);
  // The last column is the label unless the other columns are exactly the expected
  // features (4 columns, 4 expected: no label column).
  LoadOptions expected;
  expected.expected_features = 3;
  EXPECT_EQ(by_options(expected, kFourColumns).label, 3u);
  expected.expected_features = 4;
  EXPECT_EQ(by_options(expected, kFourColumns).label, 4u);
}

}  // namespace

namespace {

TEST(ColumnFromNumber, OneBasedAndFromTheEnd) {
  using flynn::io::detail::column_from_number;
  EXPECT_EQ(column_from_number(1, 4), std::optional<std::size_t>(0));
  EXPECT_EQ(column_from_number(4, 4), std::optional<std::size_t>(3));
  EXPECT_EQ(column_from_number(-1, 4), std::optional<std::size_t>(3));
  EXPECT_EQ(column_from_number(-4, 4), std::optional<std::size_t>(0));
  EXPECT_EQ(column_from_number(0, 4), std::nullopt);
  EXPECT_EQ(column_from_number(5, 4), std::nullopt);
  EXPECT_EQ(column_from_number(-5, 4), std::nullopt);
  EXPECT_EQ(column_from_number(1, 0), std::nullopt);
}

}  // namespace
