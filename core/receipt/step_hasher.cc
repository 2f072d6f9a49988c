#include "core/receipt/step_hasher.h"

#include <deque>
#include <utility>
#include <vector>

#include "core/checkpoint.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define LOCKSTEP_STEP_HASHER_THREAD 1
#include <condition_variable>
#include <mutex>
#include <thread>
#endif

namespace lockstep {
namespace receipt {

namespace {

struct LeafCopy {
  std::string name;
  const char* dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

// One step's copied state and batch, and, once hashed, its digests.
struct Job {
  int64_t step = 0;
  std::vector<LeafCopy> state, batch;
  std::vector<std::pair<std::string, Digest>> integers;
  Digest batch_digest{}, state_digest{};
  bool done = false;
};

// Buffers of finished jobs, reused: a fresh buffer each step would cost its page faults every step.
// Taken from the front and returned at the back in the same order, each job's leaves line up
// with the buffers of the job before it (the same sizes).
using Spare = std::deque<std::vector<uint8_t>>;

LeafCopy Copy(const std::string& name, const Tensor& t, Spare& spare) {
  LeafCopy c{name, DTypeName(t.dtype()), t.shape(), {}};
  if (!spare.empty()) {
    c.bytes = std::move(spare.front());
    spare.pop_front();
    c.bytes.clear();
  }
  c.bytes.reserve(static_cast<size_t>(t.numel()) * DTypeSize(t.dtype()));
  CanonicalTensorBytes(t, [&](const uint8_t* data, size_t size) { c.bytes.insert(c.bytes.end(), data, data + size); });
  return c;
}

void Hash(Job& job) {
  std::vector<std::pair<std::string, Digest>> leaves = std::move(job.integers);
  for (const LeafCopy& c : job.state) leaves.emplace_back(c.name, BytesLeaf(c.name, c.dtype, c.shape, c.bytes));
  job.state_digest = MerkleRoot(std::move(leaves));
  job.batch_digest = BatchDigestOfLeaves(BytesLeaf(job.batch[0].name, job.batch[0].dtype, job.batch[0].shape, job.batch[0].bytes),
                                         BytesLeaf(job.batch[1].name, job.batch[1].dtype, job.batch[1].shape, job.batch[1].bytes));
}

void Recycle(Job& job, Spare& spare) {
  for (std::vector<LeafCopy>* copies : {&job.state, &job.batch}) {
    for (LeafCopy& c : *copies) spare.push_back(std::move(c.bytes));
  }
}

}  // namespace

class StepHasher::Worker {
 public:
  Worker(Done done, bool background) : done_(std::move(done)) {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    background_ = background;
    if (background_) thread_ = std::thread([this] { Loop(); });
#else
    (void)background;
#endif
  }
  ~Worker() {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (!background_) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
#endif
  }

  void Push(Job job) {
    if (!background_) {
      Hash(job);
      Recycle(job, spare);
      done_(job.step, job.batch_digest, job.state_digest);
      return;
    }
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    {
      std::unique_lock<std::mutex> lock(mutex_);
      finished_.wait(lock, [&] { return pending_.size() < 2 || pending_.front().done; });
      pending_.push_back(std::move(job));
    }
    wake_.notify_all();
    Report(false);
#endif
  }

  // Reports finished jobs in order; with wait, every job.
  void Report(bool wait) {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (!background_) return;
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (wait) finished_.wait(lock, [&] { return pending_.empty() || pending_.front().done; });
        if (pending_.empty() || !pending_.front().done) return;
        job = std::move(pending_.front());
        pending_.pop_front();
        --next_;  // the hasher's index counts from the front
      }
      finished_.notify_all();
      Recycle(job, spare);
      done_(job.step, job.batch_digest, job.state_digest);
    }
#else
    (void)wait;
#endif
  }

 private:
#ifdef LOCKSTEP_STEP_HASHER_THREAD
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || next_ < pending_.size(); });
      if (stop_) return;
      // Jobs are only appended while this one is hashed, and only this thread hashes them, so the
      // reference stays valid: std::deque keeps elements in place on push_back.
      Job& job = pending_[next_];
      lock.unlock();
      Hash(job);
      lock.lock();
      job.done = true;
      ++next_;
      finished_.notify_all();
    }
  }
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::deque<Job> pending_;
  size_t next_ = 0;  // the first job not yet hashed
  bool stop_ = false;
#endif
  bool background_ = false;
  Done done_;

 public:
  Spare spare;  // used on the training thread only (Submit, Report)
};

StepHasher::StepHasher(Done done, bool background)
    : worker_(std::make_unique<Worker>(std::move(done), background)) {}
StepHasher::~StepHasher() = default;

void StepHasher::Submit(int64_t step, const nn::Module& model, const optim::Optimizer& optimizer,
                        const std::map<std::string, uint64_t>& rng_offsets, const Tensor& inputs,
                        const Tensor& labels) {
  Job job;
  job.step = step;
  const StateParts parts = PartsOf(model, optimizer, rng_offsets);
  for (const auto& [name, t] : parts.tensors) job.state.push_back(Copy(name, t, worker_->spare));
  for (const auto& [name, value] : parts.counters) job.integers.emplace_back(name, IntegerLeaf(name, value));
  job.batch.push_back(Copy("inputs", inputs, worker_->spare));
  job.batch.push_back(Copy("labels", labels, worker_->spare));
  worker_->Push(std::move(job));
}

void StepHasher::Drain() { worker_->Report(true); }

}  // namespace receipt
}  // namespace lockstep
