#include "core/error.h"

namespace lockstep {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kArgument: return "argument";
    case ErrorKind::kFormat: return "format";
    case ErrorKind::kIo: return "io";
    case ErrorKind::kState: return "state";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kResource: return "resource";
    case ErrorKind::kCancelled: return "cancelled";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace lockstep
