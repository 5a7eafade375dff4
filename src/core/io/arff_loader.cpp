// ARFF parser (see loaders.hpp for what is accepted).
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/row_parser.hpp"
#include "core/io/table_encoder.hpp"
#include "core/io/column_number.hpp"
#include "core/io/text_scanner.hpp"

namespace flynn::io {

using namespace detail;

namespace {

enum class AttrType { Numeric, Nominal, String, Date, Relational };

const char* type_name(AttrType t) {
  switch (t) {
    case AttrType::Numeric: return "numeric";
    case AttrType::Nominal: return "nominal";
    case AttrType::String: return "string";
    case AttrType::Date: return "date";
    case AttrType::Relational: return "relational";
  }
  return "?";
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A nominal attribute's declared values.
struct NominalValues {
  std::vector<std::string> order;  // as declared
  // value → its position in `order`
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> index;
  bool contains(std::string_view v) const { return index.find(v) != index.end(); }
};

// One @attribute. Kept small: a sparse file may declare a million attributes, nearly all
// numeric, so what only nominal attributes need lives in NominalValues, apart.
struct Attribute {
  static constexpr std::uint32_t kNotNominal = 0xFFFFFFFFu;
  std::string name;
  std::uint64_t line = 0;  // declaration line
  AttrType type = AttrType::Numeric;
  std::uint32_t nominal = kNotNominal;  // index into the header's NominalValues
};

// The attributes of a header and the values of its nominal ones.
struct Attributes {
  std::vector<Attribute> list;
  std::vector<NominalValues> nominals;
  const NominalValues& values_of(const Attribute& a) const { return nominals[a.nominal]; }
};

bool is_space(char c) { return is_blank_char(c); }

// Reads a possibly quoted token from the front of `s` (after skipping blanks): quoted with
// ' or " (backslash escapes the next character), or unquoted up to a blank or one of
// `stops`. Advances `s`. Returns false on an unterminated quote.
bool read_token(std::string_view& s, std::string& out, std::string_view stops) {
  std::size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  out.clear();
  if (i < s.size() && (s[i] == '\'' || s[i] == '"')) {
    const char q = s[i++];
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\' && i + 1 < s.size()) ++i;
      out += s[i++];
    }
    if (i >= s.size()) return false;
    s.remove_prefix(i + 1);
    return true;
  }
  while (i < s.size() && !is_space(s[i]) && stops.find(s[i]) == std::string_view::npos)
    out += s[i++];
  s.remove_prefix(i);
  return true;
}

// Splits `s` on commas outside ' or " quotes (a backslash escapes the next character). Fields
// are trimmed but keep their quotes. Returns false on an unterminated quote.
bool split_commas(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t start = 0;
  char q = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\') {
      ++i;  // an escaped character never delimits or quotes
    } else if (q) {
      if (c == q) q = 0;
    } else if (c == '\'' || c == '"') {
      q = c;
    } else if (c == ',') {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (q) return false;
  out.push_back(trim(s.substr(start)));
  return true;
}

bool is_quoted(std::string_view v) {
  return v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front();
}

// The text of a value: quotes and backslash escapes removed (into `scratch` when needed).
std::string_view unquote(std::string_view v, std::string& scratch) {
  if (!is_quoted(v)) return v;
  std::string_view inner = v.substr(1, v.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner;
  scratch.clear();
  for (std::size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '\\' && i + 1 < inner.size()) ++i;
    scratch += inner[i];
  }
  return scratch;
}

std::string declared_list(const NominalValues& values) {
  std::string r = "{";
  for (std::size_t i = 0; i < values.order.size() && i < 12; ++i) {
    if (i) r += ",";
    r += values.order[i];
  }
  if (values.order.size() > 12) r += ",...";
  return r + "}";
}

// Parses the part of an @attribute line after the keyword and appends the attribute.
void parse_attribute(std::string_view rest, const std::string& source, std::uint64_t line_no,
                     Attributes& attrs) {
  Attribute& a = attrs.list.emplace_back();
  a.line = line_no;
  if (!read_token(rest, a.name, "{"))
    throw Error(where(source, line_no) + "unterminated quote in @attribute name");
  if (a.name.empty()) throw Error(where(source, line_no) + "@attribute without a name");
  rest = trim(rest);
  if (!rest.empty() && rest.front() == '{') {
    const std::size_t close = rest.rfind('}');
    if (close == std::string_view::npos) {
      throw Error(where(source, line_no) + "nominal attribute " + quote_text(a.name) +
                  ": missing '}'");
    }
    if (!trim(rest.substr(close + 1)).empty()) {
      throw Error(where(source, line_no) + "unexpected text after the nominal list of " +
                  quote_text(a.name));
    }
    a.type = AttrType::Nominal;
    a.nominal = static_cast<std::uint32_t>(attrs.nominals.size());
    NominalValues& values = attrs.nominals.emplace_back();
    std::vector<std::string_view> items;
    if (!split_commas(rest.substr(1, close - 1), items)) {
      throw Error(where(source, line_no) + "unterminated quote in the nominal list of " +
                  quote_text(a.name));
    }
    std::string scratch;
    for (auto item : items) {
      const std::string v(unquote(item, scratch));
      if (v.empty()) {
        if (items.size() == 1) break;  // "{}"
        throw Error(where(source, line_no) + "empty value in the nominal list of " +
                    quote_text(a.name));
      }
      if (values.index.emplace(v, static_cast<std::uint32_t>(values.order.size())).second)
        values.order.push_back(v);
    }
    if (values.order.empty()) {
      throw Error(where(source, line_no) + "nominal attribute " + quote_text(a.name) +
                  " has no values");
    }
    return;
  }
  std::string type;
  read_token(rest, type, "");
  if (iequals(type, "numeric") || iequals(type, "real") || iequals(type, "integer")) {
    a.type = AttrType::Numeric;
  } else if (iequals(type, "string")) {
    a.type = AttrType::String;
  } else if (iequals(type, "date")) {
    a.type = AttrType::Date;
    return;  // the optional date format follows
  } else if (iequals(type, "relational")) {
    throw Error(where(source, line_no) + "attribute " + quote_text(a.name) +
                " is relational, which is not supported");
  } else if (type.empty()) {
    throw Error(where(source, line_no) + "attribute " + quote_text(a.name) + " has no type");
  } else {
    throw Error(where(source, line_no) + "attribute " + quote_text(a.name) +
                " has the unknown type " + quote_text(type) +
                " (expected numeric, real, integer, string, date or {nominal values})");
  }
  if (!trim(rest).empty()) {
    throw Error(where(source, line_no) + "unexpected text after the type of attribute " +
                quote_text(a.name));
  }
}

// Throws when two attributes share a name, naming the first repeat in the file and the
// line of its first declaration. Found by sorting (hash, name, position) triples rather
// than with a set of names: a million attributes then cost 16 bytes each for the check
// instead of a hash-set node per name; names are compared only when their hashes tie.
void check_unique_names(const std::vector<Attribute>& attrs, const std::string& source) {
  std::vector<std::pair<std::size_t, std::uint32_t>> order(attrs.size());
  for (std::size_t j = 0; j < attrs.size(); ++j)
    order[j] = {std::hash<std::string_view>{}(attrs[j].name), static_cast<std::uint32_t>(j)};
  std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    const int c = attrs[x.second].name.compare(attrs[y.second].name);
    return c != 0 ? c < 0 : x.second < y.second;
  });
  // Equal names are now adjacent, their first declaration first.
  std::size_t repeat = attrs.size(), original = 0;
  for (std::size_t i = 1, run = 0; i < order.size(); ++i) {
    if (order[i].first != order[i - 1].first ||
        attrs[order[i].second].name != attrs[order[i - 1].second].name) {
      run = i;  // a new name starts
    } else if (order[i].second < repeat) {
      repeat = order[i].second;
      original = order[run].second;
    }
  }
  if (repeat < attrs.size()) {
    const Attribute& a = attrs[repeat];
    throw Error(where(source, a.line) + "attribute " + quote_text(a.name) +
                " is already declared on line " + std::to_string(attrs[original].line));
  }
}

