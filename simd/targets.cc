#include "simd/targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd/targets.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/targets.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
// Reports the target this copy was compiled for: dispatching to it names the chosen one.
int64_t CompiledForTarget() { return HWY_TARGET; }
}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace lockstep {
namespace simd {

HWY_EXPORT(CompiledForTarget);

std::vector<Target> RunnableTargets() {
  std::vector<Target> out;
  for (int64_t bits : hwy::SupportedAndGeneratedTargets()) out.push_back({bits, hwy::TargetName(bits)});
  return out;
}

std::vector<Target> CompiledTargets() {
  std::vector<Target> out;
  for (int64_t bits = 1; bits != 0 && bits <= HWY_TARGETS; bits <<= 1) {
    if (bits & HWY_TARGETS) out.insert(out.begin(), Target{bits, hwy::TargetName(bits)});
  }
  return out;
}

void ForceTarget(int64_t bits) { hwy::SetSupportedTargetsForTest(bits); }

std::string ActiveTargetName() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(CompiledForTarget)());
}

}  // namespace simd
}  // namespace lockstep
#endif  // HWY_ONCE
