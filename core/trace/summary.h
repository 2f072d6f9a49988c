// A trace record's description of a tensor's elements: the hash of its exact bits (bits_hash.h)
// and its statistics (min, max, mean, l2 over the finite elements, in float64; NaN and infinity
// counts), as the JSON fields of docs/diagnostics.md. This runs on every op output while tracing,
// so its loops are written for the compiler to vectorise, and on x86-64 they are compiled for
// several instruction-set levels and chosen at run time; every version gives the same bits (the
// hash is integer arithmetic, the float64 sums use thirty-two accumulators combined in a fixed order).
#ifndef LOCKSTEP_CORE_TRACE_SUMMARY_H_
#define LOCKSTEP_CORE_TRACE_SUMMARY_H_

#include <stddef.h>

#include <string>

#include "core/dtype.h"

namespace lockstep {
namespace trace {

// ',"hash":"...","min":...,"max":...,"mean":...,"l2":...,"nan":N,"inf":N' for n elements of dtype
// (contiguous, little-endian).
std::string SummaryJson(DType dtype, const void* data, size_t n);

// The statistics alone: min, max, mean, l2 (NaN when no element is finite), nan and inf counts.
struct Statistics {
  double min, max, mean, l2;
  long long nan, inf;
};
Statistics ComputeStatistics(DType dtype, const void* data, size_t n);

}  // namespace trace
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TRACE_SUMMARY_H_
