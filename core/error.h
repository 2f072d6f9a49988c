// Two kinds of error (docs/architecture): a user's bad input throws lockstep::Error with a message
// naming what was expected and what was given; a programmer's bug aborts with file and line.
#ifndef LOCKSTEP_CORE_ERROR_H_
#define LOCKSTEP_CORE_ERROR_H_

#include <stdio.h>
#include <stdlib.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace lockstep {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace lockstep

// Throws lockstep::Error when cond is false; the message is built with << only then.
#define LOCKSTEP_REQUIRE(cond, message)                   \
  do {                                                    \
    if (!(cond)) {                                        \
      std::ostringstream lockstep_message_;               \
      lockstep_message_ << message;                       \
      throw ::lockstep::Error(lockstep_message_.str());   \
    }                                                     \
  } while (0)

// Aborts on a broken internal invariant (a bug in lockstep, not in the caller's input).
#define LOCKSTEP_ASSERT(cond)                                                              \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "lockstep: internal error at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

#endif  // LOCKSTEP_CORE_ERROR_H_
