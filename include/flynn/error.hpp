#pragma once
// Error reporting for flynn.
//
// User errors (bad input files, invalid hyper-parameters, mismatched models) throw
// flynn::Error, whose message is one line meant for a human: it names the file, the
// line/column or the parameter, and what was expected. Front-ends print what() and exit
// non-zero. Internal invariant violations use FLYNN_ASSERT, which aborts: they are bugs,
// not conditions a caller can handle.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace flynn {

/// The one exception type of the library. what() is a complete one-line message.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Thrown when a long operation is cancelled by its progress callback.
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled") {}
};

}  // namespace flynn

/// Aborts with file:line on an internal invariant violation (a bug in flynn).
#define FLYNN_ASSERT(cond)                                                           \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "flynn: internal error: %s at %s:%d\n", #cond, __FILE__, \
                   __LINE__);                                                        \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)
