// Battery cases of the kernels added for training speed on real models (golden sections 8 to 11;
// Clip's gradient, elementwise, is with clamp in battery_cases.cc).
#include <stddef.h>

#include <vector>

#include "tests/battery/battery_inputs.h"
#include "tests/battery/battery_runner.h"

namespace lockstep {
namespace battery {

// Batch normalisation's gradient sums in one pass: the shapes of channel_sums (few positions and
// many, blocks crossed within a sample and between samples, no positions at all) and planes of
// whole rows of the reduction's lanes (read in place), with and without
// the weight, every output and a few of them, on moderate values and on values with NaNs and
// infinities; dxhat fetched where stored.
namespace {

void ChannelNormBackwardSumsCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t length = 32 * 3 * 300 + 16;
  const float* moderate = r.Upload(ModerateInputs(length, 71)) + 1;  // misaligned
  const float* mixed = r.Upload(MixedInputs(length, 72)) + 3;
  const float* xhat = r.Upload(ModerateInputs(length, 73));
  const float* weight = r.Upload(MixedInputs(64, 74));
  float* dxhat = r.Alloc<float>(length);
  float* sums = r.Alloc<float>(4 * 64);
  const size_t shapes[][3] = {{32, 40, 4}, {3, 5, 7},    {2, 3, 4097},  {32, 3, 300}, {1, 64, 1},
                              {5, 2, 33},  {4, 6, 0},    {9, 2, 1024},  {3, 4, 192}};
  KernelOutput k{"channel_norm_backward_sums", {}};
  for (const auto& s : shapes) {
    const size_t n = s[0] * s[1] * s[2];
    for (const float* g : {moderate, mixed}) {
      for (int variant = 0; variant < 3; ++variant) {
        backend::ChannelNormSumsCall call{};
        call.samples = s[0];
        call.channels = s[1];
        call.positions = s[2];
        call.g = g;
        call.xhat = variant == 2 ? mixed + 5 : xhat;
        call.weight = variant == 1 ? nullptr : weight;
        call.dxhat_out = variant == 0 ? dxhat : nullptr;
        call.sum_dxhat = variant == 2 ? nullptr : sums;
        call.sum_dxhat_xhat = variant == 2 ? nullptr : sums + 64;
        call.sum_g_xhat = sums + 128;
        call.sum_g = variant == 1 ? nullptr : sums + 192;
        r.Check(r.k.channel_norm_backward_sums(&call), "channel_norm_backward_sums");
        for (int o = 0; o < 4; ++o) {
          const float* out[4] = {call.sum_dxhat, call.sum_dxhat_xhat, call.sum_g_xhat, call.sum_g};
          if (out[o] != nullptr) r.Fetch(k, out[o], s[1]);
        }
        if (call.dxhat_out != nullptr) r.Fetch(k, dxhat, n);
      }
    }
  }
  outputs.push_back(std::move(k));
}

// SiLU's gradient at every battery length and two offsets, x over mixed values (every special
// class: sigmoid saturates, underflows, sees NaN and infinities) and moderate ones, s its sigmoid
// (as the op saves it) or mixed values, g mixed and moderate; then in place over x, s and g.
void SiluBackwardCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t longest = 12345 + 8;
  const std::vector<float> mixed_host = MixedInputs(longest, 81), moderate_host = ModerateInputs(longest, 82);
  std::vector<float> sigmoid_host(longest);
  for (size_t i = 0; i < longest; ++i) sigmoid_host[i] = 1.0f / (1.0f + static_cast<float>(i % 7) * moderate_host[i]);
  const float* mixed = r.Upload(mixed_host);
  const float* moderate = r.Upload(moderate_host);
  const float* sigmoid = r.Upload(sigmoid_host);
  const float* gradient = r.Upload(MixedInputs(longest, 83));
  float* out = r.Alloc<float>(longest);
  KernelOutput k{"silu_backward", {}};
  for (size_t n : BatteryLengths()) {
    for (size_t offset : {size_t{0}, size_t{3}}) {
      r.Check(r.k.silu_backward(mixed + offset, sigmoid + 1, moderate + 2, out, n), "silu_backward");
      r.Fetch(k, out, n);
      r.Check(r.k.silu_backward(moderate + offset, sigmoid, gradient + 2, out, n), "silu_backward");
      r.Fetch(k, out, n);
      r.Check(r.k.silu_backward(moderate + offset, mixed + 5, moderate + 1, out, n), "silu_backward");
      r.Fetch(k, out, n);
    }
  }
  float* work = r.Alloc<float>(longest);
  for (size_t n : {size_t{1}, size_t{17}, size_t{1000}, size_t{4097}}) {
    r.Store(work, mixed_host, n);  // out aliases x
    r.Check(r.k.silu_backward(work, sigmoid, moderate, work, n), "silu_backward");
    r.Fetch(k, work, n);
    r.Store(work, sigmoid_host, n);  // out aliases s
    r.Check(r.k.silu_backward(mixed, work, moderate, work, n), "silu_backward");
    r.Fetch(k, work, n);
    r.Store(work, moderate_host, n);  // out aliases g
    r.Check(r.k.silu_backward(mixed, sigmoid, work, work, n), "silu_backward");
    r.Fetch(k, work, n);
  }
  outputs.push_back(std::move(k));
}

// Batch normalisation's variance sums in one pass: the shapes of channel_sums and planes of whole
// rows of the reduction's lanes (read in place), around moderate and mixed centres (NaN and
// infinite means among them), over moderate values and values with every special class.
void ChannelDeviationSquareSumsCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t length = 32 * 3 * 300 + 16;
  const float* moderate = r.Upload(ModerateInputs(length, 84)) + 1;  // misaligned
  const float* mixed = r.Upload(MixedInputs(length, 85)) + 3;
  const float* centers[2] = {r.Upload(ModerateInputs(64, 86)), r.Upload(MixedInputs(64, 87))};
  float* out = r.Alloc<float>(64);
  const size_t shapes[][3] = {{32, 40, 4}, {3, 5, 7},   {2, 3, 4097}, {32, 3, 300}, {1, 64, 1},
                              {5, 2, 33},  {4, 6, 0},   {9, 2, 1024}, {3, 4, 192},  {32, 20, 16}};
  KernelOutput k{"channel_deviation_square_sums", {}};
  for (const auto& s : shapes) {
    for (const float* x : {moderate, mixed}) {
      for (const float* center : centers) {
        r.Check(r.k.channel_deviation_square_sums(x, center, s[0], s[1], s[2], out), "channel_deviation_square_sums");
        r.Fetch(k, out, s[1]);
      }
    }
  }
  outputs.push_back(std::move(k));
}

