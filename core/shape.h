// Shapes, strides and broadcasting. Errors name both shapes and the operation.
#ifndef LOCKSTEP_CORE_SHAPE_H_
#define LOCKSTEP_CORE_SHAPE_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace lockstep {

using Shape = std::vector<int64_t>;

int64_t NumElements(const Shape& shape);
Shape ContiguousStrides(const Shape& shape);
std::string ShapeString(const Shape& shape);  // "[2, 3]"
// NumPy broadcasting; throws naming op and both shapes when they do not broadcast.
Shape BroadcastShapes(const Shape& a, const Shape& b, const char* op);
// Maps a possibly negative dim into [0, rank); throws naming op when out of range.
int64_t NormalizeDim(int64_t dim, int64_t rank, const char* op);
// Throws unless every extent is >= 0 and the element count fits in int64.
void ValidateShape(const Shape& shape, const char* op);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SHAPE_H_
