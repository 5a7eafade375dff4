#include "flynn/eval/public_schema_file.hpp"

#include <fmt/format.h>

#include "flynn/io/atomic_file.hpp"
#include "flynn/federated/public_schema.hpp"

namespace flynn::eval {

const OptionTable<PublicSchemaRequest>& public_schema_fields() {
  using R = PublicSchemaRequest;
  static const OptionTable<R> fields = {
      {"--data", "A public sample of the table (CSV, ARFF, ...): its columns and categories", &R::data, {}, true},
      {"--out", "The schema file to write (JSON; see docs/guide/federated.md)", &R::out, {}, true},
      {"--fill-means", "Also store the sample's feature means as the values that fill missing cells", &R::fill_means},
      {"--quiet", "Print nothing", &R::quiet},
  };
  return fields;
}

Report write_public_schema_file(const PublicSchemaRequest& o, io::LoadOptions load) {
  load.impute = false;
  const Dataset sample = io::load_dataset(o.data, load);
  const federated::PublicSchema schema = federated::public_schema_of(sample, o.fill_means);
  const std::string text = federated::public_schema_json(schema);
  // Read back before writing: the file must be one the federated commands accept.
  federated::parse_public_schema(text, o.out);
  io::write_file_atomic(o.out, text);

  Report r;
  const std::string digest = federated::public_schema_digest(schema);
  r.json = {{"command", "schema"}, {"data", o.data}, {"out", o.out}, {"features", schema.features}, {"digest", digest}};
  const TableSchema& t = schema.table;
  if (t.empty()) {
    r.text = fmt::format("schema: positional data, d = {}\n", schema.features);
  } else {
    std::size_t categorical = 0;
    for (const TableColumn& c : t.columns) categorical += c.categorical();
    r.text = fmt::format("schema: {} feature columns ({}), {} categorical, d = {}{}{}{}\n", t.columns.size(),
                         t.named ? "matched by name" : "by position", categorical, schema.features,
                         t.label_name.empty() ? "" : ", label column " + t.label_name,
                         t.id_name.empty() ? "" : ", id column " + t.id_name,
                         t.fill.empty() ? "" : ", fill values (the sample's means)");
    for (std::size_t k = 0; k < t.columns.size(); ++k)
      if (t.columns[k].categorical())
        r.text += fmt::format("  {}: {} categories\n", t.named ? t.columns[k].name : fmt::format("column {}", k + 1),
                              t.columns[k].categories.size());
  }
  r.text += fmt::format(
      "digest: {}\nwritten: {} (its categories are those of {}: give it a public sample, not a party's private "
      "rows)\n",
      digest, o.out, o.data);
  return r;
}

}  // namespace flynn::eval