// The keyword at the start of a header line ("@attribute" etc.), lower-cased, or "".
bool keyword_is(std::string_view line, std::string_view kw) {
  return istarts_with(line, kw) && (line.size() == kw.size() || is_space(line[kw.size()]) ||
                                    line[kw.size()] == '\'' || line[kw.size()] == '"');
}

// The ARFF parser (RowParser protocol, see row_parser.hpp). begin() reads the header up
// to @data, chooses the class attribute and lays out the model's columns; read_rows()
// parses dense and sparse rows into them.
//
// Columns: every attribute but the class is one model column, in attribute order, encoded
// as a CSV text column would be (table_columns.hpp): a numeric attribute is one feature;
// a nominal attribute is one-hot encoded over its declared values, in declared order; a
// string attribute is a CSV text column, numeric when all its values are numbers and
// otherwise one-hot over the sorted values found in the rows (learned by a first pass over
// the string attributes, as for CSV's text columns: TableParser, parse_table_text). At
// prediction the model's columns decide the encoding (its categories), the header only
// what a value may be.
class ArffParser final : public TableParser {
 public:
  using TableParser::TableParser;

  TableSchema learned_schema() const override;
  void begin(LineScanner& lines, bool at_end) override;
  void read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) override;
  Dataset take_chunk(std::uint64_t max_values) override;
  void end() override {
    if (chunk_.total_rows == 0 && observed_rows_ == 0)
      throw Error(source_ + ": no data rows after @data");
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  // begin()'s phases, after the header: whether rows carry a class (at prediction, by the
  // model's width), which attribute it is, which attribute types can be features, and the
  // model's columns (the model's at prediction, else the attributes').
  bool has_class(std::size_t nattr) const;
  std::size_t class_attribute(const std::vector<Attribute>& attrs) const;
  void check_attribute_types(const Attributes& header, std::size_t cls, bool labelled) const;
  TableSchema model_columns(const Attributes& header, std::size_t cls, bool labelled) const;
  void check_model_width(const std::vector<Attribute>& attrs, std::size_t cls, bool labelled) const;
  TableSchema prediction_columns(const std::vector<Attribute>& attrs, std::size_t cls) const;
  static TableSchema training_columns(const Attributes& header, std::size_t cls, bool labelled);
  // learn_categories(): a schema builder over the string attributes (`learn`), else none.
  void set_up_learning(bool learn);
  // Where an attribute's value goes: its model column and, when that column is one-hot
  // encoded, its category index (categories_). 8 bytes per attribute, for wide files.
  struct Slot {
    std::uint32_t column = kNone;      // kNone for the class
    std::uint32_t categories = kNone;  // index into categories_, kNone for a numeric column
  };
  using CategoryIndex = std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>;

  // Lays out the model columns (slots_, offsets_, categories_, sparse_row_) for schema_.
  void lay_out(std::size_t nattr);
  // A missing value ('?', and for string attributes every CSV spelling of a missing cell)
  // of attribute `j`: an error for the class or under --missing error; for a one-hot
  // column an all-zero block; for a numeric one 0, the model's mean at prediction, or NaN
  // until the training means are known.
  void missing(std::uint64_t no, std::size_t col, std::size_t j, std::string_view text,
               float* row) const;
  // Stores the value of attribute `j` (field text `v`, column `col`) into row `row`.
  void store(std::uint64_t no, std::size_t col, std::size_t j, std::string_view v, float* row);
  // Parses one data line into `row` (learning: feeds the builder, `row` unused): its fields
  // split (fields_; whether it is sparse), then learned, or stored sparse or dense.
  void parse_row(std::string_view t, std::uint64_t no, float* row);
  bool split_row(std::string_view t, std::uint64_t no);
  void learn_row(bool sparse, std::uint64_t no);
  void store_sparse_row(std::uint64_t no, float* row);
  // A sparse row gave fewer string attributes than it must: names the first it omits.
  void throw_omitted_string(std::uint64_t no) const;
  void reset_chunk();

  Attributes attrs_;
  std::size_t cls_ = 0;  // the class attribute; attrs_.list.size() when none
  // Training without a learned schema while string attributes are features: a string
  // value that is not a number throws TextInNumericColumn (the caller learns first).
  bool discovering_ = false;
  // The schema chunks carry and rows are encoded with: at training the attributes' names
  // (stored in the model, so that CSV tables are matched by them too) and the nominal
  // ones' categories; at prediction the model's.
  TableSchema schema_;
  std::vector<Slot> slots_;  // per attribute
  // Per model column its first feature; empty when every column is numeric (the column's
  // index is then its feature), which spares a wide numeric file 8 bytes an attribute.
  std::vector<std::size_t> offsets_;
  std::vector<CategoryIndex> categories_;  // per one-hot column: category → position
  std::size_t first_feature(const Slot& s) const {
    return offsets_.empty() ? s.column : offsets_[s.column];
  }
  // The features of a one-hot column.
  std::size_t end_feature(const Slot& s) const { return offsets_[s.column + 1]; }
  // The dense row a sparse row starts from: 0 for numeric columns, and for a nominal
  // attribute the one-hot block of its first declared value, which is what an omitted
  // entry means in sparse ARFF (Weka stores a nominal value as its index, 0 when omitted).
  std::vector<float> sparse_row_;
  bool sparse_row_zero_ = true;  // sparse_row_ is all zero (no nominal feature)
  // Feature attributes a sparse row must give (an omitted one has no value to take): the
  // string attributes (Weka's index 0 of a string attribute is whichever string it read
  // first, not a value of the header).
  std::vector<std::uint32_t> sparse_required_;
  const std::vector<float>* fill_ = nullptr;  // the model's missing-value means, if any
  std::optional<TableSchemaBuilder> builder_;  // learn_categories(): the string attributes
  std::vector<std::string_view> learn_cells_;  // one per attribute, for the builder
  std::vector<std::string> learn_scratch_;
  std::uint64_t cells_ = 0;  // dense values of the current chunk
  std::vector<std::string_view> fields_;
  std::string scratch_;
};

