#include "core/parallel/data_parallel.h"

#include <string.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/error.h"
#include "core/nn/module.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/trace/bits_hash.h"

namespace lockstep {
namespace parallel {

namespace {

thread_local DataParallel* current_context = nullptr;

// Adds the seconds of its lifetime to *total.
class Timer {
 public:
  explicit Timer(double* total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Timer() { *total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double* total_;
  std::chrono::steady_clock::time_point start_;
};
thread_local std::unique_ptr<ActiveBatch> current_batch;

}  // namespace

std::vector<int64_t> ShareBoundaries(int64_t samples, int ranks) {
  LOCKSTEP_REQUIRE(ranks >= 1, "data-parallel: expected at least one rank, got " << ranks);
  LOCKSTEP_REQUIRE(samples >= ranks, "data-parallel: a batch of " << samples << " samples cannot be shared by " << ranks
                                                                  << " ranks (each rank needs at least one sample; "
                                                                     "use fewer ranks or larger batches)");
  const int64_t groups = (samples + kBatchGroup - 1) / kBatchGroup;
  std::vector<int64_t> bounds(static_cast<size_t>(ranks) + 1);
  for (int r = 0; r <= ranks; ++r) {
    if (groups >= ranks) {
      bounds[static_cast<size_t>(r)] = std::min(samples, kBatchGroup * (groups * r / ranks));
    } else {
      bounds[static_cast<size_t>(r)] = samples * r / ranks;
    }
  }
  return bounds;
}

DataParallel::DataParallel(Communicator& communicator) : communicator_(communicator), previous_(current_context) {
  LOCKSTEP_REQUIRE(communicator.size() >= 1 && communicator.rank() >= 0 && communicator.rank() < communicator.size(),
                   "data-parallel: rank " << communicator.rank() << " of " << communicator.size() << " ranks");
  current_context = this;
}

DataParallel::~DataParallel() { current_context = previous_; }

DataParallel* Current() { return current_context; }

Share DataParallel::ShareOf(int64_t samples) const {
  const std::vector<int64_t> bounds = ShareBoundaries(samples, size());
  return {bounds[static_cast<size_t>(rank())], bounds[static_cast<size_t>(rank()) + 1]};
}

void DataParallel::AllToAll(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                            const std::vector<size_t>& recv_bytes) {
  for (size_t j = 0; j < send_bytes.size(); ++j) {
    if (static_cast<int>(j) != rank()) bytes_sent_ += send_bytes[j];
  }
  const Timer timer(&transport_seconds_);
  ++exchanges_;
  communicator_.AllToAll(send, send_bytes, recv, recv_bytes);
}

void DataParallel::AllGather(const void* mine, void* all, const std::vector<size_t>& bytes) {
  bytes_sent_ += bytes[static_cast<size_t>(rank())] * static_cast<uint64_t>(size() - 1);
  const Timer timer(&transport_seconds_);
  ++exchanges_;
  communicator_.AllGather(mine, all, bytes);
}

void DataParallel::Broadcast(void* data, size_t bytes, int root) {
  if (rank() == root) bytes_sent_ += bytes * static_cast<uint64_t>(size() - 1);
  const Timer timer(&transport_seconds_);
  ++exchanges_;
  communicator_.Broadcast(data, bytes, root);
}

void DataParallel::Broadcast(std::vector<uint8_t>* data, int root) {
  int64_t length = static_cast<int64_t>(data->size());
  Broadcast(&length, sizeof length, root);
  data->resize(static_cast<size_t>(length));
  Broadcast(data->data(), data->size(), root);
}

void DataParallel::OnWriter(const std::function<void()>& fn) {
  // The outcome travels as [kind + 1 (0: success), message length], then the message.
  int64_t header[2] = {0, 0};
  std::string message;
  if (writer()) {
    try {
      fn();
    } catch (const Error& e) {
      header[0] = static_cast<int64_t>(e.kind()) + 1;
      message = e.what();
    } catch (const std::exception& e) {
      header[0] = static_cast<int64_t>(ErrorKind::kInternal) + 1;
      message = e.what();
    }
    header[1] = static_cast<int64_t>(message.size());
  }
  Broadcast(header, sizeof header, 0);
  if (header[0] == 0) return;
  message.resize(static_cast<size_t>(header[1]));
  Broadcast(&message[0], message.size(), 0);
  throw Error(writer() ? message : "rank 0 failed: " + message, static_cast<ErrorKind>(header[0] - 1));
}

std::vector<uint8_t> DataParallel::ReadOnWriter(const std::function<std::vector<uint8_t>()>& read) {
  std::vector<uint8_t> bytes;
  OnWriter([&] { bytes = read(); });
  Broadcast(&bytes, 0);
  return bytes;
}

int64_t DataParallel::SumOverRanks(int64_t value) {
  const Timer timer(&transport_seconds_);
  ++exchanges_;
  communicator_.AllSum(&value, 1);
  return value;
}

namespace {

constexpr size_t kHashChars = 32;

// Name and hash of every tensor a replica must agree on: parameters and buffers (the state dict)
// and the optimizer's state.
void HashState(const nn::Module& model, const optim::Optimizer* optimizer, std::vector<std::string>* names,
               std::string* hashes) {
  nn::NamedTensors all = model.StateDict();
  if (optimizer != nullptr) {
    const nn::NamedTensors state = optimizer->State();
    all.insert(all.end(), state.begin(), state.end());
  }
  for (const auto& [name, tensor] : all) {
    const Tensor t = tensor.Contiguous().ToDevice(Device::Cpu());
    const void* data = t.dtype() == DType::kFloat32 ? static_cast<const void*>(t.data_f32())
                       : t.dtype() == DType::kInt64 ? static_cast<const void*>(t.data_i64())
                                                    : static_cast<const void*>(t.data_i32());
    const std::string hash = trace::BitsHash(data, static_cast<size_t>(t.numel()) * DTypeSize(t.dtype()));
    LOCKSTEP_ASSERT(hash.size() == kHashChars);
    names->push_back(name);
    *hashes += hash;
  }
}

}  // namespace

void DataParallel::CheckReplicas(const nn::Module& model, const optim::Optimizer* optimizer, int64_t step) {
  std::vector<std::string> names;
  std::string mine;
  HashState(model, optimizer, &names, &mine);
  if (optimizer != nullptr) mine += std::to_string(optimizer->step_count() + 1000000000000LL);  // fixed width
  std::vector<size_t> bytes(static_cast<size_t>(size()), mine.size());
  std::string all(mine.size() * static_cast<size_t>(size()), '\0');
  AllGather(mine.data(), &all[0], bytes);
  const std::string reference = all.substr(0, mine.size());
  for (int r = 1; r < size(); ++r) {
    const std::string theirs = all.substr(mine.size() * static_cast<size_t>(r), mine.size());
    if (theirs == reference) continue;
    std::string where = "the optimizer's step count";
    for (size_t i = 0; i < names.size(); ++i) {
      if (theirs.compare(i * kHashChars, kHashChars, reference, i * kHashChars, kHashChars) != 0) {
        where = "'" + names[i] + "'";
        break;
      }
    }
    LOCKSTEP_REQUIRE_KIND(ErrorKind::kInternal, false,
                          "data-parallel: after step " << step << " rank " << r << " of " << size()
                                                       << " holds other values than rank 0 (first difference: "
                                                       << where << "); the replicas have diverged");
  }
}

void DataParallel::AfterStep(const nn::Module& model, const optim::Optimizer* optimizer, int64_t step) {
  if (check_every_ > 0 && step % check_every_ == 0) CheckReplicas(model, optimizer, step);
}

bool ActiveBatch::IsInput(const Tensor& t) const {
  if (!t.defined()) return false;
  const void* storage = t.impl()->storage.get();
  return std::find(inputs.begin(), inputs.end(), storage) != inputs.end();
}

BatchScope::BatchScope(DataParallel& dp, int64_t samples) {
  LOCKSTEP_REQUIRE_STATE(current_batch == nullptr, "data-parallel: a batch is already being computed on this thread");
  // The reductions over ranks exchange host buffers and pack rows on the host.
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kUnavailable, CurrentDevice() == Device::Cpu(),
                        "data-parallel training runs on the CPU; the current device is "
                            << CurrentDevice().ToString() << " (train on one GPU without mpirun, or on the CPU)");
  current_batch = std::make_unique<ActiveBatch>(ActiveBatch{&dp, samples, ShareBoundaries(samples, dp.size()), {}});
}

BatchScope::~BatchScope() { current_batch.reset(); }

void BatchScope::AddInput(const Tensor& t) { current_batch->inputs.push_back(t.impl()->storage.get()); }

const ActiveBatch* CurrentBatch() { return current_batch.get(); }

namespace {

void RequireShare(const ActiveBatch& batch, int64_t local_samples, const char* op) {
  LOCKSTEP_REQUIRE_STATE(local_samples == batch.end() - batch.begin(),
                         op << ": in a data-parallel batch, expected this rank's " << batch.end() - batch.begin()
                            << " samples of " << batch.samples << " as the first dimension, got " << local_samples);
}

}  // namespace

int64_t GlobalSamples(int64_t local_samples, const char* op) {
  if (current_batch == nullptr) return local_samples;
  RequireShare(*current_batch, local_samples, op);
  return current_batch->samples;
}

int64_t FirstSample(int64_t local_samples, const char* op) {
  if (current_batch == nullptr) return 0;
  RequireShare(*current_batch, local_samples, op);
  return current_batch->begin();
}

int64_t SumOverBatch(int64_t value) {
  return current_batch == nullptr ? value : current_batch->dp->SumOverRanks(value);
}

}  // namespace parallel
}  // namespace lockstep
