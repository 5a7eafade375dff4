#pragma once
// Writing and re-reading the CSV files flynn produces (predictions, study results):
// RFC 4180 quoting of single cells and splitting of single lines.
#include <string>
#include <string_view>
#include <vector>

namespace flynn::detail {

/// The cell as CSV: quoted (quotes doubled) when it holds a comma, quote or line break.
std::string csv_field(std::string_view text);

/// Splits one CSV line with RFC 4180 quoting (no embedded line breaks); a trailing '\r'
/// is dropped.
std::vector<std::string> csv_split(std::string_view line);

}  // namespace flynn::detail
