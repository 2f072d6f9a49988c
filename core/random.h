// Named random streams derived from one user seed (docs/numerics.md, rule 7). A Generator is a
// position in one Philox stream: drawing n values returns the first index and advances by n, so
// every draw depends only on (seed, stream name, how much was drawn before from that stream).
#ifndef LOCKSTEP_CORE_RANDOM_H_
#define LOCKSTEP_CORE_RANDOM_H_

#include <stdint.h>

#include <string>

namespace lockstep {

// 64-bit FNV-1a of the name: the Philox stream id of a named stream.
uint64_t StreamId(const std::string& name);

struct Generator {
  uint64_t seed = 0;
  uint64_t stream = 0;
  uint64_t offset = 0;  // words drawn so far

  Generator() = default;
  Generator(uint64_t seed_in, const std::string& name) : seed(seed_in), stream(StreamId(name)) {}
  uint64_t Take(uint64_t n) {
    const uint64_t first = offset;
    offset += n;
    return first;
  }
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_RANDOM_H_
