#include "core/receipt/step_hasher.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "core/checkpoint.h"
#include "core/error.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define LOCKSTEP_STEP_HASHER_THREAD 1
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "simd/thread_pool.h"
#endif

namespace lockstep {
namespace receipt {

namespace {

// A leaf apart from its bytes.
struct LeafInfo {
  std::string name;
  const char* dtype;
  std::vector<int64_t> shape;
};

}  // namespace

// The state's leaves as the hasher takes them (PartsOf's) and how each is read. A closed loop's
// state is held by the same tensors step after step: its plan is made once and kept.
struct StepHasher::Plan {
  std::vector<LeafInfo> tensors;
  std::vector<Tensor> held;                   // the tensors themselves
  std::vector<char> in_place;                 // read where they are (else copied)
  std::vector<std::string> rng;               // the random streams, in rng_offsets' order
  std::vector<std::string> counters;          // the counters' leaf names: optimizer.step, rng.<stream>...
  std::vector<size_t> order;                  // tensors then counters, sorted by name (the tree's order)
};

namespace {

// A leaf's canonical bytes as the hasher reads them: in place, or a copy in the leaf's own buffer
// (kept with the job, which is reused: no allocation a step once the buffers have grown).
struct LeafBytes {
  const LeafInfo* info = nullptr;
  Tensor held;                    // in place (defined): keeps the bytes alive
  const uint8_t* data = nullptr;  // the bytes: held's, or bytes.data()
  size_t size = 0;
  std::vector<uint8_t> bytes;     // copied
};

// One step's state and batch, and, once hashed, its digests.
struct Job {
  int64_t step = 0;
  std::shared_ptr<const StepHasher::Plan> plan;
  std::vector<LeafBytes> state;
  std::vector<uint64_t> counters;  // the plan's counters' values
  LeafInfo batch_info[2];
  LeafBytes batch[2];
  Digest batch_digest{}, state_digest{};
  bool done = false;
};

void Copy(LeafBytes& c, const Tensor& t) {
  c.held = Tensor();
  c.bytes.clear();
  c.bytes.reserve(static_cast<size_t>(t.numel()) * DTypeSize(t.dtype()));
  CanonicalTensorBytes(t, [&](const uint8_t* data, size_t size) { c.bytes.insert(c.bytes.end(), data, data + size); });
  c.data = c.bytes.data();
  c.size = c.bytes.size();
}

// In place where the tensor's memory is its canonical bytes (a contiguous host tensor on a
// little-endian host: CanonicalTensorBytes then hands over that memory itself), else a copy.
void InPlace(LeafBytes& c, const Tensor& t) {
  if (!kHostIsLittleEndian || !t.is_contiguous() || t.device() != Device::Cpu()) return Copy(c, t);
  c.held = t;
  CanonicalTensorBytes(t, [&](const uint8_t* data, size_t size) { c.data = data, c.size = size; });
}

// A state leaf held until the optimizer's update (where the workers hash, a held state leaf is
// one), copied before the update rewrites its bytes (the bytes hashed so far are among those
// copied: the same bytes, so the same digest).
void Detach(LeafBytes& c) {
  if (c.held.defined()) Copy(c, Tensor(c.held));
}

// The job's digests from its leaves' (the state's in order, then the batch's two).
void Conclude(Job& job, const std::vector<Digest>& leaf_digests) {
  const StepHasher::Plan& plan = *job.plan;
  const size_t tensors = job.state.size();
  std::vector<Digest> sorted;
  sorted.reserve(plan.order.size());
  for (size_t i : plan.order) {
    sorted.push_back(i < tensors ? leaf_digests[i] : IntegerLeaf(plan.counters[i - tensors], job.counters[i - tensors]));
  }
  job.state_digest = MerkleRootInOrder(std::move(sorted));
  job.batch_digest = BatchDigestOfLeaves(leaf_digests[tensors], leaf_digests[tensors + 1]);
}

// Hashes a job's leaves one after another, about as many bytes a call as asked, and concludes the
// job after the last. A leaf's content goes through BLAKE3 (state_hash.h), a vector of chunks at
// a time (Blake3Sliced).
class LeafHasher {
 public:
  void Start(Job* job) {
    job_ = job;
    next_ = finished_ = 0;
    concluded_ = false;
    digests_.assign(job == nullptr ? 0 : job->state.size() + 2, Digest{});
    Take();
  }
  // Calls f on each state leaf of the job not yet wholly hashed (begun or not); f may move a
  // leaf's bytes (the same bytes elsewhere).
  template <class F>
  void ForEachUnfinishedState(const F& f) {
    if (job_ == nullptr || concluded_) return;
    if (lane_.active() && lane_.index < job_->state.size()) {
      f(job_->state[lane_.index]);
      lane_.content.Rebase(job_->state[lane_.index].data);  // f may have moved the bytes
    }
    for (size_t i = next_; i < job_->state.size(); ++i) f(job_->state[i]);
  }
  // Hashes up to about `budget` bytes (at least a step, where any are left); true once the job
  // is done.
  bool Advance(size_t budget) {
    if (job_ == nullptr || concluded_) return true;
    while (finished_ < digests_.size() && budget > 0) {
      budget -= std::min(budget, lane_.content.Advance(budget));
      // Finishing a leaf and starting the next (a few SHA-256 blocks) counts as a kilobyte's
      // worth, so that a slice of the workers' waits does not run through many small leaves.
      if (Settle()) budget -= std::min(budget, size_t{1024});
    }
    // The conclusion (the Merkle tree over every leaf) takes a slice of its own.
    if (finished_ < digests_.size() || budget == 0) return false;
    Conclude(*job_, digests_);
    concluded_ = true;
    return true;
  }