void ArffParser::reset_chunk() {
  chunk_.reset(source_, n_features_, labelled_);
  cells_ = 0;
}

TableSchema ArffParser::learned_schema() const {
  TableSchema s = schema_;
  const TableSchema strings = builder_->finish();  // its columns: the string attributes
  std::size_t i = 0;
  for (std::size_t j = 0; j < attrs_.list.size(); ++j)
    if (j != cls_ && attrs_.list[j].type == AttrType::String)
      s.columns[slots_[j].column].categories = strings.columns[i++].categories;
  return s;
}

// A reader that gives the text block by block calls begin() again after NeedMoreText: look
// for @data with a cheap scan first, so that a long header (a million @attribute lines) is
// parsed once rather than once per block read. The scan stops at the first line that is
// no header line, which the parse then reports.
void wait_for_data(LineScanner scan) {
  std::string_view l;
  while (scan.next(l)) {
    const std::string_view t = trim(l);
    if (t.empty() || t.front() == '%' || keyword_is(t, "@attribute") || keyword_is(t, "@relation")) continue;
    return;  // @data, or a line the parse reports
  }
  throw NeedMoreText{};
}

// The header up to @data: the attributes, every name once.
Attributes read_header(LineScanner& lines, bool at_end, const std::string& source) {
  if (!at_end) wait_for_data(lines);
  Attributes header;
  bool in_data = false, any_content = false;
  std::uint64_t data_line = 0;
  std::string_view line;
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    any_content = true;
    const std::uint64_t no = lines.line_number();
    if (keyword_is(t, "@relation")) {
      if (!header.list.empty()) throw Error(where(source, no) + "@relation after @attribute");
    } else if (keyword_is(t, "@attribute")) {
      parse_attribute(t.substr(10), source, no, header);
    } else if (keyword_is(t, "@data")) {
      if (!trim(t.substr(5)).empty()) throw Error(where(source, no) + "unexpected text after @data");
      in_data = true;
      data_line = no;
      break;
    } else if (keyword_is(t, "@end")) {
      throw Error(where(source, no) + "@end outside a relational attribute");
    } else {
      throw Error(where(source, no) + "expected @relation, @attribute or @data, found " + quote_text(t));
    }
  }
  if (!in_data && !at_end) throw NeedMoreText{};
  // Before "no @data": a repeated name is the first problem of such a header too.
  check_unique_names(header.list, source);
  if (!any_content) throw Error(source + ": empty file");
  if (!in_data) throw Error(source + ": no @data section");
  if (header.list.empty()) throw Error(where(source, data_line) + "@data before any @attribute");
  return header;
}

