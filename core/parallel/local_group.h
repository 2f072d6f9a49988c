// Ranks as threads of one process: a Communicator for each of `size` threads, sharing memory. For
// tests (every data-parallel path runs in the unit tests, without MPI) and for a user who wants
// the data-parallel result on one machine without MPI.
#ifndef LOCKSTEP_CORE_PARALLEL_LOCAL_GROUP_H_
#define LOCKSTEP_CORE_PARALLEL_LOCAL_GROUP_H_

#include <stdint.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/parallel/communicator.h"

namespace lockstep {
namespace parallel {

class LocalGroup {
 public:
  explicit LocalGroup(int size);
  ~LocalGroup();
  int size() const { return size_; }
  // The communicator of rank r; each must be used by one thread only.
  Communicator& rank(int r);
  // Runs body(rank, communicator) on `size` threads and rethrows the first exception any threw
  // (the others are released: a failed rank fails the collectives of the rest).
  static void Run(int size, const std::function<void(int rank, Communicator& communicator)>& body);

 private:
  class Member;
  friend class Member;
  // Waits until every rank has arrived; throws on every rank once one has failed.
  void Barrier();
  void Fail();

  int size_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  int waiting_ = 0;
  uint64_t generation_ = 0;
  bool failed_ = false;
  // What each rank published for the current call.
  std::vector<const uint8_t*> published_;
  std::vector<std::vector<size_t>> published_bytes_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace parallel
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_PARALLEL_LOCAL_GROUP_H_
