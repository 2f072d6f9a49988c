#include "core/data.h"

#include <string.h>

#include <algorithm>

#include "core/autograd.h"
#include "core/error.h"
#include "core/idx.h"
#include "core/ops.h"
#include "core/random.h"
#include "core/sha256.h"
#include "core/trace/trace.h"
#include "core/backend/host.h"

namespace lockstep {

namespace {

Tensor RequireLabels(const Tensor& labels, int64_t n, const char* what) {
  LOCKSTEP_REQUIRE(labels.defined(), what << ": labels are missing");
  LOCKSTEP_REQUIRE(labels.dtype() == DType::kInt64 || labels.dtype() == DType::kInt32,
                   what << ": labels must be an integer tensor (int64 class indices), got " << DTypeName(labels.dtype()));
  LOCKSTEP_REQUIRE(labels.dim() == 1 && labels.size(0) == n,
                   what << ": expected " << n << " labels (shape [" << n << "]) to match the examples, got shape "
                        << ShapeString(labels.shape()));
  return labels.To(DType::kInt64).Contiguous().ToDevice(Device::Cpu());
}

}  // namespace

Dataset::Dataset(const Tensor& inputs, const Tensor& labels) {
  LOCKSTEP_REQUIRE(inputs.defined() && inputs.dim() >= 1,
                   "data set: expected examples [N, ...], got " << (inputs.defined() ? ShapeString(inputs.shape()) : "none"));
  LOCKSTEP_REQUIRE(inputs.dtype() == DType::kFloat32,
                   "data set: examples must be float32, got " << DTypeName(inputs.dtype()));
  labels_ = RequireLabels(labels, inputs.size(0), "data set");
  floats_ = inputs.Detach().Contiguous().ToDevice(Device::Cpu());
  example_shape_.assign(inputs.shape().begin() + 1, inputs.shape().end());
  example_size_ = NumElements(example_shape_);
  CheckLabels();
}

Dataset Dataset::FromBytes(std::vector<uint8_t> bytes, const Shape& example_shape, const Tensor& labels) {
  ValidateShape(example_shape, "data set");
  Dataset d;
  d.example_shape_ = example_shape;
  d.example_size_ = NumElements(example_shape);
  const int64_t n = labels.defined() && labels.dim() == 1 ? labels.size(0) : -1;
  d.labels_ = RequireLabels(labels, n, "data set");
  LOCKSTEP_REQUIRE(static_cast<uint64_t>(n) * static_cast<uint64_t>(d.example_size_) == bytes.size(),
                   "data set: " << bytes.size() << " bytes do not hold " << n << " examples of shape "
                                << ShapeString(example_shape));
  d.bytes_ = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  d.CheckLabels();
  return d;
}

void Dataset::CheckLabels() const {
  const int64_t* y = labels_.data_i64();  // host memory: a data set's labels are on the CPU
  for (int64_t i = 0; i < labels_.numel(); ++i) {
    LOCKSTEP_REQUIRE(y[i] >= 0, "data set: label " << i << " is " << y[i] << ", expected a class index >= 0");
  }
}

Shape Dataset::BatchShape(int64_t n) const {
  Shape shape{n};
  shape.insert(shape.end(), example_shape_.begin(), example_shape_.end());
  return shape;
}

void Dataset::SetNormalization(float shift, float scale) {
  normalized_ = true;
  shift_ = shift;
  scale_ = scale;
}

Tensor Dataset::Convert(const std::vector<int64_t>& rows) const {
  const int64_t n = static_cast<int64_t>(rows.size());
  const Device device = CurrentDevice();
  Tensor out;
  {
    const DeviceScope host(Device::Cpu());  // assembled in host memory, then moved to the device
    out = Tensor::Empty(BatchShape(n));
  }
  float* dst = out.data_f32();  // host memory: assembled on the CPU (above)
  const size_t item = static_cast<size_t>(example_size_);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = rows[static_cast<size_t>(i)];
    LOCKSTEP_REQUIRE(row >= 0 && row < size(), "data set: row " << row << " is out of range [0, " << size() << ")");
    float* o = dst + static_cast<size_t>(i) * item;
    if (bytes_) {
      // Byte pixels to [0, 1]: one float32 division by 255 per pixel.
      const uint8_t* src = bytes_->data() + static_cast<size_t>(row) * item;
      for (size_t k = 0; k < item; ++k) o[k] = static_cast<float>(src[k]) / 255.0f;
    } else if (item != 0) {
      // host memory: the data set's floats and this batch are CPU tensors
      memcpy(o, floats_.data_f32() + static_cast<size_t>(row) * item, item * sizeof(float));
    }
  }
  out = out.ToDevice(device);
  if (!normalized_) return out;
  NoGradGuard no_grad;
  const trace::PauseScope not_the_model;
  return MulScalar(AddScalar(out, shift_), scale_);
}

