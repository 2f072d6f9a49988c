// The boundary between JavaScript and the engine: every bound function runs its body through
// JsBoundary, which turns a C++ exception into a JavaScript Error carrying the message. The module
// stays usable afterwards; no exception pointer or abort ever reaches JavaScript.
#ifndef LOCKSTEP_BINDINGS_WASM_JS_BOUNDARY_H_
#define LOCKSTEP_BINDINGS_WASM_JS_BOUNDARY_H_

#include <emscripten/val.h>

#include "core/error.h"

#include <exception>
#include <new>
#include <string>
#include <vector>

namespace lockstep {
namespace wasm {

// Throws `new Error(message)` into JavaScript with error.kind set to the engine's error kind
// ("argument", "format", "io", "state", "unavailable", "resource", "cancelled", "internal";
// docs/errors.md); never returns.
[[noreturn]] void ThrowJsError(const std::string& message, const char* kind);

template <class F>
auto JsBoundary(F&& body) -> decltype(body()) {
  std::string message;
  const char* kind = "internal";
  try {
    return body();
  } catch (const Error& e) {
    message = e.what();
    kind = ErrorKindName(e.kind());
  } catch (const std::bad_alloc&) {
    message = "out of memory";
    kind = "resource";
  } catch (const std::exception& e) {
    message = e.what();
  }
  // Thrown outside the catch block, so the C++ exception is finished before JavaScript unwinds.
  ThrowJsError(message, kind);
}

// Conversions from JavaScript values, each checked with a message that names `what`.
// An array of non-negative integer dimensions.
std::vector<int64_t> ShapeFromJs(const emscripten::val& shape, const char* what);
// A non-negative integer below 2^53 (JavaScript numbers hold those exactly).
uint64_t SeedFromJs(double seed, const char* what);
// A finite number.
float FiniteFromJs(double value, const char* what);
// The bytes of a Uint8Array (copied into the module's memory).
std::vector<uint8_t> BytesFromJs(const emscripten::val& bytes, const char* what);
// A new Uint8Array owned by JavaScript holding a copy of bytes.
emscripten::val BytesToJs(const std::vector<uint8_t>& bytes);

}  // namespace wasm
}  // namespace lockstep

#endif  // LOCKSTEP_BINDINGS_WASM_JS_BOUNDARY_H_
