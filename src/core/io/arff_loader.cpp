// ARFF parser (see loaders.hpp for what is accepted).
#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/row_parser.hpp"
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
// to @data and chooses the class attribute; read_rows() parses dense and sparse rows.
class ArffParser final : public RowParser {
 public:
  ArffParser(const LoadOptions& options, std::string source)
      : options_(options), source_(std::move(source)) {}

  void begin(LineScanner& lines, bool at_end) override;
  bool has_labels() const override { return labelled_; }
  std::size_t fixed_width() const override { return n_features_; }
  void read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) override;
  std::size_t chunk_rows() const override { return chunk_.rows.n_rows; }
  Dataset take_chunk(std::uint64_t max_values) override;
  void end() override {
    if (chunk_.total_rows == 0) throw Error(source_ + ": no data rows after @data");
  }

 private:
  // The value of a missing feature value '?' (LoadOptions::missing): an error, 0, the
  // model's mean at prediction, or NaN until the training means are known.
  float missing(std::uint64_t no, std::size_t col, std::size_t attr) const;
  // Stores the value of attribute `j` (field text `v`, column `col`) into row `row`.
  void store(std::uint64_t no, std::size_t col, std::size_t j, std::string_view v, float* row);
  void reset_chunk();

  const LoadOptions& options_;
  std::string source_;
  Attributes attrs_;
  std::size_t cls_ = 0;               // the class attribute; attrs_.list.size() when none
  std::vector<std::size_t> feat_pos_;  // position of each attribute in the feature row
  bool labelled_ = false;
  std::size_t n_features_ = 0;
  // The schema chunks carry: at training the attribute names (stored in the model, so that
  // CSV tables are matched by them too); at prediction the model's.
  TableSchema schema_;
  const std::vector<float>* fill_ = nullptr;  // the model's missing-value means, if any
  std::uint64_t cells_ = 0;       // dense values of the current chunk
  TableChunk chunk_;
  std::vector<std::string_view> fields_;
  std::string scratch_;
};

void ArffParser::reset_chunk() {
  chunk_.reset(source_, n_features_, labelled_);
  cells_ = 0;
}

