#include "core/receipt/step_hasher.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "core/checkpoint.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define LOCKSTEP_STEP_HASHER_THREAD 1
#include <condition_variable>
#include <mutex>
#include <thread>

#include "simd/thread_pool.h"
#endif

namespace lockstep {
namespace receipt {

namespace {

// A tensor's canonical bytes as the hasher reads them: in place (a job hashed at once), or a copy.
struct LeafCopy {
  std::string name;
  const char* dtype;
  std::vector<int64_t> shape;
  Tensor held;                    // in place (defined): keeps the bytes alive
  const uint8_t* data = nullptr;  // the bytes: held's, or bytes.data()
  size_t size = 0;
  std::vector<uint8_t> bytes;     // copied
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
  LeafCopy c{name, DTypeName(t.dtype()), t.shape(), Tensor(), nullptr, 0, {}};
  if (!spare.empty()) {
    c.bytes = std::move(spare.front());
    spare.pop_front();
    c.bytes.clear();
  }
  c.bytes.reserve(static_cast<size_t>(t.numel()) * DTypeSize(t.dtype()));
  CanonicalTensorBytes(t, [&](const uint8_t* data, size_t size) { c.bytes.insert(c.bytes.end(), data, data + size); });
  c.data = c.bytes.data();
  c.size = c.bytes.size();
  return c;
}

// In place where the tensor's memory is its canonical bytes (a contiguous host tensor on a
// little-endian host: CanonicalTensorBytes then hands over that memory itself), else a copy.
LeafCopy InPlace(const std::string& name, const Tensor& t, Spare& spare) {
  if (!kHostIsLittleEndian || !t.is_contiguous() || t.device() != Device::Cpu()) return Copy(name, t, spare);
  LeafCopy c{name, DTypeName(t.dtype()), t.shape(), t, nullptr, 0, {}};
  CanonicalTensorBytes(t, [&](const uint8_t* data, size_t size) { c.data = data, c.size = size; });
  return c;
}

Digest LeafOf(const LeafCopy& c) {
  Sha256 sha;
  StartLeaf(sha, c.name, c.dtype, c.shape);
  sha.Update(c.data, c.size);
  return sha.Digest();
}

// The job's digests from its leaves' (the state's in order, then the batch's two).
void Conclude(Job& job, const std::vector<Digest>& leaf_digests) {
  std::vector<std::pair<std::string, Digest>> named = std::move(job.integers);
  for (size_t i = 0; i < job.state.size(); ++i) named.emplace_back(job.state[i].name, leaf_digests[i]);
  job.state_digest = MerkleRoot(std::move(named));
  job.batch_digest = BatchDigestOfLeaves(leaf_digests[job.state.size()], leaf_digests[job.state.size() + 1]);
}

void Hash(Job& job) {
  std::vector<Digest> digests;
  for (const std::vector<LeafCopy>* leaves : {&job.state, &job.batch}) {
    for (const LeafCopy& c : *leaves) digests.push_back(LeafOf(c));
  }
  Conclude(job, digests);
}

#ifdef LOCKSTEP_STEP_HASHER_THREAD
// A job hashed a slice at a time by whichever thread comes to it: the pool's workers while they
// wait between kernels (simd::IdleWork), or the training thread when it needs the digests. The
// same bytes in the same order as Hash(): the same digests.
class SlicedJob : public simd::IdleWork {
 public:
  // Starts on `job` (the previous one finished).
  void Start(Job* job) {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = job;
    leaf_ = offset_ = 0;
    digests_.clear();
  }
  bool RunSlice() override {
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock() || job_ == nullptr || job_->done) return false;
    Advance(kSlice);
    return true;
  }
  // Hashes what is left of the job on the calling thread.
  void Finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    while (job_ != nullptr && !job_->done) Advance(~size_t{0});
  }

 private:
  // About 2.5 microseconds of SHA-256: a kernel published meanwhile waits no longer for the worker.
  static constexpr size_t kSlice = 4096;
  LeafCopy& Leaf(size_t i) {
    return i < job_->state.size() ? job_->state[i] : job_->batch[i - job_->state.size()];
  }
  // Hashes up to `budget` bytes of the job's leaves in order, finishing the job after the last.
  void Advance(size_t budget) {
    const size_t leaves = job_->state.size() + job_->batch.size();
    while (leaf_ < leaves && budget > 0) {
      LeafCopy& c = Leaf(leaf_);
      if (offset_ == 0) {
        sha_ = Sha256();
        StartLeaf(sha_, c.name, c.dtype, c.shape);
      }
      const size_t n = std::min(budget, c.size - offset_);
      sha_.Update(c.data + offset_, n);
      offset_ += n;
      budget -= n;
      if (offset_ == c.size) {
        digests_.push_back(sha_.Digest());
        ++leaf_;
        offset_ = 0;
      }
    }
    if (leaf_ < leaves) return;
    Conclude(*job_, digests_);
    job_->done = true;
  }
  std::mutex mutex_;
  Job* job_ = nullptr;  // guarded by mutex_, as is the rest
  size_t leaf_ = 0, offset_ = 0;
  Sha256 sha_;
  std::vector<Digest> digests_;
};
#endif

void Recycle(Job& job, Spare& spare) {
  for (std::vector<LeafCopy>* copies : {&job.state, &job.batch}) {
    for (LeafCopy& c : *copies) {
      if (!c.held.defined()) spare.push_back(std::move(c.bytes));
    }
  }
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
    wake_.notify_all();
    thread_.join();
#endif
  }

  void Push(Job job) {
#ifdef LOCKSTEP_STEP_HASHER_THREAD
    if (sliced_) {
      ReportSliced();
      current_ = std::make_unique<Job>(std::move(job));
      slicer_.Start(current_.get());
      return;
    }
#endif
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
  // The job in hand finished (on this thread, if the workers have not) and reported.
  void ReportSliced() {
    if (!current_) return;
    slicer_.Finish();
    const std::unique_ptr<Job> job = std::move(current_);
    slicer_.Start(nullptr);
    Recycle(*job, spare);
    done_(job->step, job->batch_digest, job->state_digest);
  }
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
  bool sliced_ = false;
  SlicedJob slicer_;
  std::unique_ptr<Job> current_;  // sliced: the job the workers hash
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
  // Hashed at once, the tensors are read where they are; hashed while the next step runs, copied
  // (read in place by another core, they cost the training thread more than a copy: measured).
  const bool at_once = worker_->at_once();
  auto leaf = [&](const std::string& name, const Tensor& t) {
    return at_once ? InPlace(name, t, worker_->spare) : Copy(name, t, worker_->spare);
  };
  for (const auto& [name, t] : parts.tensors) job.state.push_back(leaf(name, t));
  for (const auto& [name, value] : parts.counters) job.integers.emplace_back(name, IntegerLeaf(name, value));
  job.batch.push_back(leaf("inputs", inputs));
  job.batch.push_back(leaf("labels", labels));
  worker_->Push(std::move(job));
}

void StepHasher::Drain() { worker_->Report(true); }


}  // namespace receipt
}  // namespace lockstep
