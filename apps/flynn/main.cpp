// flynn: command-line front-end of the flynn library.
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/version.hpp"

int main(int argc, char** argv) {
  flynn::cli::prepare_bench(argc, argv);
  CLI::App app{
      "flynn: FlyNN, nearest-neighbour classification with FlyHash and Fly Bloom Filters, "
      "and its federated, differentially private training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("flynn ") + flynn::version_string);
  flynn::cli::add_registered_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const flynn::Cancelled&) {
    std::fprintf(stderr, "flynn: cancelled\n");
    return 1;
  } catch (const flynn::Error& e) {
    std::fprintf(stderr, "flynn: error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "flynn: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flynn: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
