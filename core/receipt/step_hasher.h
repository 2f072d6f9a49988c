// Hashes each training step's state and batch for a receipt off the training thread, where the
// build has threads, overlapping the next step: on a thread of its own when training leaves a
// core free, else in the pool workers' waits between kernels (simd::IdleWork), since a thread of
// its own would only take cores from the kernels; either way the training loop hands over a copy
// of the state (a memcpy, a few percent of a LeNet-5 step) and holds the batch. The single-thread
// WebAssembly builds hash at once, in place, on the training thread, and so does a caller that
// asks (the npm package, whose module cannot start a thread of its own from a page). Digests come
// back in step order either way.
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
  // updater: the run's optimizer, where nothing else writes the parameters and the optimizer's
  // state between steps (a closed training loop, not one that runs the caller's code between
  // steps): those tensors are then read in place, not copied, until its next update begins, when
  // what is not yet hashed of them is copied (Optimizer::set_before_update, held until the
  // hasher is destroyed). The model's buffers (written by the forward pass) are copied. Such a
  // loop's state is also the same tensors every step: their list is taken at the first Submit and
  // kept, checked against the state every kRecheck steps (a changed list throws kState: the steps
  // since would have been hashed from stale tensors).
  explicit StepHasher(Done done, bool background = true, optim::Optimizer* updater = nullptr);
  ~StepHasher();  // drops what is still pending
  StepHasher(const StepHasher&) = delete;
  StepHasher& operator=(const StepHasher&) = delete;

  // Copies the state after `step` where it is hashed later (but see `updater`) and holds its
  // batch, which is read in place until hashed: the caller does not write into `inputs` and
  // `labels` afterwards (the trainers' batches are fresh tensors or views of data nothing writes).
  // Reports the steps whose digests are ready (and waits for older ones when two are pending, so
  // memory stays bounded).
  void Submit(int64_t step, const nn::Module& model, const optim::Optimizer& optimizer,
              const std::map<std::string, uint64_t>& rng_offsets, const Tensor& inputs, const Tensor& labels);
  // Waits for every submitted step and reports it.
  void Drain();

  struct Plan;  // the state's leaves and how each is read (step_hasher.cc)

 private:
  class Worker;
  std::shared_ptr<const Plan> MakePlan(const nn::Module& model, const optim::Optimizer& optimizer,
                                       const std::map<std::string, uint64_t>& rng_offsets) const;
  // How often a closed loop's kept plan is checked against its state, in steps.
  static constexpr int64_t kRecheck = 64;
  std::unique_ptr<Worker> worker_;
  optim::Optimizer* updater_;
  std::shared_ptr<const Plan> plan_;
  int64_t since_check_ = 0;
};

}  // namespace receipt
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_RECEIPT_STEP_HASHER_H_
