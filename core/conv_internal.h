// Convolution geometry and the im2col / col2im data movement shared by Conv2d and its backward rule.
#ifndef LOCKSTEP_CORE_CONV_INTERNAL_H_
#define LOCKSTEP_CORE_CONV_INTERNAL_H_

#include <stdint.h>

#include "core/ops.h"

namespace lockstep {

struct ConvGeometry {
  int64_t n, c_in, h, w, c_out, kh, kw, c_in_group, c_out_group, h_out, w_out, k, positions;
  Conv2dOptions o;
};

ConvGeometry MakeConvGeometry(const Shape& x, const Shape& w, const Conv2dOptions& o);
// cols [k, positions] of one sample and group, row r at cols + r * ld (ld >= positions): several
// samples side by side ([k, samples * positions], ld = samples * positions) make one wide GEMM,
// which sums every output's k products in the same order as one GEMM per sample.
void Im2Col(const ConvGeometry& g, const float* x_sample, int64_t group, float* cols, int64_t ld);
void Col2ImAdd(const ConvGeometry& g, const float* cols, int64_t ld, int64_t group, float* dx_sample);

// Samples per chunk of the batched im2col: as many as fit about 16 MB of columns (at least one).
int64_t SamplesPerChunk(const ConvGeometry& g);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_CONV_INTERNAL_H_
