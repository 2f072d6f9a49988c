// Data-parallel training in the core, without knowing the transport (docs/distributed.md). Every
// rank holds the whole model and reads the same global batch order; each computes the forward and
// backward pass of its share of every batch, and every batch-dimension reduction (weight and bias
// gradients, BatchNorm statistics, the loss sum) is combined over the ranks in the contract's fixed
// tree over groups (batch_reduce.h), so every rank ends each backward pass with the gradients the
// single process computes, bit for bit, and takes the same optimizer step.
//
//   parallel::DataParallel dp(communicator);        // this thread's context until destroyed
//   for (...) {
//     const parallel::Share share = dp.ShareOf(batch_size);   // rows [begin, end) of the batch
//     parallel::BatchScope batch(dp, batch_size);             // reductions combine over ranks
//     batch.AddInput(indices);                                // integer inputs of embeddings
//     Tensor loss = CrossEntropy(model(x_rows), y_rows);      // the global mean on every rank
//     loss.Backward();                                        // global gradients on every rank
//     optimizer.Step();
//   }
//
// Without a DataParallel on the thread nothing changes: the single-process code paths run as
// before (one pointer test each).
#ifndef LOCKSTEP_CORE_PARALLEL_DATA_PARALLEL_H_
#define LOCKSTEP_CORE_PARALLEL_DATA_PARALLEL_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "core/parallel/communicator.h"
#include "core/tensor.h"

namespace lockstep {
namespace nn {
class Module;
}
namespace optim {
class Optimizer;
}

namespace parallel {

struct Share {
  int64_t begin = 0, end = 0;  // samples [begin, end) of the batch
  int64_t count() const { return end - begin; }
};

// Where a batch of `samples` is cut between `ranks` ranks: ranks + 1 boundaries. With at least as
// many groups of kBatchGroup samples as ranks, the cuts fall on group boundaries (groups spread as
// evenly as possible), so no group is split and each rank sends only its subtrees' sums; with
// fewer, the samples are spread evenly and a split group's rows go to the rank holding its first
// row. Every rank gets at least one sample: more ranks than samples is an error.
std::vector<int64_t> ShareBoundaries(int64_t samples, int ranks);

class DataParallel {
 public:
  // Installs this context on the calling thread (the previous one comes back when it is
  // destroyed). The communicator must outlive it.
  explicit DataParallel(Communicator& communicator);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const { return communicator_.rank(); }
  int size() const { return communicator_.size(); }
  // Rank 0 writes checkpoints and models, and reports progress.
  bool writer() const { return rank() == 0; }
  Share ShareOf(int64_t samples) const;

  // The transport, counting what this rank sends (statistics below).
  void AllToAll(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                const std::vector<size_t>& recv_bytes);
  void AllGather(const void* mine, void* all, const std::vector<size_t>& bytes);
  void Broadcast(void* data, size_t bytes, int root);
  void Broadcast(std::vector<uint8_t>* data, int root);  // any size: the size travels first
  int64_t SumOverRanks(int64_t value);

  // Runs fn on rank 0 only (writing a checkpoint, reading a file) and gives its outcome to every
  // rank: when it throws, every rank throws the same error, so no rank waits for a failed one.
  void OnWriter(const std::function<void()>& fn);
  // The bytes read() returns on rank 0, on every rank (its error, on every rank).
  std::vector<uint8_t> ReadOnWriter(const std::function<std::vector<uint8_t>()>& read);

  // Bytes this rank has handed to the transport for other ranks, and the transport calls made.
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t exchanges() const { return exchanges_; }
  // Wall time spent in the transport's calls (moving bytes and waiting for the other ranks).
  double transport_seconds() const { return transport_seconds_; }

  // Parameters, buffers and optimizer state are the same on every rank after every step, by
  // construction; this checks it cheaply (a 128-bit hash per rank, exchanged) and throws kInternal
  // naming the first rank that differs from rank 0 and the first tensor where it does.
  void CheckReplicas(const nn::Module& model, const optim::Optimizer* optimizer, int64_t step);
  // After a step: CheckReplicas every `every` steps (0: never). Default 50.
  void set_check_every(int64_t every) { check_every_ = every; }
  void AfterStep(const nn::Module& model, const optim::Optimizer* optimizer, int64_t step);

 private:
  Communicator& communicator_;
  DataParallel* previous_;
  uint64_t bytes_sent_ = 0, exchanges_ = 0;
  double transport_seconds_ = 0;
  int64_t check_every_ = 50;
};

// The thread's context, or null.
DataParallel* Current();
// Whether this process writes files and reports: rank 0, or any process outside a data-parallel run.
inline bool IsWriter() { return Current() == nullptr || Current()->writer(); }
// fn() here, or in a data-parallel run on rank 0 only with its outcome on every rank.
inline void OnWriter(const std::function<void()>& fn) {
  if (Current() == nullptr) {
    fn();
  } else {
    Current()->OnWriter(fn);
  }
}

// While alive, the thread's batch-dimension reductions combine over all ranks of `dp`: this rank
// holds samples ShareOf(samples) of a batch of `samples`, and every tensor whose first dimension is
// the batch carries only those rows. Evaluation and anything outside a BatchScope run as in one
// process.
class BatchScope {
 public:
  BatchScope(DataParallel& dp, int64_t samples);
  ~BatchScope();
  BatchScope(const BatchScope&) = delete;
  BatchScope& operator=(const BatchScope&) = delete;
  // Integer batch inputs that index embeddings: their lookups' gradients are gathered from every
  // rank in batch order (an embedding's gradient adds rows in index order over the whole batch).
  void AddInput(const Tensor& t);
};

// The batch being computed on this thread, or null outside a BatchScope.
struct ActiveBatch {
  DataParallel* dp;
  int64_t samples;
  std::vector<int64_t> bounds;  // ShareBoundaries(samples, dp->size())
  std::vector<const void*> inputs;  // storages of AddInput tensors
  int64_t begin() const { return bounds[static_cast<size_t>(dp->rank())]; }
  int64_t end() const { return bounds[static_cast<size_t>(dp->rank()) + 1]; }
  bool IsInput(const Tensor& t) const;
};
const ActiveBatch* CurrentBatch();

// For ops that count over the batch. Inside a BatchScope, a tensor whose first dimension is the
// batch holds this rank's share of it: GlobalSamples is the whole batch's size (local_samples
// must be the share, else kState naming op), FirstSample the share's first sample, SumOverBatch
// an integer count summed over the ranks. Outside, they return local_samples, 0 and value.
int64_t GlobalSamples(int64_t local_samples, const char* op);
int64_t FirstSample(int64_t local_samples, const char* op);
int64_t SumOverBatch(int64_t value);

}  // namespace parallel
}  // namespace lockstep

#endif  // LOCKSTEP_CORE_PARALLEL_DATA_PARALLEL_H_
