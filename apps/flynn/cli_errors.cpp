#include "cli_errors.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace flynn::cli {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string closest_word(std::string_view word, const std::vector<std::string>& candidates) {
  // Dashes are not part of what was meant: "--modle" is 5 letters, allowed two edits.
  const std::size_t letters = word.size() - std::min(word.find_first_not_of('-'), word.size());
  const std::size_t reach = letters <= 4 ? 1 : letters <= 8 ? 2 : 3;
  std::string best;
  std::size_t best_distance = reach + 1;
  for (const std::string& c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_distance) {
      best = c;
      best_distance = dist;
    }
  }
  return best;
}

namespace {

// "flynn federated simulate": the command path of `app`.
std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a; a = a->get_parent())
    path =
        (a->get_parent() ? a->get_name() : std::string("flynn")) + (path.empty() ? "" : " " + path);
  return path;
}

std::vector<std::string> subcommand_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app->get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

bool is_number(const std::string& s) {
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end && *end == '\0' && end != s.c_str();
}

// What the command line asked for: the deepest command it named, and the first word that
// names no command of a group, or the first flag that names no option of its command.
struct Reading {
  CLI::App* command = nullptr;
  std::optional<std::string> unknown_command, unknown_option;
};

Reading read_command_line(CLI::App& app, int argc, const char* const* argv) {
  Reading r{&app, {}, {}};
  for (int i = 1; i < argc; ++i) {
    const std::string tok = argv[i];
    if (tok == "--") break;
    if (tok.size() > 1 && tok[0] == '-' && !is_number(tok)) {
      const std::string name = tok.substr(0, tok.find('='));
      // "-abc" may be several short flags: only single ones and long ones are checked.
      if (name.size() > 2 && name[1] != '-') continue;
      if (!r.command->get_option_no_throw(name)) {
        if (!r.unknown_option) r.unknown_option = name;
      }
      continue;
    }
    if (subcommand_names(r.command).empty()) continue;  // a value or a positional
    CLI::App* sub = nullptr;
    for (CLI::App* s : r.command->get_subcommands([](CLI::App*) { return true; }))
      if (s->check_name(tok)) sub = s;
    if (!sub) {
      r.unknown_command = tok;
      break;
    }
    r.command = sub;
  }
  return r;
}

std::string unknown_command_text(const Reading& r) {
  const std::vector<std::string> names = subcommand_names(r.command);
  std::string text =
      "'" + *r.unknown_command + "' is not a command of '" + command_path(r.command) + "'";
  const std::string near = closest_word(*r.unknown_command, names);
  if (!near.empty()) return text + "; did you mean '" + near + "'?";
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return text + " (its commands: " + list + ")";
}

std::string unknown_option_text(const Reading& r) {
  std::string text =
      "unknown option '" + *r.unknown_option + "' for '" + command_path(r.command) + "'";
  const std::string near = closest_word(*r.unknown_option, option_names(r.command));
  return near.empty() ? text : text + "; did you mean " + near + "?";
}

}  // namespace

int report_parse_error(CLI::App& app, const CLI::ParseError& error, int argc,
                       const char* const* argv) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
    return app.exit(error);  // --help, --version
  const Reading r = read_command_line(app, argc, argv);
  std::string what = error.what();
  if (r.unknown_command) {
    what = unknown_command_text(r);
  } else if (r.unknown_option) {
    what = unknown_option_text(r);
  } else if (what == "A subcommand is required") {
    std::string list;
    for (const std::string& n : subcommand_names(r.command)) list += (list.empty() ? "" : ", ") + n;
    what = "'" + command_path(r.command) + "' needs a command (" + list + ")";
  }
  // One line, as every other error of flynn.
  std::fprintf(stderr, "flynn: error: %s (see '%s --help')\n", what.c_str(),
               command_path(r.command).c_str());
  return 1;
}

}  // namespace flynn::cli
