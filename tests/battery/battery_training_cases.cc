// Battery cases of the kernels added for training speed on real models (golden section 8; Clip's
// gradient, elementwise, is with clamp in battery_cases.cc).
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
void TrainingCases(Runner& r, std::vector<KernelOutput>& outputs) {
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

}  // namespace battery
}  // namespace lockstep
