// The simd::ConvShape of a convolution given as PyTorch's arguments (output size by PyTorch's rule),
// for the convolution kernels' tests.
#ifndef LOCKSTEP_TESTS_UNIT_CONV_SHAPE_H_
#define LOCKSTEP_TESTS_UNIT_CONV_SHAPE_H_

#include <stddef.h>

#include "simd/conv.h"

namespace lockstep {
namespace testing {

// c_in and c_out are a group's channels; samples are groups * c_in (input) and groups * c_out
// (output) channels apart.
inline simd::ConvShape ConvShapeOf(size_t n, size_t c_in, size_t h, size_t w, size_t c_out, size_t kh, size_t kw,
                                   size_t stride, size_t pad_h, size_t pad_w, size_t dilation, size_t groups = 1) {
  simd::ConvShape s;
  s.samples = n;
  s.c_in = c_in;
  s.h = h;
  s.w = w;
  s.c_out = c_out;
  s.kh = kh;
  s.kw = kw;
  s.groups = groups;
  s.stride_h = s.stride_w = stride;
  s.pad_h = pad_h;
  s.pad_w = pad_w;
  s.dilation_h = s.dilation_w = dilation;
  s.h_out = (h + 2 * pad_h - dilation * (kh - 1) - 1) / stride + 1;
  s.w_out = (w + 2 * pad_w - dilation * (kw - 1) - 1) / stride + 1;
  s.x_sample_stride = groups * c_in * h * w;
  s.y_sample_stride = groups * c_out * s.h_out * s.w_out;
  return s;
}

}  // namespace testing
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_UNIT_CONV_SHAPE_H_