void ArffParser::begin(LineScanner& lines, bool at_end) {
  Attributes header = read_header(lines, at_end, source_);
  const std::size_t nattr = header.list.size();
  const bool labelled = has_class(nattr);
  const std::size_t cls = labelled ? class_attribute(header.list) : nattr;  // nattr = no class
  check_attribute_types(header, cls, labelled);
  schema_ = model_columns(header, cls, labelled);
  const TableSchema* model_schema = options_.schema;  // non-null: prediction
  fill_ = model_schema && !model_schema->fill.empty() ? &model_schema->fill : nullptr;

  attrs_ = std::move(header);
  cls_ = cls;
  labelled_ = labelled;
  bool strings = false;
  for (std::size_t j = 0; j < nattr; ++j) strings |= j != cls && attrs_.list[j].type == AttrType::String;
  discovering_ = strings && !model_schema && !learned_;
  lay_out(nattr);
  set_up_learning(learning_ && strings);
  chunk_.total_rows = 0;
  reset_chunk();
}

bool ArffParser::has_class(std::size_t nattr) const {
  using Kind = LabelColumn::Kind;
  const LabelColumn& lc = options_.label_column;
  const TableSchema* model_schema = options_.schema;
  // At prediction the model's columns (one per attribute, whatever their one-hot width),
  // or its features when it has no table schema.
  const std::optional<std::size_t> expected =
      model_schema && !model_schema->empty() ? std::optional<std::size_t>(model_schema->columns.size())
                                              : options_.expected_features;
  if (!expected) return lc.kind != Kind::None;
  const std::size_t d = *expected;
  if (nattr == d) {
    if (lc.kind == Kind::Index || lc.kind == Kind::Name) {
      throw Error(source_ + ": " + std::to_string(nattr) + " attributes, the model expects " + std::to_string(d) +
                  " features: no room for the class attribute that was given");
    }
    return false;
  }
  if (nattr == d + 1 && lc.kind != Kind::None) return true;
  throw Error(source_ + ": " + std::to_string(nattr) + " attributes, model expects " + std::to_string(d) +
              " features" +
              (lc.kind == Kind::None ? std::string(" (class attribute 'none')")
                                     : " (or " + std::to_string(d + 1) + " with a class attribute)"));
}

