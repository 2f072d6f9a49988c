// The numerical contract's version (docs/numerics.md). Any change that alters a bit of any result
// bumps it, and the golden hashes are regenerated in the same commit.
#ifndef LOCKSTEP_CORE_CONTRACT_H_
#define LOCKSTEP_CORE_CONTRACT_H_

namespace lockstep {

constexpr int kContractVersion = 1;

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_CONTRACT_H_