 private:
  struct Lane {
    const LeafBytes* leaf = nullptr;
    size_t index = 0;
    Sha256 prefix;
    simd::Blake3Sliced content;
    bool active() const { return leaf != nullptr; }
  };
  const LeafBytes& Leaf(size_t i) const {
    return i < job_->state.size() ? job_->state[i] : job_->batch[i - job_->state.size()];
  }
  // Begins the next leaf, or none.
  void Take() {
    lane_.leaf = nullptr;
    if (next_ == digests_.size()) return;
    lane_.index = next_++;
    lane_.leaf = &Leaf(lane_.index);
    lane_.prefix = Sha256();
    lane_.content.Start(lane_.leaf->data, lane_.leaf->size);
    const LeafInfo& info = *lane_.leaf->info;
    StartLeaf(lane_.prefix, info.name, info.dtype, info.shape);
    Settle();  // an empty tensor is finished at once
  }
  // Finishes the leaf when all its bytes are in, and takes the next; true when it finished one.
  bool Settle() {
    if (!lane_.active() || !lane_.content.done()) return false;
    digests_[lane_.index] = FinishLeaf(lane_.prefix, lane_.content.Digest());
    ++finished_;
    Take();
    return true;
  }
  Job* job_ = nullptr;
  Lane lane_;
  size_t next_ = 0, finished_ = 0;  // leaves begun, and finished
  bool concluded_ = false;
  std::vector<Digest> digests_;
};

void Hash(Job& job) {
  LeafHasher hasher;
  hasher.Start(&job);
  hasher.Advance(~size_t{0});
}

#ifdef LOCKSTEP_STEP_HASHER_THREAD
// A lock held for a slice at most (about a microsecond): a thread that waits for it spins, since
// the kernel's sleep and wake-up would cost the training thread more than the slice.
class SliceLock {
 public:
  bool try_lock() { return !held_.exchange(true, std::memory_order_acquire); }
  void lock() {
    while (!try_lock()) {
      while (held_.load(std::memory_order_relaxed)) {
      }
    }
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

// A job hashed a slice at a time by whichever thread comes to it: the pool's workers while they
// wait between kernels (simd::IdleWork), or the training thread when it needs the digests. The
// same bytes in the same order as Hash(): the same digests.
class SlicedJob : public simd::IdleWork {
 public:
  // Starts on `job` (the previous one finished).
  void Start(Job* job) {
    std::lock_guard<SliceLock> lock(lock_);
    hasher_.Start(job);
    pending_.store(job != nullptr, std::memory_order_release);
  }
  bool RunSlice() override {
    // A worker between kernels comes here again and again: with nothing to hash it touches
    // neither the lock nor the hasher.
    if (!pending_.load(std::memory_order_acquire)) return false;
    std::unique_lock<SliceLock> lock(lock_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    // Release: the bytes were read before the training thread, seeing nothing pending, may let
    // the optimizer's update rewrite them.
    if (hasher_.Advance(kSlice)) pending_.store(false, std::memory_order_release);
    return true;
  }
  // Hashes what is left of the job on the calling thread.
  void Finish() {
    std::lock_guard<SliceLock> lock(lock_);
    hasher_.Advance(~size_t{0});
    pending_.store(false, std::memory_order_relaxed);
  }
  // Copies the leaves held until the update that are not yet hashed (the workers go on with the
  // copies): the update may begin.
  void DetachUnfinished() {
    if (!pending_.load(std::memory_order_acquire)) return;  // all hashed
    std::lock_guard<SliceLock> lock(lock_);
    hasher_.ForEachUnfinishedState([&](LeafBytes& c) { Detach(c); });
  }

 private:
  // A block of each of a vector's chunks (AVX-512: 16 of them, about 0.2 microseconds): a kernel
  // published meanwhile hardly waits for the worker.
  static constexpr size_t kSlice = 1024;
  SliceLock lock_;
  std::atomic<bool> pending_{false};  // a job not yet wholly hashed
  LeafHasher hasher_;                 // guarded by lock_
};
#endif

// A finished job, ready to be filled again: its copies' buffers stay; what it held goes.
void Release(Job& job) {
  job.plan.reset();
  for (LeafBytes& c : job.state) c.held = Tensor();
  for (LeafBytes& c : job.batch) c.held = Tensor();
  job.done = false;
}

}  // namespace

#ifdef LOCKSTEP_STEP_HASHER_THREAD
// The machine's cores, or 1 where it cannot tell.
static unsigned Cores() {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : cores;
}
#endif

class StepHasher::Worker {
 public:
  Worker(Done done, bool background) : done_(std::move(done)) {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    // A thread of its own when training leaves a core free; when it uses every core, a thread of
    // its own only takes the cores from the kernels, so the pool's workers hash in their waits.
    // (The cores are asked only then: the npm package's module, which hashes at once, cannot ask.)
    sliced_ = background && simd::DefaultThreadCount() > 1 && simd::DefaultThreadCount() >= Cores();
    background_ = background && !sliced_;
    if (sliced_) simd::PostIdleWork(&slicer_);
    if (background_) thread_ = std::thread([this] { Loop(); });
#else
    (void)background;
#endif
  }
  ~Worker() {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (sliced_) simd::WithdrawIdleWork(&slicer_);
    if (!background_) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    stop_spinning_.store(true);
    wake_.notify_all();
    thread_.join();
#endif
  }

  // A job to fill: a finished one where there is one (its buffers grown already), else a new one.
  std::unique_ptr<Job> TakeJob() {
    if (free_.empty()) return std::make_unique<Job>();
    std::unique_ptr<Job> job = std::move(free_.back());
    free_.pop_back();
    return job;
  }

  void Push(std::unique_ptr<Job> job) {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (sliced_) {
      ReportSliced();
      current_ = std::move(job);
      slicer_.Start(current_.get());
      return;
    }
#endif
    if (!background_) {
      Hash(*job);
      Report(std::move(job));
      return;
    }
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    {
      std::unique_lock<std::mutex> lock(mutex_);
      finished_.wait(lock, [&] { return pending_.size() < 2 || pending_.front()->done; });
      pending_.push_back(std::move(job));
      pushed_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    Report(false);
#endif
  }

  // Before the optimizer's update: no job may read the state in place past it.
  void BeforeUpdate() {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (sliced_ && current_) slicer_.DetachUnfinished();
#endif
  }

  // Whether the pool's workers hash in their waits (else a thread of its own, or Push at once).
  bool sliced() const {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    return sliced_;
#else
    return false;
#endif
  }

  // Whether Push hashes the job before it returns.
  bool at_once() const {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (sliced_) return false;
#endif
    return !background_;
  }

  // Reports finished jobs in order; with wait, every job.
  void Report(bool wait) {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (sliced_ && wait) ReportSliced();
    if (!background_) return;
    for (;;) {
      std::unique_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (wait) finished_.wait(lock, [&] { return pending_.empty() || pending_.front()->done; });
        if (pending_.empty() || !pending_.front()->done) return;
        job = std::move(pending_.front());
        pending_.pop_front();
        --next_;  // the hasher's index counts from the front
      }
      finished_.notify_all();
      Report(std::move(job));
    }
#else
    (void)wait;
#endif
  }

 private:
#ifdef LOCKSTEP_STEP_HASHER_THREAD
  // The job in hand finished (on this thread, if the workers have not) and reported.
  void ReportSliced() {
    if (!current_) return;
    slicer_.Finish();
    slicer_.Start(nullptr);
    Report(std::move(current_));
  }
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    size_t taken = 0;
    for (;;) {
      if (!stop_ && next_ == pending_.size()) {
        // Spins a while (10 ms) before sleeping: a small model's step comes every few
        // milliseconds, and waking a thread asleep costs the training thread a system call each
        // step (LeNet-5 at 1 thread: about a point of the step). A core spinning on pause
        // instructions did not slow the training core here.
        lock.unlock();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
        for (unsigned i = 1; pushed_.load(std::memory_order_acquire) == taken && !stop_spinning_.load(); ++i) {
          Pause();
          if (i % 1024 == 0 && std::chrono::steady_clock::now() >= deadline) break;
        }
        lock.lock();
      }
      wake_.wait(lock, [&] { return stop_ || next_ < pending_.size(); });
      ++taken;
      if (stop_) return;
      // Jobs are only appended while this one is hashed, and only this thread hashes them, so the
      // reference stays valid: std::deque keeps elements in place on push_back.
      Job& job = *pending_[next_];
      lock.unlock();
      Hash(job);
      lock.lock();
      job.done = true;
      ++next_;
      finished_.notify_all();
    }
  }
  static void Pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::atomic<size_t> pushed_{0};
  std::atomic<bool> stop_spinning_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::deque<std::unique_ptr<Job>> pending_;
  size_t next_ = 0;  // the first job not yet hashed
  bool stop_ = false;
  bool sliced_ = false;
  SlicedJob slicer_;
  std::unique_ptr<Job> current_;  // sliced: the job the workers hash
#endif
  // A hashed job's digests to `done`, and the job back among the free ones.
  void Report(std::unique_ptr<Job> job) {
    Release(*job);
    done_(job->step, job->batch_digest, job->state_digest);
    if (free_.size() < 3) free_.push_back(std::move(job));
  }
  bool background_ = false;
  Done done_;
  std::vector<std::unique_ptr<Job>> free_;  // the training thread's (Submit, Report)
};

StepHasher::StepHasher(Done done, bool background, optim::Optimizer* updater)
    : worker_(std::make_unique<Worker>(std::move(done), background)), updater_(updater) {
  if (updater_ != nullptr) updater_->set_before_update([this] { worker_->BeforeUpdate(); });
}
StepHasher::~StepHasher() {
  if (updater_ != nullptr) updater_->set_before_update(nullptr);
}

namespace {

// Whether a kept plan still describes the state (the same tensors, names and kinds).
bool SamePlan(const StepHasher::Plan& a, const StepHasher::Plan& b) {
  if (a.tensors.size() != b.tensors.size() || a.counters != b.counters) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    if (a.tensors[i].name != b.tensors[i].name || a.tensors[i].shape != b.tensors[i].shape ||
        a.held[i].impl() != b.held[i].impl() || a.in_place[i] != b.in_place[i]) {
      return false;
    }
  }
  return true;
}

// Whether the random streams are the plan's (their offsets change, their names do not).
bool SameStreams(const StepHasher::Plan& plan, const std::map<std::string, uint64_t>& rng_offsets) {
  if (plan.rng.size() != rng_offsets.size()) return false;
  size_t i = 0;
  for (const auto& entry : rng_offsets) {
    if (entry.first != plan.rng[i++]) return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const StepHasher::Plan> StepHasher::MakePlan(const nn::Module& model, const optim::Optimizer& optimizer,
                                                 const std::map<std::string, uint64_t>& rng_offsets) const {
  auto plan = std::make_shared<Plan>();
  const StateParts parts = PartsOf(model, optimizer, rng_offsets);
  // Hashed at once, the state is read where it is; hashed while the next step runs, copied, since
  // the next step rewrites it, unless the pool's workers hash it and only the updater's update
  // rewrites it (then held until the update begins; the model's buffers are rewritten by the
  // forward pass). A thread of its own copies: read in place by a core that does not train, the
  // tensors cost the training thread more than a copy (LeNet-5 at 1 thread: 7% a step, against
  // 4%; measured).
  const bool at_once = worker_->at_once();
  const bool until_update = worker_->sliced() && updater_ != nullptr;
  std::set<std::string> buffers;
  if (until_update) {
    for (const auto& [name, t] : model.NamedBuffers()) buffers.insert("model." + name);
  }
  std::vector<std::string> names;
  for (const auto& [name, t] : parts.tensors) {
    plan->tensors.push_back(LeafInfo{name, DTypeName(t.dtype()), t.shape()});
    plan->held.push_back(t);
    plan->in_place.push_back(at_once || (until_update && buffers.count(name) == 0));
    names.push_back(name);
  }
  for (const auto& [name, value] : parts.counters) {
    plan->counters.push_back(name);
    names.push_back(name);
  }
  for (const auto& entry : rng_offsets) plan->rng.push_back(entry.first);
  plan->order = MerkleOrder(names);
  return plan;
}

void StepHasher::Submit(int64_t step, const nn::Module& model, const optim::Optimizer& optimizer,
                        const std::map<std::string, uint64_t>& rng_offsets, const Tensor& inputs,
                        const Tensor& labels) {
  // A closed loop's plan is kept: its state is the same tensors each step (checked every
  // kRecheck steps: a loop that broke that promise would have hashed stale tensors, so it fails).
  // Any other caller's state is taken anew each step.
  const bool kept = plan_ != nullptr && updater_ != nullptr && SameStreams(*plan_, rng_offsets);
  const bool recheck = kept && ++since_check_ >= kRecheck;
  if (!kept || recheck) {
    std::shared_ptr<const Plan> fresh = MakePlan(model, optimizer, rng_offsets);
    LOCKSTEP_REQUIRE_STATE(!recheck || SamePlan(*plan_, *fresh),
                           "receipt: the training state's tensors changed within a closed training loop (its "
                           "optimizer was given to the step hasher as the only writer between steps)");
    plan_ = std::move(fresh);
    since_check_ = 0;
  }
  const std::shared_ptr<const Plan>& plan = plan_;
  std::unique_ptr<Job> job = worker_->TakeJob();
  job->step = step;
  job->plan = plan;
  job->state.resize(plan->tensors.size());
  for (size_t i = 0; i < plan->tensors.size(); ++i) {
    LeafBytes& leaf = job->state[i];
    leaf.info = &plan->tensors[i];
    if (plan->in_place[i]) {
      InPlace(leaf, plan->held[i]);  // held, or copied where it must be
    } else {
      Copy(leaf, plan->held[i]);
    }
  }
  job->counters = CounterValues(optimizer, rng_offsets);
  // The batch is read in place: nothing writes into a step's batch afterwards (the header's
  // contract).
  const Tensor* batch[2] = {&inputs, &labels};
  const char* batch_names[2] = {"inputs", "labels"};
  for (int i = 0; i < 2; ++i) {
    LeafInfo& info = job->batch_info[i];
    if (info.name.empty()) info.name = batch_names[i];
    info.dtype = DTypeName(batch[i]->dtype());
    info.shape = batch[i]->shape();
    job->batch[i].info = &info;
    InPlace(job->batch[i], *batch[i]);
  }
  worker_->Push(std::move(job));
}

void StepHasher::Drain() { worker_->Report(true); }


}  // namespace receipt
}  // namespace lockstep