std::size_t ArffParser::class_attribute(const std::vector<Attribute>& attrs) const {
  using Kind = LabelColumn::Kind;
  const LabelColumn& lc = options_.label_column;
  const std::size_t nattr = attrs.size();
  if (nattr < 2) throw Error(source_ + ": 1 attribute: need at least one feature attribute besides the class");
  if (lc.kind == Kind::Last) return nattr - 1;
  if (lc.kind == Kind::Index) {
    const std::optional<std::size_t> j = detail::column_from_number(lc.index, nattr);
    if (!j) {
      throw Error(source_ + ": class attribute " + std::to_string(lc.index) + " is out of range (" +
                  std::to_string(nattr) + " attributes)");
    }
    return *j;
  }
  for (std::size_t j = 0; j < nattr; ++j)
    if (attrs[j].name == lc.name) return j;
  throw Error(source_ + ": no attribute named " + quote_text(lc.name));
}

void ArffParser::check_attribute_types(const Attributes& header, std::size_t cls, bool labelled) const {
  for (std::size_t j = 0; j < header.list.size(); ++j) {
    const Attribute& a = header.list[j];
    if (j == cls) {
      if (a.type == AttrType::Date || a.type == AttrType::Relational) {
        throw Error(where(source_, a.line) + "the class attribute " + quote_text(a.name) + " is " +
                    type_name(a.type) + "; it must be nominal, numeric or string");
      }
    } else if (a.type == AttrType::Date) {
      throw Error(where(source_, a.line) + "attribute " + quote_text(a.name) +
                  " is date; date attributes cannot be features (numeric, nominal and string "
                  "attributes can)" +
                  (labelled ? "" : " (is it the class? see the label column option)"));
    } else if (a.type == AttrType::Nominal && !options_.schema &&
               header.values_of(a).order.size() > TableSchemaBuilder::kMaxCategories) {
      throw Error(where(source_, a.line) + "nominal attribute " + quote_text(a.name) + " declares " +
                  std::to_string(header.values_of(a).order.size()) + " values, more than the " +
                  std::to_string(TableSchemaBuilder::kMaxCategories) + " a feature may one-hot encode");
    }
  }
}

TableSchema ArffParser::model_columns(const Attributes& header, std::size_t cls, bool labelled) const {
  const TableSchema* model_schema = options_.schema;
  if (model_schema || options_.expected_features) check_model_width(header.list, cls, labelled);
  if (model_schema) return prediction_columns(header.list, cls);
  if (learned_) return *learned_;
  return training_columns(header, cls, labelled);
}

void ArffParser::check_model_width(const std::vector<Attribute>& attrs, std::size_t cls, bool labelled) const {
  // A width to match (a model without a table schema has numbers only): a nominal value
  // has no number to give a numeric feature.
  const TableSchema* model_schema = options_.schema;
  const bool by_columns = model_schema && !model_schema->empty();
  for (std::size_t j = 0, k = 0; j < attrs.size(); ++j) {
    if (j == cls) continue;
    const Attribute& a = attrs[j];
    const TableColumn* c = by_columns ? &model_schema->columns[k++] : nullptr;
    if (a.type == AttrType::Nominal && !(c && c->categorical()))
      throw Error(where(source_, a.line) + "attribute " + quote_text(a.name) +
                  " is nominal, where the model has a numeric feature" +
                  (labelled ? "" : " (is it the class? see the label column option)"));
  }
}

TableSchema ArffParser::prediction_columns(const std::vector<Attribute>& attrs, std::size_t cls) const {
  // The model's table. Attributes are matched by position; when the model has names they
  // must be these attributes' names, in this order.
  const TableSchema& model_schema = *options_.schema;
  const bool by_columns = !model_schema.empty();
  for (std::size_t j = 0, k = 0; j < attrs.size(); ++j) {
    if (j == cls) continue;
    const Attribute& a = attrs[j];
    const TableColumn* c = by_columns ? &model_schema.columns[k++] : nullptr;
    if (c && model_schema.named && c->name != a.name)
      throw Error(where(source_, a.line) + "attribute " + quote_text(a.name) +
                  " is where the model expects feature " + quote_text(c->name) +
                  " (ARFF attributes are matched by position)");
  }
  return by_columns ? model_schema : TableSchema{};
}