// Batch normalisation's per-channel arithmetic on planes narrower than the kernel's per-plane runs
// (samples at a time over whole vectors: shapes of many channels of 1 to 63 positions), with and
// without the affine parameters, over moderate values and values with every special class; the
// forward outputs (xhat and y) and the input gradient.
void ChannelNormalizeSmallPlaneCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t size = 4096 + 8;
  const float* moderate = r.Upload(ModerateInputs(size, 88));
  const float* mixed = r.Upload(MixedInputs(size, 89));
  const float* parameters[2] = {r.Upload(ModerateInputs(4 * 64, 90)), r.Upload(MixedInputs(4 * 64, 91))};
  std::vector<float> positive_host = ModerateInputs(64, 92);
  for (float& v : positive_host) v = v < 0.0f ? -v : v;
  const float* positive = r.Upload(positive_host);
  float* xhat = r.Alloc<float>(size);
  float* out = r.Alloc<float>(size);
  const size_t shapes[][3] = {{3, 20, 4}, {2, 7, 9}, {5, 33, 1}, {4, 40, 16}, {2, 3, 63}, {3, 64, 2}};
  KernelOutput k{"channel_normalize_small_planes", {}};
  for (const auto& s : shapes) {
    const size_t n = s[0] * s[1] * s[2];
    for (int variant = 0; variant < 4; ++variant) {
      const float* p = parameters[variant == 1 ? 1 : 0];
      backend::ChannelNormCall c{};
      c.outer = s[0];
      c.channels = s[1];
      c.inner = s[2];
      c.x = variant == 1 ? mixed : moderate + variant;
      c.mean = p;
      c.rstd = variant == 1 ? p + 64 : positive;
      c.weight = variant == 0 || variant == 2 ? p + 128 : nullptr;
      c.bias = variant == 0 || variant == 3 ? p + 192 : nullptr;
      c.xhat_out = variant == 3 ? nullptr : xhat;
      c.out = out;
      r.Check(r.k.channel_normalize(&c), "channel_normalize");
      if (c.xhat_out != nullptr) r.Fetch(k, xhat, n);
      r.Fetch(k, out, n);
      backend::ChannelNormCall g{};
      g.outer = s[0];
      g.channels = s[1];
      g.inner = s[2];
      g.x = variant == 1 ? mixed + 1 : moderate + 2;  // the gradient of xhat
      g.xhat = variant == 1 ? mixed + 5 : moderate + 3 + variant;
      g.rstd = variant == 1 ? p + 64 : positive;
      g.sum_x = p + 128;
      g.sum_x_xhat = p + 192;
      g.count = variant == 2 ? 3.0f : static_cast<float>(s[0] * s[2]);
      g.out = out;
      r.Check(r.k.channel_normalize_backward(&g), "channel_normalize_backward");
      r.Fetch(k, out, n);
    }
  }
  outputs.push_back(std::move(k));
}

