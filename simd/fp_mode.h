// The floating-point mode every lockstep computation runs in (docs/numerics.md, rule 2):
// round-to-nearest-even, subnormals kept as inputs and as results, NaNs propagated as IEEE 754
// says. Another library in the process can change a thread's mode (torch.set_flush_denormal,
// code built with -ffast-math, a thread that inherited such a mode), and the hardware then gives
// other bits with no error. So every kernel job sets the contract's mode on each thread that runs
// it, and gives the thread back the mode it found: a caller's own setting is untouched.
//
// x86: MXCSR's flush-to-zero (bit 15), denormals-are-zero (bit 6) and rounding control (bits
// 13-14). AArch64: FPCR's FIZ (bit 0), AH (bit 1), NEP (bit 2), FZ16 (bit 19), RMode (bits
// 22-23), FZ (bit 24) and DN (bit 25). WebAssembly has no such state (always round-to-nearest,
// never flushing); s390x's is left as it is (only the rounding mode could differ, and the check
// in core/fp_environment.h reports it).
#ifndef LOCKSTEP_SIMD_FP_MODE_H_
#define LOCKSTEP_SIMD_FP_MODE_H_

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace lockstep {
namespace simd {

// The calling thread's floating-point control register (0 where there is none).
inline uint64_t ReadFloatingPointControl() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
#else
  return 0;
#endif
}

inline void WriteFloatingPointControl(uint64_t value) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(static_cast<unsigned>(value));
#elif defined(__aarch64__)
  __asm__ volatile("msr fpcr, %0" : : "r"(value));
#else
  (void)value;
#endif
}

// The bits of the control register that the contract fixes (all must be 0); exception masks and
// sticky flags are the caller's business.
#if defined(__x86_64__) || defined(__i386__)
constexpr uint64_t kNonContractModeBits = (1u << 15) | (1u << 6) | (3u << 13);
#elif defined(__aarch64__)
constexpr uint64_t kNonContractModeBits = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 19) | (3u << 22) |
                                          (1u << 24) | (1u << 25);
#else
constexpr uint64_t kNonContractModeBits = 0;
#endif

// Sets the contract's mode on the calling thread for its lifetime and restores the mode it found
// (also when something inside changed it). Costs two register reads when the mode is already right
// (the usual case).
class ContractFloatingPointScope {
 public:
  ContractFloatingPointScope() : saved_(ReadFloatingPointControl()) {
    changed_ = (saved_ & kNonContractModeBits) != 0;
    if (changed_) WriteFloatingPointControl(saved_ & ~kNonContractModeBits);
  }
  ~ContractFloatingPointScope() {
    if (changed_ || (ReadFloatingPointControl() & kNonContractModeBits) != 0) WriteFloatingPointControl(saved_);
  }
  ContractFloatingPointScope(const ContractFloatingPointScope&) = delete;
  ContractFloatingPointScope& operator=(const ContractFloatingPointScope&) = delete;

 private:
  uint64_t saved_;
  bool changed_;
};

}  // namespace simd
}  // namespace lockstep

#endif  // LOCKSTEP_SIMD_FP_MODE_H_