TableSchema ArffParser::training_columns(const Attributes& header, std::size_t cls, bool labelled) {
  // Names are kept for tables of at most kMaxNamedAttributes attributes: every chunk and
  // the model carry the schema, and ARFF matches attributes by position anyway, so for the
  // very wide (sparse) files the names would only cost memory: a million attribute names
  // tripled the peak memory of training on a 27 MB file (tests/hostile).
  constexpr std::size_t kMaxNamedAttributes = std::size_t{1} << 16;
  const std::vector<Attribute>& attrs = header.list;
  const std::size_t nattr = attrs.size();
  // A schema when there are names to keep or columns that may be one-hot.
  bool text = false;
  for (std::size_t j = 0; j < nattr; ++j)
    text |= j != cls && (attrs[j].type == AttrType::Nominal || attrs[j].type == AttrType::String);
  TableSchema schema;
  schema.named = nattr <= kMaxNamedAttributes;
  if (!schema.named && !text) return schema;
  schema.columns.reserve(nattr);
  for (std::size_t j = 0; j < nattr; ++j) {
    if (j == cls) continue;
    TableColumn& c = schema.columns.emplace_back();
    if (schema.named) c.name = attrs[j].name;
    if (attrs[j].type == AttrType::Nominal) c.categories = header.values_of(attrs[j]).order;
  }
  if (schema.named && labelled) schema.label_name = attrs[cls].name;
  return schema;
}

void ArffParser::set_up_learning(bool learn) {
  builder_.reset();
  observed_rows_ = 0;
  if (!learn) return;
  // The builder sees the string attributes only: their categories are what is learned.
  const std::size_t nattr = attrs_.list.size();
  TableLayout layout;
  layout.roles.assign(nattr, ColumnRole::Ignored);
  std::vector<std::string> names(nattr);
  for (std::size_t j = 0; j < nattr; ++j) {
    names[j] = attrs_.list[j].name;
    if (j != cls_ && attrs_.list[j].type == AttrType::String) {
      layout.roles[j] = ColumnRole::Feature;
      layout.features.push_back(j);
    }
  }
  builder_.emplace(layout, std::move(names), source_);
  learn_cells_.assign(nattr, std::string_view{});
  learn_scratch_.assign(nattr, std::string{});
}

void ArffParser::lay_out(std::size_t nattr) {
  slots_.assign(nattr, Slot{});
  categories_.clear();
  sparse_required_.clear();
  offsets_.clear();
  const bool by_schema = !schema_.empty();
  const bool one_hot = by_schema && schema_.has_categorical();
  std::size_t d = 0;
  for (std::size_t j = 0, k = 0; j < nattr; ++j) {
    if (j == cls_) continue;
    Slot& s = slots_[j];
    s.column = static_cast<std::uint32_t>(k);
    if (one_hot) offsets_.push_back(d);
    std::size_t width = 1;
    if (by_schema && schema_.columns[k].categorical()) {
      const std::vector<std::string>& cats = schema_.columns[k].categories;
      s.categories = static_cast<std::uint32_t>(categories_.size());
      CategoryIndex& index = categories_.emplace_back();
      for (std::size_t i = 0; i < cats.size(); ++i) index.emplace(cats[i], static_cast<std::uint32_t>(i));
      width = cats.size();
    }
    if (attrs_.list[j].type == AttrType::String) sparse_required_.push_back(static_cast<std::uint32_t>(j));
    d += width;
    ++k;
  }
  if (one_hot) offsets_.push_back(d);
  n_features_ = d;
  // The row a sparse row starts from (see sparse_row_); none when it is all zero.
  sparse_row_.clear();
  if (one_hot) sparse_row_.assign(d, 0.0f);
  for (std::size_t j = 0; j < nattr; ++j) {
    const Slot& s = slots_[j];
    if (s.categories == kNone || attrs_.list[j].type != AttrType::Nominal) continue;
    const CategoryIndex& index = categories_[s.categories];
    const auto it = index.find(attrs_.values_of(attrs_.list[j]).order.front());
    if (it != index.end()) sparse_row_[first_feature(s) + it->second] = 1.0f;
  }
  sparse_row_zero_ = std::find(sparse_row_.begin(), sparse_row_.end(), 1.0f) == sparse_row_.end();
  if (sparse_row_zero_) sparse_row_.clear();
}

void ArffParser::missing(std::uint64_t no, std::size_t col, std::size_t j, std::string_view text,
                         float* row) const {
  const std::string& source = source_;
  const LoadOptions& options = options_;
  const Attribute& a = attrs_.list[j];
  if (j == cls_)
    throw Error(where(source, no, col) + "missing value " + quote_text(text) + " for the class attribute " +
                quote_text(a.name));
  if (options.missing == MissingPolicy::Error)
    throw Error(where(source, no, col) + "missing value " + quote_text(text) + " for attribute " +
                quote_text(a.name) + " (--missing error; use --missing mean or zero to fill it)");
  const Slot& s = slots_[j];
  float* o = row + first_feature(s);
  if (s.categories != kNone) {
    // As in a CSV table: a missing category is the all-zero block.
    std::fill(o, row + end_feature(s), 0.0f);
    return;
  }
  if (options.missing == MissingPolicy::Zero) {
    *o = 0.0f;
  } else if (fill_) {
    *o = (*fill_)[first_feature(s)];
  } else if (!options.schema || !options.impute) {
    *o = std::numeric_limits<float>::quiet_NaN();  // filled once the means are known
  } else {
    throw Error(where(source, no, col) + "missing value " + quote_text(text) + " for attribute " +
                quote_text(a.name) +
                ", and the model stores no training means to fill it with; use --missing zero");
  }
}

