// flynn: command-line front-end of the flynn library.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>
#include <new>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "cli_errors.hpp"
#include "commands.hpp"
#include "flynn/build_config.hpp"
#include "flynn/error.hpp"
#include "flynn/io/load_notes.hpp"
#include "flynn/version.hpp"
#if FLYNN_HAVE_FAISS
#include "flynn/harness/blas_env.hpp"
#endif

namespace {

// Output that never reached its destination (a full disk, a closed pipe, /dev/full) is a
// failure even when the command itself succeeded: flush and close standard output and
// report what went wrong.
int finish_standard_output() {
  std::cout.flush();
  const bool stream_failed = !std::cout;
  errno = 0;
  if (stream_failed || std::fflush(stdout) != 0 || std::ferror(stdout) || std::fclose(stdout) != 0) {
    const int err = errno;
    std::fprintf(stderr, "flynn: error: writing to standard output failed%s%s\n",
                 err ? ": " : "", err ? std::strerror(err) : "");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
#if FLYNN_HAVE_FAISS
  flynn::harness::prepare_bench(argc, argv);
#endif
  CLI::App app{
      "flynn: FlyNN, nearest-neighbour classification with FlyHash and Fly Bloom Filters, "
      "and its federated, differentially private training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("flynn ") + flynn::version_string);
  flynn::cli::add_registered_commands(app);
  flynn::cli::make_integer_options_strict(app);
  // What a loader had to guess (a CSV header under --header auto), on stderr: once per
  // note, however many passes over the file a command makes.
  flynn::io::set_note_handler([](const std::string& note) {
    static std::mutex mutex;
    static std::set<std::string> printed;
    const std::lock_guard<std::mutex> lock(mutex);
    if (printed.insert(note).second) std::fprintf(stderr, "flynn: note: %s\n", note.c_str());
  });
  // Data that loads but looks wrong (a label column of identifiers), likewise once each.
  flynn::io::set_warning_handler([](const std::string& warning) {
    static std::mutex mutex;
    static std::set<std::string> printed;
    const std::lock_guard<std::mutex> lock(mutex);
    if (printed.insert(warning).second) std::fprintf(stderr, "flynn: warning: %s\n", warning.c_str());
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version exit 0; every usage error (an unknown flag, a value out of range)
    // is printed as "flynn: error: ..." and exits 1 like every other clean error, not with
    // CLI11's 100-range codes.
    return flynn::cli::report_parse_error(app, e, argc, argv);
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
  return finish_standard_output();
}
