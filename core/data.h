// Data sets and a deterministic loader: each epoch's order is a Fisher-Yates permutation driven by
// the Philox stream "shuffle" under the run's seed, so the order depends only on (seed, epoch).
#ifndef LOCKSTEP_CORE_DATA_H_
#define LOCKSTEP_CORE_DATA_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "core/idx.h"
#include "core/io/files.h"
#include "core/tensor.h"

namespace lockstep {

// Examples [N, ...] with int64 labels [N]. Examples are kept compact, as stored (byte images as
// bytes, 1 byte per pixel), and become float32 only for the rows a batch asks for, so a data set
// costs about its files' size in memory. A byte pixel p becomes p / 255 (one float32 division);
// then, when normalisation is set, x = (x + shift) * scale (two float32 operations, as the
// elementwise kernels compute them). Batches are the same bits however the rows are grouped.
class Dataset {
 public:
  Dataset() = default;
  // Float32 examples [N, ...] (copied when not contiguous) and integer labels [N].
  Dataset(const Tensor& inputs, const Tensor& labels);
  // Byte examples: N * product(example_shape) bytes, row-major.
  static Dataset FromBytes(std::vector<uint8_t> bytes, const Shape& example_shape, const Tensor& labels);

  int64_t size() const { return labels_.defined() ? labels_.numel() : 0; }
  const Shape& example_shape() const { return example_shape_; }
  // [n, example_shape...]
  Shape BatchShape(int64_t n) const;

  void SetNormalization(float shift, float scale);
  bool normalized() const { return normalized_; }

  // Float32 inputs of rows [start, start + count) and of the listed rows, and labels, on the
  // current device (a data set itself lives in host memory; batches cross to the device here).
  Tensor Inputs(int64_t start, int64_t count) const;
  Tensor Gather(const std::vector<int64_t>& rows) const;
  Tensor Labels(int64_t start, int64_t count) const;
  const Tensor& labels() const { return labels_; }  // every label, in host memory
  // Every example as float32 [N, ...] (for small sets and the bindings' accessors).
  Tensor AllInputs() const { return Inputs(0, size()); }
  // Rows [start, start + count) as a data set of their own (shares nothing mutable).
  Dataset Subset(int64_t start, int64_t count) const;

  // SHA-256 of the stored examples, labels and normalisation: identifies the data in training
  // checkpoints, so a resumed run can check it continues on the same data.
  std::string Fingerprint() const;

 private:
  void CheckLabels() const;
  Tensor Convert(const std::vector<int64_t>& rows) const;

  Tensor floats_;                                      // float32 examples, or undefined
  std::shared_ptr<const std::vector<uint8_t>> bytes_;  // byte examples, or null
  Shape example_shape_;
  int64_t example_size_ = 0;
  Tensor labels_;  // int64 [N]
  bool normalized_ = false;
  float shift_ = 0.0f, scale_ = 1.0f;
};

// Reads an IDX image file [N, rows, cols] and its label file [N] (MNIST's format) as examples
// [N, 1, rows, cols]: headers first (a file of the wrong size is refused before its data is
// read), then the data in chunks, asking cancelled() between them. Byte images stay bytes; other
// element types become float32.
Dataset LoadIdxDataset(const std::string& images_path, const std::string& labels_path,
                       const CancelFn& cancelled = {});
// The same from IDX files held in memory; the names appear in error messages.
Dataset DatasetFromIdxBytes(const std::vector<uint8_t>& images, const std::vector<uint8_t>& labels,
                            const std::string& images_name, const std::string& labels_name);

// The permutation of [0, n) for one epoch: Fisher-Yates from i = n-1 down to 1, swapping i with
// j = (u * (i + 1)) >> 32, u being word epoch * n + (n - 1 - i) of the stream.
std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t n, int64_t epoch);

class DataLoader {
 public:
  DataLoader(const Dataset& data, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed);
  int64_t batches_per_epoch() const;
  // Batch `batch` of epoch `epoch`: inputs and labels, in the epoch's order.
  void GetBatch(int64_t epoch, int64_t batch, Tensor* inputs, Tensor* labels) const;
  // Rows [first, first + count) of that batch (a data-parallel rank's share).
  void GetBatchRows(int64_t epoch, int64_t batch, int64_t first, int64_t count, Tensor* inputs, Tensor* labels) const;

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
