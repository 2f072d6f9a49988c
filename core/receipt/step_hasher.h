// Hashes each training step's state and batch for a receipt off the training thread, where the
// build has threads, overlapping the next step: on a thread of its own when training leaves a
// core free, else in the pool workers' waits between kernels (simd::IdleWork), since a thread of
// its own would only take cores from the kernels; either way the training loop hands over a copy
// of the bytes (a memcpy, a few percent of a LeNet-5 step). The single-thread WebAssembly builds
// hash at once, in place, on the training thread, and so does a caller that asks (the npm package,
// whose module cannot start a thread of its own from a page). Digests come back in step order
// either way.
#ifndef LOCKSTEP_CORE_RECEIPT_STEP_HASHER_H_
#define LOCKSTEP_CORE_RECEIPT_STEP_HASHER_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/nn/module.h"
#include "core/optim/optimizer.h"
#include "core/receipt/state_hash.h"
#include "core/tensor.h"

namespace lockstep {
namespace receipt {

class StepHasher {
 public:
  using Done = std::function<void(int64_t step, const Digest& batch, const Digest& state)>;
  // `done` is called on the training thread, from Submit and Drain, once per step in order.
  // background: hash on a thread of its own where the build has threads.
  explicit StepHasher(Done done, bool background = true);
  ~StepHasher();  // drops what is still pending
  StepHasher(const StepHasher&) = delete;
  StepHasher& operator=(const StepHasher&) = delete;

  // Copies the state after `step` and its batch; reports the steps whose digests are ready (and
  // waits for older ones when two are pending, so memory stays bounded).
  void Submit(int64_t step, const nn::Module& model, const optim::Optimizer& optimizer,
              const std::map<std::string, uint64_t>& rng_offsets, const Tensor& inputs, const Tensor& labels);
  // Waits for every submitted step and reports it.
  void Drain();


 private:
  class Worker;
  std::unique_ptr<Worker> worker_;
};

}  // namespace receipt
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_RECEIPT_STEP_HASHER_H_