Tensor Dataset::Inputs(int64_t start, int64_t count) const {
  LOCKSTEP_REQUIRE(start >= 0 && count >= 0 && start <= size() && count <= size() - start,
                   "data set: rows [" << start << ", " << start << " + " << count << ") are out of range [0, " << size()
                                      << ")");
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) rows[static_cast<size_t>(i)] = start + i;
  return Convert(rows);
}

Tensor Dataset::Gather(const std::vector<int64_t>& rows) const { return Convert(rows); }

Tensor Dataset::Labels(int64_t start, int64_t count) const {
  LOCKSTEP_REQUIRE(start >= 0 && count >= 0 && start <= size() && count <= size() - start,
                   "data set: rows [" << start << ", " << start << " + " << count << ") are out of range [0, " << size()
                                      << ")");
  return labels_.Slice(0, start, start + count).Contiguous().ToDevice(CurrentDevice());
}

Dataset Dataset::Subset(int64_t start, int64_t count) const {
  LOCKSTEP_REQUIRE(start >= 0 && count >= 0 && start <= size() && count <= size() - start,
                   "data set: rows [" << start << ", " << start << " + " << count << ") are out of range [0, " << size()
                                      << ")");
  const Tensor labels = labels_.Slice(0, start, start + count).Clone();  // host memory, as every data set
  Dataset d;
  d.example_shape_ = example_shape_;
  d.example_size_ = example_size_;
  d.labels_ = labels;
  d.normalized_ = normalized_;
  d.shift_ = shift_;
  d.scale_ = scale_;
  const size_t item = static_cast<size_t>(example_size_);
  if (bytes_) {
    const uint8_t* first = bytes_->data() + static_cast<size_t>(start) * item;
    d.bytes_ = std::make_shared<const std::vector<uint8_t>>(first, first + static_cast<size_t>(count) * item);
  } else {
    d.floats_ = floats_.Slice(0, start, start + count).Clone();
  }
  return d;
}

std::string Dataset::Fingerprint() const {
  Sha256 h;
  const char* kind = bytes_ ? "bytes" : "float32";
  h.Update(kind, strlen(kind) + 1);
  for (const int64_t d : BatchShape(size())) h.UpdateValues(&d, 1);
  if (bytes_) {
    h.Update(bytes_->data(), bytes_->size());
  } else if (floats_.defined()) {
    h.UpdateValues(floats_.data_f32(), static_cast<size_t>(floats_.numel()));
  }
  h.UpdateValues(labels_.data_i64(), static_cast<size_t>(labels_.numel()));
  const float normalization[3] = {normalized_ ? 1.0f : 0.0f, shift_, scale_};
  h.UpdateValues(normalization, 3);
  return h.HexDigest();
}

namespace {

// Labels from an IDX label file's elements: non-negative integers.
Tensor LabelsFromIdx(const IdxHeader& header, const uint8_t* data, const std::string& what) {
  LOCKSTEP_REQUIRE_FORMAT(header.dims.size() == 1, what << ": expected labels [N], got " << header.dims.size()
                                                        << " dimensions");
  std::vector<float> values(static_cast<size_t>(header.count));
  IdxElementsToFloat(header, data, 0, values.size(), values.data());
  std::vector<int64_t> y(values.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const float v = values[i];
    LOCKSTEP_REQUIRE_FORMAT(v >= 0.0f && v < 1e6f && v == static_cast<float>(static_cast<int64_t>(v)),
                            what << ": label " << i << " is " << v << ", expected a non-negative integer");
    y[i] = static_cast<int64_t>(v);
  }
  return Tensor::FromInt64({static_cast<int64_t>(y.size())}, y);
}

void RequireImageShape(const IdxHeader& images, const IdxHeader& labels, const std::string& images_name,
                       const std::string& labels_name) {
  LOCKSTEP_REQUIRE_FORMAT(images.dims.size() == 3, images_name << ": expected images [N, rows, cols], got "
                                                               << images.dims.size() << " dimensions");
  LOCKSTEP_REQUIRE_FORMAT(labels.dims.size() == 1 && labels.dims[0] == images.dims[0],
                          labels_name << ": expected " << images.dims[0] << " labels to match " << images_name
                                      << ", got shape " << ShapeString(labels.dims));
}

// The examples of an IDX image file whose data region is read by read(offset, dst, n): bytes
// stay bytes, every other type becomes float32, chunk by chunk (never the whole file twice).
template <class ReadFn>
Dataset ImagesFromIdx(const IdxHeader& header, const Tensor& labels, const ReadFn& read) {
  const Shape example{1, header.dims[1], header.dims[2]};
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kResource, header.count * header.element_size <= SIZE_MAX,
                        "data set: " << header.count << " elements do not fit this platform's memory");
  if (header.type_code == kIdxUint8) {
    std::vector<uint8_t> bytes(static_cast<size_t>(header.count));
    read(0, bytes.data(), bytes.size());
    return Dataset::FromBytes(std::move(bytes), example, labels);
  }
  const DeviceScope host(Device::Cpu());  // a data set lives in host memory
  Tensor floats = Tensor::Empty({header.dims[0], 1, header.dims[1], header.dims[2]});
  constexpr size_t kChunkElements = size_t{1} << 20;
  std::vector<uint8_t> chunk(kChunkElements * header.element_size);
  for (uint64_t first = 0; first < header.count; first += kChunkElements) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkElements, header.count - first));
    read(first * header.element_size, chunk.data(), n * header.element_size);
    IdxElementsToFloat(header, chunk.data(), 0, n, floats.data_f32() + first);
  }
  return Dataset(floats, labels);
}

}  // namespace