void ArffParser::begin(LineScanner& lines, bool at_end) {
  using Kind = LabelColumn::Kind;
  const std::string& source = source_;
  const LoadOptions& options = options_;
  std::string_view line;
  Attributes header;
  const std::vector<Attribute>& attrs = header.list;
  bool in_data = false, any_content = false;
  std::uint64_t data_line = 0;

  // A reader that gives the text block by block calls begin() again after NeedMoreText:
  // look for @data with a cheap scan first, so that a long header (a million @attribute
  // lines) is parsed once rather than once per block read. The scan stops at the first
  // line that is no header line, which the parse below then reports.
  if (!at_end) {
    LineScanner scan = lines;
    std::string_view l;
    bool complete = false;
    while (scan.next(l)) {
      const std::string_view t = trim(l);
      if (t.empty() || t.front() == '%' || keyword_is(t, "@attribute") ||
          keyword_is(t, "@relation"))
        continue;
      complete = true;  // @data, or a line the parse reports
      break;
    }
    if (!complete) throw NeedMoreText{};
  }

  // ---- header
  while (lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    any_content = true;
    const std::uint64_t no = lines.line_number();
    if (keyword_is(t, "@relation")) {
      if (!attrs.empty()) throw Error(where(source, no) + "@relation after @attribute");
    } else if (keyword_is(t, "@attribute")) {
      parse_attribute(t.substr(10), source, no, header);
    } else if (keyword_is(t, "@data")) {
      if (!trim(t.substr(5)).empty())
        throw Error(where(source, no) + "unexpected text after @data");
      in_data = true;
      data_line = no;
      break;
    } else if (keyword_is(t, "@end")) {
      throw Error(where(source, no) + "@end outside a relational attribute");
    } else {
      throw Error(where(source, no) + "expected @relation, @attribute or @data, found " +
                  quote_text(t));
    }
  }
  if (!in_data && !at_end) throw NeedMoreText{};
  // Before "no @data": a repeated name is the first problem of such a header too.
  check_unique_names(attrs, source);
  if (!any_content) throw Error(source + ": empty file");
  if (!in_data) throw Error(source + ": no @data section");
  if (attrs.empty()) throw Error(where(source, data_line) + "@data before any @attribute");
  // ---- which attribute is the class
  const std::size_t nattr = attrs.size();
  const LabelColumn& lc = options.label_column;
  bool labelled = lc.kind != Kind::None;
  if (options.expected_features) {
    const std::size_t d = *options.expected_features;
    if (nattr == d) {
      if (lc.kind == Kind::Index || lc.kind == Kind::Name) {
        throw Error(source + ": " + std::to_string(nattr) + " attributes, the model expects " +
                    std::to_string(d) +
                    " features: no room for the class attribute that was given");
      }
      labelled = false;
    } else if (nattr == d + 1 && lc.kind != Kind::None) {
      labelled = true;
    } else {
      throw Error(source + ": " + std::to_string(nattr) + " attributes, model expects " +
                  std::to_string(d) + " features" +
                  (lc.kind == Kind::None
                       ? std::string(" (class attribute 'none')")
                       : " (or " + std::to_string(d + 1) + " with a class attribute)"));
    }
  }
  std::size_t cls = nattr;  // nattr = no class
  if (labelled) {
    if (nattr < 2) {
      throw Error(source + ": 1 attribute: need at least one feature attribute besides the class");
    }
    if (lc.kind == Kind::Last) {
      cls = nattr - 1;
    } else if (lc.kind == Kind::Index) {
      const long k = lc.index, n = static_cast<long>(nattr);
      if (k == 0 || k > n || k < -n) {
        throw Error(source + ": class attribute " + std::to_string(k) + " is out of range (" +
                    std::to_string(nattr) + " attributes)");
      }
      cls = static_cast<std::size_t>(k > 0 ? k - 1 : n + k);
    } else {
      for (std::size_t j = 0; j < nattr; ++j)
        if (attrs[j].name == lc.name) {
          cls = j;
          break;
        }
      if (cls == nattr) throw Error(source + ": no attribute named " + quote_text(lc.name));
    }
  }
  for (std::size_t j = 0; j < nattr; ++j) {
    const Attribute& a = attrs[j];
    if (j == cls) {
      if (a.type == AttrType::Date || a.type == AttrType::Relational) {
        throw Error(where(source, a.line) + "the class attribute " + quote_text(a.name) + " is " +
                    type_name(a.type) + "; it must be nominal, numeric or string");
      }
    } else if (a.type != AttrType::Numeric) {
      throw Error(where(source, a.line) + "attribute " + quote_text(a.name) + " is " +
                  type_name(a.type) + "; only numeric, real or integer attributes can be features" +
                  (labelled ? "" : " (is it the class? see the label column option)"));
    }
  }
  // Position of each attribute in the feature row (nattr for the class).
  std::vector<std::size_t> feat_pos(nattr, nattr);
  for (std::size_t j = 0, p = 0; j < nattr; ++j)
    if (j != cls) feat_pos[j] = p++;

  // Prediction: the model's table. Attributes are matched by position; when the model
  // has names they must be these attributes' names, in this order.
  const TableSchema* model_schema = options.schema;
  if (model_schema && model_schema->named && !model_schema->empty()) {
    for (std::size_t j = 0, k = 0; j < nattr && k < model_schema->columns.size(); ++j) {
      if (j == cls) continue;
      const TableColumn& c = model_schema->columns[k++];
      if (c.categorical())
        throw Error(source + ": the model one-hot encodes column " + quote_text(c.name) +
                    "; ARFF rows cannot be read for it (use CSV)");
      if (c.name != attrs[j].name)
        throw Error(where(source, attrs[j].line) + "attribute " + quote_text(attrs[j].name) +
                    " is where the model expects feature " + quote_text(c.name) +
                    " (ARFF attributes are matched by position)");
    }
  }
  schema_ = {};
  // Names are kept for tables of at most kMaxNamedAttributes attributes: every chunk and
  // the model carry the schema, and ARFF matches attributes by position anyway, so for the
  // very wide (sparse) files the names would only cost memory: a million attribute names
  // tripled the peak memory of training on a 27 MB file (tests/hostile).
  constexpr std::size_t kMaxNamedAttributes = std::size_t{1} << 16;
  if (!model_schema) {
    if (nattr <= kMaxNamedAttributes) {
      schema_.named = true;
      for (std::size_t j = 0; j < nattr; ++j)
        if (j != cls) schema_.columns.push_back({attrs[j].name, {}});
      if (labelled) schema_.label_name = attrs[cls].name;
    }
  } else if (!model_schema->empty()) {
    schema_ = *model_schema;
  }
  fill_ = model_schema && !model_schema->fill.empty() ? &model_schema->fill : nullptr;

  attrs_ = std::move(header);
  cls_ = cls;
  feat_pos_ = std::move(feat_pos);
  labelled_ = labelled;
  n_features_ = labelled ? nattr - 1 : nattr;
  chunk_.total_rows = 0;
  reset_chunk();
}

float ArffParser::missing(std::uint64_t no, std::size_t col, std::size_t attr) const {
  const std::string& source = source_;
  const LoadOptions& options = options_;
  if (attr == cls_)
    throw Error(where(source, no, col) + "missing value '?' for the class attribute " +
                quote_text(attrs_.list[attr].name));
  if (options.missing == MissingPolicy::Zero) return 0.0f;
  if (options.missing == MissingPolicy::Mean) {
    if (fill_) return (*fill_)[feat_pos_[attr]];
    if (!options.schema || !options.impute) return std::numeric_limits<float>::quiet_NaN();
    throw Error(where(source, no, col) + "missing value '?' for attribute " +
                quote_text(attrs_.list[attr].name) +
                ", and the model stores no training means to fill it with; use --missing zero");
  }
  throw Error(where(source, no, col) + "missing value '?' for attribute " +
              quote_text(attrs_.list[attr].name) + " (--missing error; use --missing mean or zero to fill it)");
}

