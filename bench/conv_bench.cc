// Time per call of the MNIST LeNet-5's convolution and pooling layers (batch 100), forward and
// backward (each backward rule alone, through ApplyBackwardRule), in milliseconds of process CPU
// time (this machine is shared: CPU time swings less than wall time). Prints one line per layer:
//   <layer> forward=F ms backward=B ms
//
//   lockstep_conv_bench [--threads T] [--reps N] [--kernels-only 1]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/nn/init.h"
#include "core/ops.h"
#include "core/random.h"
#include "simd/conv.h"
#include "simd/thread_pool.h"

namespace {

using namespace lockstep;

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Median over 5 samples of the CPU milliseconds per call of f.
double MsPerCall(const std::function<void()>& f, int reps) {
  f();
  std::vector<double> ms;
  for (int s = 0; s < 5; ++s) {
    const double start = CpuSeconds();
    for (int i = 0; i < reps; ++i) f();
    ms.push_back(1e3 * (CpuSeconds() - start) / reps);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

Tensor Random(const Shape& shape, uint64_t seed, bool grad) {
  Generator g(seed, "bench");
  Tensor t = Tensor::Zeros(shape);
  nn::NormalInit(t, 0.0f, 1.0f, g);
  if (grad) t.RequiresGrad(true);
  return t;
}

// Forward and backward of one op: `op` maps the input to the output; the backward rule runs on
// the output's node with a random gradient.
void Report(const char* name, const Tensor& x, const std::function<Tensor(const Tensor&)>& op, int reps) {
  const double forward = MsPerCall([&] { op(x); }, reps);
  const Tensor out = op(x);
  const Tensor grad = Random(out.shape(), 7, false);
  const double backward = MsPerCall([&] { ApplyBackwardRule(*out.grad_fn(), grad); }, reps);
  printf("%-28s forward=%.3f ms backward=%.3f ms\n", name, forward, backward);
}

// The direct kernels alone (simd/conv.h) on the same shapes.
void ReportKernels(const char* name, const simd::ConvShape& s, bool input_grad, int reps) {
  const size_t k = s.c_in * s.kh * s.kw;
  const Tensor x = Random({static_cast<int64_t>(s.samples * s.x_sample_stride)}, 1, false);
  const Tensor w = Random({static_cast<int64_t>(s.c_out * k)}, 2, false);
  const Tensor b = Random({static_cast<int64_t>(s.c_out)}, 3, false);
  const Tensor dy = Random({static_cast<int64_t>(s.samples * s.y_sample_stride)}, 4, false);
  Tensor y = Tensor::Empty({static_cast<int64_t>(s.samples * s.y_sample_stride)});
  Tensor dx = Tensor::Empty(x.shape()), dw = Tensor::Empty(w.shape());
  const double forward = MsPerCall([&] { simd::ConvForward(s, x.data_f32(), w.data_f32(), b.data_f32(), y.data_f32()); }, reps);
  const double grad_x = input_grad ? MsPerCall([&] { simd::ConvInputGrad(s, dy.data_f32(), w.data_f32(), dx.data_f32()); }, reps) : 0.0;
  const double grad_w = MsPerCall([&] { simd::ConvWeightGrad(s, dy.data_f32(), x.data_f32(), kBatchGroup, dw.data_f32()); }, reps);
  printf("%-28s forward=%.3f ms input-grad=%.3f ms weight-grad=%.3f ms\n", name, forward, grad_x, grad_w);
}

simd::ConvShape LenetShape(bool second) {
  simd::ConvShape s;
  s.samples = 100;
  s.c_in = second ? 6 : 1; s.h = s.w = second ? 14 : 28; s.c_out = second ? 16 : 6;
  s.kh = s.kw = 5; s.pad_h = s.pad_w = second ? 0 : 2;
  s.h_out = s.w_out = second ? 10 : 28;
  s.x_sample_stride = s.c_in * s.h * s.w;
  s.y_sample_stride = s.c_out * s.h_out * s.w_out;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, reps = 20, kernels_only = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--kernels-only")) kernels_only = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: lockstep_conv_bench [--threads T] [--reps N] [--kernels-only 1]\n");
      return 2;
    }
  }
  simd::SetDefaultThreadCount(static_cast<size_t>(threads));
  const Tensor w1 = Random({6, 1, 5, 5}, 1, true), b1 = Random({6}, 2, true);
  const Tensor w2 = Random({16, 6, 5, 5}, 3, true), b2 = Random({16}, 4, true);
  Conv2dOptions padded;
  padded.padding_h = padded.padding_w = 2;
  const Pool2dOptions pool{2, 2, 2, 2};
  // conv1's input needs no gradient (the images), as in training.
  ReportKernels("kernels conv1", LenetShape(false), false, reps);
  ReportKernels("kernels conv2", LenetShape(true), true, reps);
  if (kernels_only) return 0;
  Report("conv1 [100,1,28,28] 6x5x5", Random({100, 1, 28, 28}, 5, false),
         [&](const Tensor& x) { return Conv2d(x, w1, b1, padded); }, reps);
  Report("relu [100,6,28,28]", Random({100, 6, 28, 28}, 6, true), [](const Tensor& x) { return Relu(x); }, reps);
  Report("maxpool [100,6,28,28]", Random({100, 6, 28, 28}, 6, true),
         [&](const Tensor& x) { return MaxPool2d(x, pool); }, reps);
  Report("conv2 [100,6,14,14] 16x5x5", Random({100, 6, 14, 14}, 8, true),
         [&](const Tensor& x) { return Conv2d(x, w2, b2, Conv2dOptions{}); }, reps);
  Report("maxpool [100,16,10,10]", Random({100, 16, 10, 10}, 9, true),
         [&](const Tensor& x) { return MaxPool2d(x, pool); }, reps);
  return 0;
}
