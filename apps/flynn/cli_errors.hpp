#pragma once
// Command-line mistakes in flynn's form: every error on stderr as "flynn: error: ...",
// with a suggestion for a mistyped command or flag ("did you mean 'train'?"), found by edit
// distance over the commands and options the CLI11 app has.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace flynn::cli {

/// Edit distance with adjacent transpositions (optimal string alignment): "trian" is one
/// edit from "train", "--modle" one from "--model".
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `word` when it is near enough to be what was meant (at most
/// one edit for words of up to four characters, two up to eight, three beyond; the first
/// of equally near ones), else "".
std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

/// Handles a parse error of `app` on argv: --help and --version print as CLI11 prints them
/// and return 0; every other error prints "flynn: error: <what>" to stderr, naming an
/// unknown command or option first (with the nearest existing one) even when CLI11
/// stopped at another complaint (a required option missing because its flag was
/// mistyped), and where to find help, on one line; returns 1.
int report_parse_error(CLI::App& app, const CLI::ParseError& error, int argc,
                       const char* const* argv);

}  // namespace flynn::cli