void ArffParser::store(std::uint64_t no, std::size_t col, std::size_t j, std::string_view v,
                       float* row) {
  const std::string& source = source_;
  std::string& scratch = scratch_;
  if (v == "?") {
    row[feat_pos_[j]] = missing(no, col, j);
    return;
  }
  if (j == cls_) {
    const Attribute& a = attrs_.list[j];
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
  const std::string_view t = is_quoted(v) ? trim(unquote(v, scratch)) : v;
  float x;
  const NumStatus st = parse_float(t, x);
  if (st != NumStatus::Ok) throw_bad_number(source, no, col, t, st);
  row[feat_pos_[j]] = x;
}

void ArffParser::read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) {
  const std::string& source = source_;
  const std::size_t nattr = attrs_.list.size();
  const std::size_t cls = cls_;
  const bool labelled = labelled_;
  Dataset& ds = chunk_.rows;
  std::vector<std::string_view>& fields = fields_;
  std::string_view line;
  while (ds.n_rows < max_rows && lines.next(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    const std::uint64_t no = lines.line_number();
    cells_ += ds.n_features;
    if (cells_ > max_values) checked_cells(ds.n_rows + 1, ds.n_features, max_values, source);
    ds.features.resize(ds.features.size() + ds.n_features, 0.0f);
    float* row = ds.features.data() + ds.n_rows * ds.n_features;
    if (t.front() == '{') {
      if (t.back() != '}') throw Error(where(source, no) + "sparse row without a closing '}'");
      if (!split_commas(t.substr(1, t.size() - 2), fields))
        throw Error(where(source, no) + "unterminated quote");
      if (fields.size() == 1 && fields[0].empty()) fields.clear();  // "{}"
      long long prev = -1;
      bool has_class = false;
      for (std::size_t e = 0; e < fields.size(); ++e) {
        const std::string_view entry = fields[e];
        const std::size_t col = e + 1;
        std::size_t sp = 0;
        while (sp < entry.size() && !is_space(entry[sp])) ++sp;
        const std::string_view idx_text = entry.substr(0, sp);
        const std::string_view value = trim(entry.substr(sp));
        long long idx = -1;
        if (!parse_int64(idx_text, idx) || idx < 0 || idx_text[0] == '+' || value.empty()) {
          throw Error(where(source, no, col) + "expected 'index value' in a sparse row, found " +
                      quote_text(entry));
        }
        if (idx >= static_cast<long long>(nattr)) {
          throw Error(where(source, no, col) + "attribute index " + std::to_string(idx) +
                      " is out of range (" + std::to_string(nattr) +
                      " attributes, indices start at 0)");
        }
        if (idx <= prev) {
          throw Error(where(source, no, col) + "attribute index " + std::to_string(idx) +
                      (idx == prev ? " is repeated" : " after " + std::to_string(prev)) +
                      ": sparse indices must be strictly ascending");
        }
        prev = idx;
        if (static_cast<std::size_t>(idx) == cls) has_class = true;
        store(no, col, static_cast<std::size_t>(idx), value, row);
      }
      if (labelled && !has_class) {
        throw Error(where(source, no) + "sparse row omits the class attribute " +
                    quote_text(attrs_.list[cls].name));
      }
    } else {
      if (!split_commas(t, fields)) throw Error(where(source, no) + "unterminated quote");
      if (fields.size() != nattr) {
        throw Error(where(source, no) + std::to_string(fields.size()) +
                    (fields.size() == 1 ? " value" : " values") + ", expected " +
                    std::to_string(nattr) + " (one per attribute)");
      }
      for (std::size_t j = 0; j < nattr; ++j) store(no, j + 1, j, fields[j], row);
    }
    ds.row_origin.push_back(no);
    ++ds.n_rows;
  }
}

Dataset ArffParser::take_chunk(std::uint64_t) {
  Dataset out = chunk_.take(&schema_);
  reset_chunk();
  return out;
}

}  // namespace

namespace detail {

std::unique_ptr<RowParser> make_arff_parser(const LoadOptions& options, const std::string& source) {
  return std::make_unique<ArffParser>(options, source);
}

}  // namespace detail

Dataset parse_arff(std::string_view text, const LoadOptions& options, const std::string& source) {
  ArffParser parser(options, source);
  Dataset ds = parse_text(parser, text, options);
  // Training under --missing mean: the means of the whole file fill its missing values.
  if (!options.schema && options.missing == MissingPolicy::Mean && options.impute)
    complete_table(ds, ImputationSums::of(ds));
  return ds;
}

}  // namespace flynn::io
