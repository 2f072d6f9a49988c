#include "bindings/wasm/src/js_boundary.h"

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace lockstep {
namespace wasm {

void ThrowJsError(const std::string& message, const char* kind) {
  emscripten::val error = emscripten::val::global("Error").new_(emscripten::val(message));
  error.set("kind", emscripten::val(kind));
  error.throw_();
}

std::vector<int64_t> ShapeFromJs(const emscripten::val& shape, const char* what) {
  LOCKSTEP_REQUIRE(emscripten::val::global("Array").call<bool>("isArray", shape),
                   what << ": expected an array of dimensions, got " << shape.typeOf().as<std::string>());
  const size_t rank = shape["length"].as<size_t>();
  LOCKSTEP_REQUIRE(rank <= 8, what << ": at most 8 dimensions, got " << rank);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < rank; ++i) {
    const emscripten::val d = shape[i];
    const bool is_number = d.typeOf().as<std::string>() == "number";
    const double v = is_number ? d.as<double>() : -1;
    LOCKSTEP_REQUIRE(is_number && v >= 0 && v <= 2147483647.0 && std::floor(v) == v,
                     what << ": dimension " << i << " must be an integer >= 0, got "
                          << (is_number ? std::to_string(v) : d.typeOf().as<std::string>()));
    dims.push_back(static_cast<int64_t>(v));
  }
  return dims;
}

uint64_t SeedFromJs(double seed, const char* what) {
  LOCKSTEP_REQUIRE(seed >= 0 && seed <= 9007199254740991.0 && std::floor(seed) == seed,
                   what << ": expected an integer in [0, 2^53), got " << seed);
  return static_cast<uint64_t>(seed);
}

float FiniteFromJs(double value, const char* what) {
  LOCKSTEP_REQUIRE(std::isfinite(value), what << ": expected a finite number, got " << value);
  return static_cast<float>(value);
}

std::vector<uint8_t> BytesFromJs(const emscripten::val& bytes, const char* what) {
  LOCKSTEP_REQUIRE(bytes.instanceof(emscripten::val::global("Uint8Array")),
                   what << ": expected a Uint8Array, got " << bytes.typeOf().as<std::string>());
  return emscripten::convertJSArrayToNumberVector<uint8_t>(bytes);
}

emscripten::val BytesToJs(const std::vector<uint8_t>& bytes) {
  return emscripten::val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
}

}  // namespace wasm
}  // namespace lockstep