Dataset LoadIdxDataset(const std::string& images_path, const std::string& labels_path, const CancelFn& cancelled) {
  const InputFile images(images_path), labels(labels_path);
  IdxHeader headers[2];
  const InputFile* files[2] = {&images, &labels};
  for (int i = 0; i < 2; ++i) {
    uint8_t head[1024];
    const size_t n = files[i]->size() < sizeof(head) ? static_cast<size_t>(files[i]->size()) : sizeof(head);
    files[i]->ReadAt(0, head, n);
    headers[i] = DecodeIdxHeader(head, n, files[i]->size(), files[i]->path());
  }
  RequireImageShape(headers[0], headers[1], images_path, labels_path);
  std::vector<uint8_t> label_data(static_cast<size_t>(headers[1].count * headers[1].element_size));
  labels.ReadAt(headers[1].data_offset, label_data.data(), label_data.size(), cancelled);
  const Tensor y = LabelsFromIdx(headers[1], label_data.data(), labels_path);
  return ImagesFromIdx(headers[0], y, [&](uint64_t offset, void* dst, size_t n) {
    images.ReadAt(headers[0].data_offset + offset, dst, n, cancelled);
  });
}

Dataset DatasetFromIdxBytes(const std::vector<uint8_t>& images, const std::vector<uint8_t>& labels,
                            const std::string& images_name, const std::string& labels_name) {
  const IdxHeader image_header = DecodeIdxHeader(images.data(), images.size(), images.size(), images_name);
  const IdxHeader label_header = DecodeIdxHeader(labels.data(), labels.size(), labels.size(), labels_name);
  RequireImageShape(image_header, label_header, images_name, labels_name);
  const Tensor y = LabelsFromIdx(label_header, labels.data() + label_header.data_offset, labels_name);
  const uint8_t* data = images.data() + image_header.data_offset;
  return ImagesFromIdx(image_header, y,
                       [&](uint64_t offset, void* dst, size_t n) { memcpy(dst, data + offset, n); });
}

std::vector<int64_t> EpochPermutation(uint64_t seed, int64_t n, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  if (n < 2) return order;
  const std::vector<uint32_t> words =
      host::PhiloxWords(seed, StreamId("shuffle"), static_cast<uint64_t>(epoch) * n, static_cast<size_t>(n - 1));
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
  GetBatchRows(epoch, batch, 0, -1, inputs, labels);
}

void DataLoader::GetBatchRows(int64_t epoch, int64_t batch, int64_t first_row, int64_t row_count, Tensor* inputs,
                              Tensor* labels) const {
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
  const int64_t batch_first = batch * batch_size_;
  const int64_t batch_count = n - batch_first < batch_size_ ? n - batch_first : batch_size_;
  if (row_count < 0) row_count = batch_count;  // the whole batch
  LOCKSTEP_REQUIRE(first_row >= 0 && first_row + row_count <= batch_count,
                   "DataLoader: rows [" << first_row << ", " << first_row + row_count << ") are outside a batch of "
                                        << batch_count);
  const int64_t first = batch_first + first_row, count = row_count;
  const std::vector<int64_t> rows(order_.begin() + first, order_.begin() + first + count);
  *inputs = data_.Gather(rows);
  const int64_t* all = data_.labels().data_i64();  // host memory: labels are on the CPU
  std::vector<int64_t> picked(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) picked[static_cast<size_t>(i)] = all[rows[static_cast<size_t>(i)]];
  *labels = Tensor::FromInt64({count}, picked);
}

}  // namespace lockstep
