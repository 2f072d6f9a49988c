#include "core/data.h"

#include <string.h>

#include "core/error.h"
#include "core/idx.h"
#include "core/random.h"
#include "simd/philox.h"

namespace lockstep {

Dataset LoadIdxDataset(const std::string& images_path, const std::string& labels_path) {
  return DatasetFromIdx(ReadIdxFile(images_path), ReadIdxFile(labels_path), images_path, labels_path);
}

Dataset DatasetFromIdx(const IdxArray& images, const IdxArray& labels, const std::string& images_path,
                       const std::string& labels_path) {
  LOCKSTEP_REQUIRE(images.dims.size() == 3, images_path << ": expected images [N, rows, cols], got "
                                                        << images.dims.size() << " dimensions");
  LOCKSTEP_REQUIRE(labels.dims.size() == 1 && labels.dims[0] == images.dims[0],
                   labels_path << ": expected " << images.dims[0] << " labels to match " << images_path
                               << ", got shape " << ShapeString(labels.dims));
  Dataset d;
  d.inputs = Tensor::FromVector({images.dims[0], 1, images.dims[1], images.dims[2]}, images.values);
  if (images.type_code == kIdxUint8) {
    // Byte pixels to [0, 1]: one float32 division by 255 per pixel.
    float* p = d.inputs.data_f32();
    for (int64_t i = 0; i < d.inputs.numel(); ++i) p[i] = p[i] / 255.0f;
  }
  std::vector<int64_t> y(labels.values.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const float v = labels.values[i];
    LOCKSTEP_REQUIRE(v >= 0.0f && v < 1e6f && v == static_cast<float>(static_cast<int64_t>(v)),
                     labels_path << ": label " << i << " is " << v << ", expected a non-negative integer");
    y[i] = static_cast<int64_t>(v);
  }
  d.labels = Tensor::FromInt64({static_cast<int64_t>(y.size())}, y);
  return d;
}

std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t n, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  if (n < 2) return order;
  std::vector<uint32_t> words(static_cast<size_t>(n - 1));
  simd::PhiloxUint32(seed, StreamId("shuffle"), static_cast<uint64_t>(epoch) * n, words.data(), words.size());
  for (int64_t i = n - 1; i >= 1; --i) {
    const uint64_t j = (uint64_t{words[n - 1 - i]} * static_cast<uint64_t>(i + 1)) >> 32;
    std::swap(order[i], order[j]);
  }
  return order;
}

DataLoader::DataLoader(const Dataset& data, int64_t batch_size, bool shuffle, bool drop_last, uint64_t seed)
    : data_(data), batch_size_(batch_size), shuffle_(shuffle), drop_last_(drop_last), seed_(seed) {
  LOCKSTEP_REQUIRE(batch_size > 0, "DataLoader: batch size must be positive, got " << batch_size);
  LOCKSTEP_REQUIRE(data.size() > 0, "DataLoader: the data set is empty");
}

int64_t DataLoader::batches_per_epoch() const {
  const int64_t n = data_.size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

void DataLoader::GetBatch(int64_t epoch, int64_t batch, Tensor* inputs, Tensor* labels) const {
  LOCKSTEP_REQUIRE(batch >= 0 && batch < batches_per_epoch(),
                   "DataLoader: batch " << batch << " is out of range (an epoch has " << batches_per_epoch() << ")");
  const int64_t n = data_.size();
  if (cached_epoch_ != epoch) {
    if (shuffle_) {
      order_ = EpochPermutation(seed_, n, epoch);
    } else {
      order_.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) order_[i] = i;
    }
    cached_epoch_ = epoch;
  }
  const int64_t first = batch * batch_size_;
  const int64_t count = n - first < batch_size_ ? n - first : batch_size_;
  Shape shape = data_.inputs.shape();
  const int64_t item = data_.inputs.numel() / n;
  shape[0] = count;
  *inputs = Tensor::Empty(shape);
  *labels = Tensor::Empty({count}, DType::kInt64);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t src = order_[first + i];
    memcpy(inputs->data_f32() + i * item, data_.inputs.data_f32() + src * item, item * sizeof(float));
    labels->data_i64()[i] = data_.labels.data_i64()[src];
  }
}

}  // namespace lockstep
