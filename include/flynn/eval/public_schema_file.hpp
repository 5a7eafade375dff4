#pragma once
// `flynn schema` as a library operation: a public table schema
// (flynn/federated/public_schema.hpp) written from a public sample of the table — what the
// federated commands' --schema reads, so that under DP the categories and d come from
// public knowledge instead of the parties' rows.
#include <string>

#include "flynn/eval/report.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/option_table.hpp"

namespace flynn::eval {

/// What to write, as given.
struct PublicSchemaRequest {
  std::string data, out;
  bool fill_means = false;
  bool quiet = false;  ///< print nothing (the front-end's part)
};

/// --data, --out, --fill-means, --quiet.
const OptionTable<PublicSchemaRequest>& public_schema_fields();

/// Reads request.data with `load` (missing cells stay NaN: the sample's means become fill
/// values only with fill_means), writes the schema atomically to request.out after reading
/// it back as the federated commands will, and reports {digest, features, out} and a
/// description of the columns. Throws flynn::Error on bad data.
Report write_public_schema_file(const PublicSchemaRequest& request, io::LoadOptions load);

}  // namespace flynn::eval
