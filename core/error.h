// Two kinds of failure (docs/errors.md): a user's bad input or a failing environment throws
// lockstep::Error with a message naming what was expected and what was given, and a kind that every
// front door maps without guessing (a C status, a JavaScript error code, a CLI exit status); a
// programmer's bug in lockstep aborts with file and line (LOCKSTEP_ASSERT). No user input may reach
// an assertion.
#ifndef LOCKSTEP_CORE_ERROR_H_
#define LOCKSTEP_CORE_ERROR_H_

#include <stdio.h>
#include <stdlib.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace lockstep {

// What went wrong, decided where the error is thrown.
enum class ErrorKind {
  kArgument,     // a bad value, shape, name or option given by the caller
  kFormat,       // a file or byte buffer was read, but its contents are not valid
  kIo,           // a file could not be opened, read or written (missing, permissions, disk full)
  kState,        // the call is wrong in the current state (mismatched handles, a used graph, FTZ)
  kUnavailable,  // a device, plugin or driver is not there
  kResource,     // out of memory, or a size beyond what this platform can address
  kCancelled,    // the caller asked to stop (a progress callback, an interrupt)
  kInternal,     // a failure inside lockstep that is not the caller's
};

// "argument", "format", "io", "state", "unavailable", "resource", "cancelled", "internal".
const char* ErrorKindName(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::kArgument)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace lockstep

// Throws lockstep::Error of the given kind when cond is false; the message is built with << only
// then.
#define LOCKSTEP_REQUIRE_KIND(kind, cond, message)                    \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::ostringstream lockstep_message_;                           \
      lockstep_message_ << message;                                   \
      throw ::lockstep::Error(lockstep_message_.str(), (kind));       \
    }                                                                 \
  } while (0)

// The common case: a bad argument.
#define LOCKSTEP_REQUIRE(cond, message) LOCKSTEP_REQUIRE_KIND(::lockstep::ErrorKind::kArgument, cond, message)
// A file's or buffer's contents are not valid.
#define LOCKSTEP_REQUIRE_FORMAT(cond, message) LOCKSTEP_REQUIRE_KIND(::lockstep::ErrorKind::kFormat, cond, message)
// The call does not fit the current state.
#define LOCKSTEP_REQUIRE_STATE(cond, message) LOCKSTEP_REQUIRE_KIND(::lockstep::ErrorKind::kState, cond, message)

// Aborts on a broken internal invariant (a bug in lockstep, not in the caller's input).
#define LOCKSTEP_ASSERT(cond)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "lockstep: internal error at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

#endif  // LOCKSTEP_CORE_ERROR_H_
