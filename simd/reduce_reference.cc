// The canonical reduction order written as plainly as possible: the definition the vector kernels
// must reproduce bit for bit (see reduce.h).
#include <vector>

#include "simd/reduce.h"

namespace lockstep {
namespace simd {

namespace {

float FoldLanes(float* lanes) {
  for (size_t width = kReduceLanes / 2; width >= 1; width /= 2) {
    for (size_t l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
  }
  return lanes[0];
}

}  // namespace

float CombineBlocksPairwise(float* partials, size_t count) {
  // Adjacent pairs, level by level; an odd last partial moves up unchanged.
  while (count > 1) {
    size_t next = 0;
    for (size_t i = 0; i + 1 < count; i += 2) partials[next++] = partials[i] + partials[i + 1];
    if (count % 2 == 1) partials[next++] = partials[count - 1];
    count = next;
  }
  return partials[0];
}

float CanonicalSumReference(const float* x, size_t n, size_t stride) {
  if (n == 0) return 0.0f;
  std::vector<float> blocks;
  for (size_t start = 0; start < n; start += kReduceBlock) {
    const size_t end = start + kReduceBlock < n ? start + kReduceBlock : n;
    float lanes[kReduceLanes];
    for (float& lane : lanes) lane = -0.0f;
    for (size_t i = start; i < end; ++i) {
      float& lane = lanes[(i - start) % kReduceLanes];
      lane = lane + x[i * stride];
    }
    blocks.push_back(FoldLanes(lanes));
  }
  const float total = CombineBlocksPairwise(blocks.data(), blocks.size());
  return total != total ? __builtin_nanf("") : total;  // the canonical NaN, 0x7FC00000
}

}  // namespace simd
}  // namespace lockstep
