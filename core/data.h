// Data sets and a deterministic loader: each epoch's order is a Fisher-Yates permutation driven by
// the Philox stream "shuffle" under the run's seed, so the order depends only on (seed, epoch).
#ifndef LOCKSTEP_CORE_DATA_H_
#define LOCKSTEP_CORE_DATA_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "core/idx.h"
#include "core/tensor.h"

namespace lockstep {

struct Dataset {
  Tensor inputs;  // [N, ...] float32
  Tensor labels;  // [N] int64
  int64_t size() const { return inputs.defined() ? inputs.size(0) : 0; }
};

// Reads an IDX image file and its label file (MNIST's format). Images are scaled by `scale`
// (1/255 for byte images, 1 for float images) and shaped [N, 1, rows, cols].
Dataset LoadIdxDataset(const std::string& images_path, const std::string& labels_path);
// The same from IDX arrays already decoded (DecodeIdx); the names appear in error messages.
Dataset DatasetFromIdx(const IdxArray& images, const IdxArray& labels, const std::string& images_name,
                       const std::string& labels_name);

// The permutation of [0, n) for one epoch: Fisher-Yates from i = n-1 down to 1, swapping i with
// j = (u * (i + 1)) >> 32, u being word epoch * n + (n - 1 - i) of the stream.
std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t n, int64_t epoch);

class DataLoader {
 public:
  DataLoader(const Dataset& data, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed);
  int64_t batches_per_epoch() const;
  // Batch `batch` of epoch `epoch`: inputs and labels, in the epoch's order.
  void GetBatch(int64_t epoch, int64_t batch, Tensor* inputs, Tensor* labels) const;

 private:
  const Dataset& data_;
  int64_t batch_size_;
  bool shuffle_, drop_last_;
  uint64_t seed_;
  mutable int64_t cached_epoch_ = -1;
  mutable std::vector<int64_t> order_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_DATA_H_