void ArffParser::store(std::uint64_t no, std::size_t col, std::size_t j, std::string_view v,
                       float* row) {
  const std::string& source = source_;
  std::string& scratch = scratch_;
  const Attribute& a = attrs_.list[j];
  if (v == "?") {
    missing(no, col, j, v, row);
    return;
  }
  if (j == cls_) {
    const std::string_view name = unquote(v, scratch);
    if (name.empty()) throw Error(where(source, no, col) + "empty class value");
    if (a.type == AttrType::Nominal) {
      if (!attrs_.values_of(a).contains(name)) {
        throw Error(where(source, no, col) + "class value " + quote_text(name) +
                    " is not declared for attribute " + quote_text(a.name) + " " +
                    declared_list(attrs_.values_of(a)));
      }
    } else if (a.type == AttrType::Numeric) {
      float tmp;
      const NumStatus st = parse_float(name, tmp);
      if (st != NumStatus::Ok) throw_bad_number(source, no, col, name, st);
    }
    chunk_.rows.labels.push_back(chunk_.interner.intern(name));
    return;
  }
  const Slot& s = slots_[j];
  float* o = row + first_feature(s);
  if (a.type == AttrType::Numeric && s.categories == kNone) {
    const std::string_view t = is_quoted(v) ? trim(unquote(v, scratch)) : v;
    float x;
    const NumStatus st = parse_float(t, x);
    if (st != NumStatus::Ok) throw_bad_number(source, no, col, t, st);
    *o = x;
    return;
  }
  const std::string_view text = unquote(v, scratch);
  if (a.type == AttrType::Nominal) {
    if (!attrs_.values_of(a).contains(text))
      throw Error(where(source, no, col) + "value " + quote_text(text) +
                  " is not declared for attribute " + quote_text(a.name) + " " +
                  declared_list(attrs_.values_of(a)));
  } else if (a.type == AttrType::String && is_missing_cell(text)) {
    // A string attribute is a CSV text column: the CSV spellings of a missing cell.
    missing(no, col, j, text, row);
    return;
  }
  if (s.categories != kNone) {
    std::fill(o, row + end_feature(s), 0.0f);
    const CategoryIndex& index = categories_[s.categories];
    const auto it = index.find(trim(text));
    if (it != index.end()) o[it->second] = 1.0f;  // unseen (at prediction): all-zero block
    return;
  }
  // A string attribute in a numeric column (all its training values were numbers).
  const std::string_view t = trim(text);
  float x;
  const NumStatus st = parse_float(t, x);
  if (st == NumStatus::NotNumber && discovering_) throw TextInNumericColumn{};
  if (st != NumStatus::Ok) throw_bad_number(source, no, col, t, st);
  *o = x;
}

// Where a sparse entry's index ends ("12 value": at the blank).
std::size_t index_end(std::string_view entry) {
  std::size_t sp = 0;
  while (sp < entry.size() && !is_space(entry[sp])) ++sp;
  return sp;
}

bool ArffParser::split_row(std::string_view t, std::uint64_t no) {
  std::vector<std::string_view>& fields = fields_;
  if (t.front() == '{') {
    if (t.back() != '}') throw Error(where(source_, no) + "sparse row without a closing '}'");
    if (!split_commas(t.substr(1, t.size() - 2), fields)) throw Error(where(source_, no) + "unterminated quote");
    if (fields.size() == 1 && fields[0].empty()) fields.clear();  // "{}"
    return true;
  }
  if (!split_commas(t, fields)) throw Error(where(source_, no) + "unterminated quote");
  const std::size_t nattr = attrs_.list.size();
  if (fields.size() != nattr) {
    throw Error(where(source_, no) + std::to_string(fields.size()) + (fields.size() == 1 ? " value" : " values") +
                ", expected " + std::to_string(nattr) + " (one per attribute)");
  }
  return false;
}

void ArffParser::parse_row(std::string_view t, std::uint64_t no, float* row) {
  const bool sparse = split_row(t, no);
  if (builder_) {
    learn_row(sparse, no);
  } else if (sparse) {
    store_sparse_row(no, row);
  } else {
    for (std::size_t j = 0; j < fields_.size(); ++j) store(no, j + 1, j, fields_[j], row);
  }
}

