// What data-parallel training needs from a transport between processes (MPI in distributed/, threads
// in local_group.h): bytes moved between ranks, and exact integer sums. Floating-point values only
// ever travel as bytes; no transport ever adds them. lockstep combines partial sums itself, in the
// contract's fixed tree (docs/distributed.md), which is why the result does not depend on the
// number of ranks.
#ifndef LOCKSTEP_CORE_PARALLEL_COMMUNICATOR_H_
#define LOCKSTEP_CORE_PARALLEL_COMMUNICATOR_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace lockstep {
namespace parallel {

// Every call is collective: all ranks make the same calls in the same order, with counts that
// agree (what rank i sends to rank j is what rank j expects from rank i). A transport that fails
// (a rank gone, a timeout) throws lockstep::Error of kind kUnavailable, or stops the whole job.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank sends send_bytes[j] bytes to rank j (the blocks lie in rank order in `send`) and
  // receives recv_bytes[i] bytes from rank i (stored in rank order in `recv`).
  virtual void AllToAll(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                        const std::vector<size_t>& recv_bytes) = 0;
  // Rank i contributes bytes[i] bytes (this rank's from `mine`); every rank receives all of them
  // in rank order in `all`.
  virtual void AllGather(const void* mine, void* all, const std::vector<size_t>& bytes) = 0;
  // root's `bytes` bytes of data replace every other rank's.
  virtual void Broadcast(void* data, size_t bytes, int root) = 0;
  // values[i] becomes the sum over ranks of values[i] (integers: exact in any order).
  virtual void AllSum(int64_t* values, size_t count) = 0;
};

}  // namespace parallel
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_PARALLEL_COMMUNICATOR_H_