// Batch normalisation with the Relu, Clip, SiLU or hardtanh after it: the forward pass's activation on runs of
// a plane (64 positions and more) and on small planes (SiLU's sigmoid kept or not), and the backward
// sums with the activation's gradient on the shapes of channel_norm_backward_sums (read in place,
// small planes, gathered), with and without the affine parameters, over moderate values and values
// with every special class; Clip's bounds at 0 and 6, at -0 and +inf, and around zero.
void ChannelNormActivationCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t length = 32 * 3 * 300 + 16;
  const float* moderate = r.Upload(ModerateInputs(length, 93)) + 1;  // misaligned
  const float* mixed = r.Upload(MixedInputs(length, 94)) + 3;
  const float* xhat = r.Upload(ModerateInputs(length, 95));
  const float* parameters[2] = {r.Upload(ModerateInputs(4 * 64, 96)), r.Upload(MixedInputs(4 * 64, 97))};
  std::vector<float> positive_host = ModerateInputs(64, 98);
  for (float& v : positive_host) v = v < 0.0f ? -v : v;
  const float* positive = r.Upload(positive_host);
  float* xhat_out = r.Alloc<float>(length);
  float* out = r.Alloc<float>(length);
  float* sigmoid_out = r.Alloc<float>(length);
  float* sums = r.Alloc<float>(4 * 64);
  std::vector<float> sigmoid_host = ModerateInputs(length, 99);
  for (float& v : sigmoid_host) v = 1.0f / (2.0f + v);  // within (0.2, 1.0]: as a sigmoid's values
  const float* sigmoid = r.Upload(sigmoid_host);
  const float inf = __builtin_inff();
  const struct {
    int32_t kind;
    float lo, hi;
  } activations[] = {{backend::kConvRelu, 0.0f, 0.0f}, {backend::kConvClamp, 0.0f, 6.0f},
                     {backend::kConvClamp, -0.0f, inf}, {backend::kConvClamp, -0.5f, 0.25f},
                     {backend::kConvSilu, 0.0f, 0.0f},         {backend::kConvHardtanh, 0.0f, 6.0f},
                     {backend::kConvHardtanh, -0.5f, 0.25f}};
  KernelOutput k{"channel_norm_activation", {}};
  const size_t forward_shapes[][3] = {{2, 3, 300}, {3, 5, 64}, {3, 20, 4}, {2, 7, 9}, {5, 33, 1}};
  for (const auto& s : forward_shapes) {
    const size_t n = s[0] * s[1] * s[2];
    for (int variant = 0; variant < 14; ++variant) {
      const auto& a = activations[variant % 7];
      const float* p = parameters[variant % 3 == 1 ? 1 : 0];
      backend::ChannelNormCall c{};
      c.outer = s[0];
      c.channels = s[1];
      c.inner = s[2];
      c.x = variant % 3 == 1 ? mixed : moderate + variant;
      c.mean = p;
      c.rstd = variant % 3 == 1 ? p + 64 : positive;
      c.weight = variant < 4 || variant == 11 || variant == 12 ? p + 128 : nullptr;
      c.bias = variant % 2 == 0 ? p + 192 : nullptr;
      c.xhat_out = variant == 5 ? nullptr : xhat_out;
      c.out = out;
      c.activation = a.kind;
      c.lo = a.lo;
      c.hi = a.hi;
      c.sigmoid_out = a.kind == backend::kConvSilu && variant != 11 ? sigmoid_out : nullptr;
      r.Check(r.k.channel_normalize(&c), "channel_normalize");
      if (c.xhat_out != nullptr) r.Fetch(k, xhat_out, n);
      r.Fetch(k, out, n);
      if (c.sigmoid_out != nullptr) r.Fetch(k, sigmoid_out, n);
    }
  }
  const size_t sum_shapes[][3] = {{32, 40, 4}, {3, 5, 7}, {2, 3, 4097}, {32, 3, 300}, {1, 64, 1},
                                  {5, 2, 33},  {4, 6, 0}, {9, 2, 1024}, {3, 4, 192}};
  for (const auto& s : sum_shapes) {
    const size_t n = s[0] * s[1] * s[2];
    for (int variant = 0; variant < 14; ++variant) {
      const auto& a = activations[variant % 7];
      const float* p = parameters[variant % 3 == 2 ? 1 : 0];
      backend::ChannelNormSumsCall call{};
      call.samples = s[0];
      call.channels = s[1];
      call.positions = s[2];
      call.g = variant % 2 == 0 ? moderate : mixed;
      call.xhat = variant % 3 == 2 ? mixed + 5 : xhat;
      call.weight = variant < 4 || variant == 11 || variant == 12 ? p : nullptr;
      call.bias = variant % 4 < 2 ? p + 64 : nullptr;
      call.activation = a.kind;
      call.lo = a.lo;
      call.hi = a.hi;
      call.sigmoid = a.kind == backend::kConvSilu ? sigmoid + variant : nullptr;
      call.dxhat_out = variant % 2 == 0 ? xhat_out : nullptr;
      call.sum_dxhat = sums;
      call.sum_dxhat_xhat = sums + 64;
      call.sum_g_xhat = sums + 128;
      call.sum_g = variant == 7 ? nullptr : sums + 192;
      r.Check(r.k.channel_norm_backward_sums(&call), "channel_norm_backward_sums");
      for (int o = 0; o < 4; ++o) {
        const float* outs[4] = {call.sum_dxhat, call.sum_dxhat_xhat, call.sum_g_xhat, call.sum_g};
        if (outs[o] != nullptr) r.Fetch(k, outs[o], s[1]);
      }
      if (call.dxhat_out != nullptr) r.Fetch(k, xhat_out, n);
    }
  }
  outputs.push_back(std::move(k));
}

