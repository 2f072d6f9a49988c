// Per-target steps of a forward convolution's epilogue (simd/conv.h, ConvEpilogue): batch
// normalisation in evaluation and an activation applied to each output after its bias, in the
// order and roundings of those ops run one after another. NaN passes through every step (a NaN
// stays NaN through subtraction, multiplication and addition, and both activations keep it), so
// one Canonicalize where the value is stored gives the bits of canonicalizing after each op.
#if defined(LOCKSTEP_SIMD_CONV_EPILOGUE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LOCKSTEP_SIMD_CONV_EPILOGUE_INL_H_
#undef LOCKSTEP_SIMD_CONV_EPILOGUE_INL_H_
#else
#define LOCKSTEP_SIMD_CONV_EPILOGUE_INL_H_
#endif

#include <stddef.h>

#include "hwy/highway.h"
#include "simd/contract-inl.h"
#include "simd/conv.h"
#include "simd/math.h"
#include "simd/silu_forward.h"

HWY_BEFORE_NAMESPACE();
namespace lockstep {
namespace simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One output channel's epilogue. Not canonical: the caller stores Canonicalize(d, Apply(d, v)).
// Its constants are scalars (SVE's vectors cannot be members), set into vectors where Apply is
// inlined, outside the caller's loop. SiLU is not applied here: its sigmoid runs over a stored run
// (SiluInPlace, simd/silu_forward.h), once the run's values are final.
struct ChannelEpilogue {
  bool normalize = false;
  ConvActivation activation = ConvActivation::kNone;
  float mean = 0.0f, rstd = 0.0f, weight = 1.0f, bias = 0.0f, lo = 0.0f, hi = 0.0f;

  ChannelEpilogue(const ConvEpilogue* e, size_t channel) {
    if (e == nullptr) return;
    normalize = e->mean != nullptr;
    activation = e->activation;
    if (normalize) {
      mean = e->mean[channel];
      rstd = e->rstd[channel];
      weight = e->weight != nullptr ? e->weight[channel] : 1.0f;
      bias = e->bias != nullptr ? e->bias[channel] : 0.0f;
    }
    lo = e->lo;
    hi = e->hi;
  }

  template <class D, class V = hn::Vec<D>>
  HWY_INLINE V Apply(D d, V v) const {
    if (normalize) {
      v = hn::Add(hn::Mul(hn::Mul(hn::Sub(v, hn::Set(d, mean)), hn::Set(d, rstd)), hn::Set(d, weight)), hn::Set(d, bias));
    }
    if (activation == ConvActivation::kRelu) {
      v = hn::IfThenElse(hn::Or(hn::Gt(v, hn::Zero(d)), IsNaNMask(d, v)), v, hn::Zero(d));
    } else if (activation == ConvActivation::kClamp) {
      v = hn::IfThenElse(hn::Lt(v, hn::Set(d, lo)), hn::Set(d, lo), v);
      v = hn::IfThenElse(hn::Gt(v, hn::Set(d, hi)), hn::Set(d, hi), v);
    }
    return v;
  }
};

// The same steps on one float (the rows' tails), canonical; SiLU's sigmoid comes after (SiluInPlace).
HWY_INLINE float EpilogueScalar(const ConvEpilogue* e, size_t channel, float v) {
  if (e != nullptr) {
    if (e->mean != nullptr) {
      const float w = e->weight != nullptr ? e->weight[channel] : 1.0f;
      const float b = e->bias != nullptr ? e->bias[channel] : 0.0f;
      const float h = (v - e->mean[channel]) * e->rstd[channel];
      const float scaled = h * w;
      v = scaled + b;
    }
    if (e->activation == ConvActivation::kRelu) {
      v = (v > 0.0f || v != v) ? v : 0.0f;
    } else if (e->activation == ConvActivation::kClamp) {
      v = v < e->lo ? e->lo : v;
      v = v > e->hi ? e->hi : v;
    }
  }
  return v != v ? __builtin_nanf("") : v;
}

// Channels [0, channels) of one sample's output, `positions` floats each, in place.
template <class D>
HWY_INLINE void ApplyEpilogueRuns(D d, const ConvEpilogue* e, size_t first_channel, size_t channels, size_t positions,
                                  float* y) {
  const size_t N = hn::Lanes(d);
  for (size_t c = 0; c < channels; ++c) {
    const ChannelEpilogue ep(e, first_channel + c);
    float* run = y + c * positions;
    size_t p = 0;
    for (; p + N <= positions; p += N) hn::StoreU(Canonicalize(d, ep.Apply(d, hn::LoadU(d, run + p))), d, run + p);
    for (; p < positions; ++p) run[p] = EpilogueScalar(e, first_channel + c, run[p]);
    if (e->activation == ConvActivation::kSilu) SiluInPlace(run, nullptr, positions);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace simd
}  // namespace lockstep
HWY_AFTER_NAMESPACE();

#endif  // LOCKSTEP_SIMD_CONV_EPILOGUE_INL_H_