void ArffParser::learn_row(bool sparse, std::uint64_t no) {
  // Learning the string attributes' categories: only their cells matter, and labels and
  // numbers are checked when the rows are encoded.
  const std::size_t nattr = attrs_.list.size();
  std::size_t given = 0;
  auto learn = [&](std::size_t j, std::string_view v) {
    if (j == cls_ || attrs_.list[j].type != AttrType::String) return;
    learn_cells_[j] = unquote(v, learn_scratch_[j]);
    ++given;
  };
  if (sparse) {
    for (std::string_view entry : fields_) {
      const std::size_t sp = index_end(entry);
      long long idx = -1;
      if (parse_int64(entry.substr(0, sp), idx) && idx >= 0 && idx < static_cast<long long>(nattr))
        learn(static_cast<std::size_t>(idx), trim(entry.substr(sp)));
    }
    // An omitted string attribute is an error when the row is encoded; here it is
    // missing, so that the encoding pass reports it.
    if (given < sparse_required_.size())
      for (std::uint32_t j : sparse_required_) learn_cells_[j] = "?";
  } else {
    for (std::size_t j = 0; j < nattr; ++j) learn(j, fields_[j]);
  }
  builder_->observe(learn_cells_, no);
  ++observed_rows_;
}

void ArffParser::store_sparse_row(std::uint64_t no, float* row) {
  const std::size_t nattr = attrs_.list.size();
  if (!sparse_row_zero_) std::copy(sparse_row_.begin(), sparse_row_.end(), row);
  long long prev = -1;
  bool has_class = false;
  std::size_t required = 0;
  for (std::size_t e = 0; e < fields_.size(); ++e) {
    const std::string_view entry = fields_[e];
    const std::size_t col = e + 1;
    const std::size_t sp = index_end(entry);
    const std::string_view idx_text = entry.substr(0, sp);
    const std::string_view value = trim(entry.substr(sp));
    long long idx = -1;
    if (!parse_int64(idx_text, idx) || idx < 0 || idx_text[0] == '+' || value.empty()) {
      throw Error(where(source_, no, col) + "expected 'index value' in a sparse row, found " + quote_text(entry));
    }
    if (idx >= static_cast<long long>(nattr)) {
      throw Error(where(source_, no, col) + "attribute index " + std::to_string(idx) + " is out of range (" +
                  std::to_string(nattr) + " attributes, indices start at 0)");
    }
    if (idx <= prev) {
      throw Error(where(source_, no, col) + "attribute index " + std::to_string(idx) +
                  (idx == prev ? " is repeated" : " after " + std::to_string(prev)) +
                  ": sparse indices must be strictly ascending");
    }
    prev = idx;
    const std::size_t j = static_cast<std::size_t>(idx);
    if (j == cls_) has_class = true;
    if (j != cls_ && attrs_.list[j].type == AttrType::String) ++required;
    store(no, col, j, value, row);
  }
  if (labelled_ && !has_class) {
    throw Error(where(source_, no) + "sparse row omits the class attribute " + quote_text(attrs_.list[cls_].name));
  }
  if (required < sparse_required_.size()) throw_omitted_string(no);
}

void ArffParser::throw_omitted_string(std::uint64_t no) const {
  // Which one: the first string attribute no entry names.
  std::size_t e = 0;
  for (std::uint32_t j : sparse_required_) {
    long long idx = -1;
    while (e < fields_.size()) {
      const std::string_view entry = fields_[e];
      parse_int64(entry.substr(0, index_end(entry)), idx);
      if (idx >= static_cast<long long>(j)) break;
      ++e;
    }
    if (e == fields_.size() || idx != static_cast<long long>(j))
      throw Error(where(source_, no) + "sparse row omits the string attribute " + quote_text(attrs_.list[j].name) +
                  " (an omitted string value is undefined; give it, or '?' when missing)");
  }
}

void ArffParser::read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) {
  const std::string& source = source_;
  Dataset& ds = chunk_.rows;
  std::string_view line;
  while (ds.n_rows < max_rows && lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    const std::uint64_t no = lines.line_number();
    if (builder_) {
      parse_row(t, no, nullptr);
      continue;
    }
    cells_ += ds.n_features;
    if (cells_ > max_values) checked_cells(ds.n_rows + 1, ds.n_features, max_values, source);
    ds.features.resize(ds.features.size() + ds.n_features, 0.0f);
    parse_row(t, no, ds.features.data() + ds.n_rows * ds.n_features);
    ds.row_origin.push_back(no);
    ++ds.n_rows;
  }
}

Dataset ArffParser::take_chunk(std::uint64_t) {
  // Training hands the schema on when it holds something (names, categories); the
  // caller completes it with the training means.
  Dataset out = chunk_.take(&schema_);
  reset_chunk();
  return out;
}

}  // namespace

namespace detail {

std::unique_ptr<TableParser> make_arff_parser(const LoadOptions& options, const std::string& source) {
  return std::make_unique<ArffParser>(options, source);
}

}  // namespace detail

}  // namespace flynn::io