// PyTorch's hardtanh and its gradient at every battery length, over mixed values (NaN, infinities,
// +-0) in x and in g: ReLU6's bounds, bounds of either sign, zero's two signs, one-sided and equal
// bounds.
void HardtanhCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const size_t longest = 12345 + 8;
  const float* x = r.Upload(MixedInputs(longest, 100));
  const float* g = r.Upload(MixedInputs(longest, 101));
  float* out = r.Alloc<float>(longest);
  const float inf = __builtin_inff();
  const float bounds[][2] = {{0.0f, 6.0f}, {-1.5f, 2.25f}, {-0.0f, 0.0f}, {0.0f, -0.0f},
                             {-inf, 0.5f}, {-3.0f, inf},   {1.0f, 1.0f},  {-inf, inf}};
  KernelOutput forward{"hardtanh", {}}, backward{"hardtanh_backward", {}};
  for (size_t n : BatteryLengths()) {
    for (const auto& b : bounds) {
      r.Check(r.k.hardtanh(x + n % 5, b[0], b[1], out, n), "hardtanh");
      r.Fetch(forward, out, n);
      r.Check(r.k.hardtanh_backward(x + n % 5, b[0], b[1], g + n % 3, out, n), "hardtanh_backward");
      r.Fetch(backward, out, n);
    }
  }
  outputs.push_back(std::move(forward));
  outputs.push_back(std::move(backward));
}

}  // namespace

void TrainingCases(Runner& r, std::vector<KernelOutput>& outputs) {
  ChannelNormBackwardSumsCases(r, outputs);  // golden section 8
  SiluBackwardCases(r, outputs);             // golden section 9
  ChannelDeviationSquareSumsCases(r, outputs);
  ChannelNormalizeSmallPlaneCases(r, outputs);
  ChannelNormActivationCases(r, outputs);  // golden section 10
  HardtanhCases(r, outputs);               // golden section 11
}

}  // namespace battery
}  // namespace lockstep
