#include "core/shape.h"

#include <sstream>

#include "core/error.h"

namespace lockstep {

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Shape ContiguousStrides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

std::string ShapeString(const Shape& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << "]";
  return out.str();
}

Shape BroadcastShapes(const Shape& a, const Shape& b, const char* op) {
  const size_t rank = a.size() > b.size() ? a.size() : b.size();
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    LOCKSTEP_REQUIRE(da == db || da == 1 || db == 1,
                     op << ": shapes " << ShapeString(a) << " and " << ShapeString(b)
                        << " do not broadcast (dimension " << i << ": " << da << " vs " << db << ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t NormalizeDim(int64_t dim, int64_t rank, const char* op) {
  const int64_t normalized = dim < 0 ? dim + rank : dim;
  LOCKSTEP_REQUIRE(normalized >= 0 && normalized < rank,
                   op << ": dimension " << dim << " is out of range for a tensor of rank " << rank
                      << " (expected " << -rank << " to " << rank - 1 << ")");
  return normalized;
}

void ValidateShape(const Shape& shape, const char* op) {
  int64_t n = 1;
  for (int64_t d : shape) {
    LOCKSTEP_REQUIRE(d >= 0, op << ": negative extent in shape " << ShapeString(shape));
    LOCKSTEP_REQUIRE(d == 0 || n <= INT64_MAX / d,
                     op << ": shape " << ShapeString(shape) << " has too many elements");
    n *= d;
  }
}

}  // namespace lockstep
