#include "core/tensor.h"

#include <stdlib.h>
#include <string.h>

#include <sstream>

#include "core/autograd.h"
#include "core/error.h"

namespace lockstep {

Storage::Storage(size_t bytes, Device device)
    : allocator_(AllocatorOf(device)), device_(device), bytes_(bytes) {
  // The allocators round up to 64 bytes: a size within 64 of the address space is refused here.
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kResource, bytes <= SIZE_MAX - 64,
                        "cannot allocate " << bytes << " bytes: more than this platform can address");
  data_ = static_cast<uint8_t*>(allocator_.Allocate(bytes));
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kResource, data_ != nullptr,
                        "out of memory allocating " << bytes << " bytes on " << KernelsOf(device).device_name);
#if defined(LOCKSTEP_POISON_NEW_TENSORS)
  // The sanitizer build: every new storage starts as 0xFF bytes, a float32 NaN (and -1 as an
  // index), so an element that a kernel leaves unwritten turns into NaNs in the hashes.
  if (device.type == Device::Type::kCpu) memset(data_, 0xFF, bytes);
#endif
}

Storage::~Storage() { allocator_.Release(data_); }

namespace {

// Calls f(element_offset) for every element of a strided view, in row-major order.
template <class Func>
void ForEachOffset(const Shape& shape, const Shape& strides, int64_t offset, const Func& f) {
  const int64_t n = NumElements(shape);
  if (n == 0) return;
  const size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  int64_t at = offset;
  for (int64_t count = 0; count < n; ++count) {
    f(at);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) {
        at += strides[d];
        break;
      }
      at -= strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

// The bytes of `numel` elements of `dtype`, computed in 64 bits and refused (kind kResource) when
// they exceed what size_t addresses: 4 GiB in 32-bit WebAssembly, where a wrapped product once gave
// a tensor of 2^30 elements a zero-byte buffer.
size_t StorageBytes(const Shape& shape, DType dtype) {
  ValidateShape(shape, "tensor creation");
  const uint64_t numel = static_cast<uint64_t>(NumElements(shape));
  const uint64_t element = DTypeSize(dtype);
  LOCKSTEP_REQUIRE_KIND(ErrorKind::kResource, numel <= (uint64_t{SIZE_MAX} - 64) / element,
                        "a tensor of shape " << ShapeString(shape) << " (" << numel << " elements of "
                                             << DTypeString(dtype) << ") is larger than this platform can "
                                             << "address (" << uint64_t{SIZE_MAX} << " bytes)");
  return static_cast<size_t>(numel * element);
}

std::shared_ptr<TensorImpl> NewImpl(const Shape& shape, DType dtype, Device device = CurrentDevice()) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(StorageBytes(shape, dtype), device);
  impl->shape = shape;
  impl->strides = ContiguousStrides(shape);
  impl->dtype = dtype;
  return impl;
}

// Bytes from host memory into a tensor's storage, through its device's copy.
void Upload(const Tensor& t, const void* host, size_t bytes) {
  if (bytes == 0) return;
  const backend::KernelTable& kernels = KernelsOf(t.device());
  CheckKernel(kernels, kernels.copy_to_device(t.impl()->storage->data(), host, bytes), "copy to the device");
}

// 0, 1, ..., end - 1 as T into a fresh tensor.
template <class T>
void UploadRange(const Tensor& t, int64_t end) {
  std::vector<T> values(static_cast<size_t>(end));
  for (int64_t i = 0; i < end; ++i) values[static_cast<size_t>(i)] = static_cast<T>(i);
  Upload(t, values.data(), values.size() * sizeof(T));
}

// Every 32-bit word of a fresh tensor's storage set to `word`, by its device's fill kernel.
void FillWords(const Tensor& t, uint32_t word) {
  const size_t words = static_cast<size_t>(t.numel()) * DTypeSize(t.dtype()) / 4;
  if (words == 0) return;
  const backend::KernelTable& kernels = KernelsOf(t.device());
  CheckKernel(kernels, kernels.fill(word, reinterpret_cast<uint32_t*>(t.impl()->storage->data()), words), "fill");
}

// The tensor's elements in host memory: itself on the CPU, else a contiguous copy fetched from
// its device.
Tensor OnHost(const Tensor& t) { return t.device() == Device::Cpu() ? t : t.ToDevice(Device::Cpu()); }

}  // namespace

Tensor Tensor::Empty(const Shape& shape, DType dtype) { return Tensor(NewImpl(shape, dtype)); }

Tensor Tensor::Zeros(const Shape& shape, DType dtype) {
  Tensor t = Empty(shape, dtype);
  FillWords(t, 0);
  return t;
}

Tensor Tensor::Ones(const Shape& shape) { return Full(shape, 1.0f); }

Tensor Tensor::Full(const Shape& shape, float value) {
  Tensor t = Empty(shape);
  uint32_t word;
  memcpy(&word, &value, 4);
  FillWords(t, word);
  return t;
}

Tensor Tensor::Arange(int64_t end, DType dtype) {
  LOCKSTEP_REQUIRE(end >= 0, "arange: end must be >= 0, got " << end);
  Tensor t = Empty({end}, dtype);
  if (dtype == DType::kFloat32) UploadRange<float>(t, end);
  else if (dtype == DType::kInt32) UploadRange<int32_t>(t, end);
  else UploadRange<int64_t>(t, end);
  return t;
}

Tensor Tensor::FromVector(const Shape& shape, const std::vector<float>& values) {
  ValidateShape(shape, "FromVector");
  LOCKSTEP_REQUIRE(NumElements(shape) == static_cast<int64_t>(values.size()),
                   "FromVector: shape " << ShapeString(shape) << " holds " << NumElements(shape)
                                        << " elements, but " << values.size() << " values were given");
  Tensor t = Empty(shape);
  Upload(t, values.data(), values.size() * 4);
  return t;
}

Tensor Tensor::FromInt64(const Shape& shape, const std::vector<int64_t>& values) {
  ValidateShape(shape, "FromInt64");
  LOCKSTEP_REQUIRE(NumElements(shape) == static_cast<int64_t>(values.size()),
                   "FromInt64: shape " << ShapeString(shape) << " holds " << NumElements(shape)
                                       << " elements, but " << values.size() << " values were given");
  Tensor t = Empty(shape, DType::kInt64);
  Upload(t, values.data(), values.size() * 8);
  return t;
}

int64_t Tensor::size(int64_t d) const { return impl_->shape[NormalizeDim(d, dim(), "size")]; }

bool Tensor::is_contiguous() const {
  return impl_->strides == ContiguousStrides(impl_->shape) || numel() <= 1;
}

// The typed data accessors are public: a tensor of another type is the caller's mistake (an
// Error naming both types), never an abort.
void Tensor::ThrowUndefined() {
  throw Error("the tensor is undefined (default-constructed or moved from): it holds no data");
}

void Tensor::RequireDType(DType expected) const {
  LOCKSTEP_REQUIRE(Impl().dtype == expected, "expected a " << DTypeString(expected) << " tensor, got "
                                                           << DTypeString(impl_->dtype) << " "
                                                           << ShapeString(impl_->shape));
}
float* Tensor::data_f32() const {
  RequireDType(DType::kFloat32);
  return reinterpret_cast<float*>(impl_->storage->data()) + impl_->offset;
}
int32_t* Tensor::data_i32() const {
  RequireDType(DType::kInt32);
  return reinterpret_cast<int32_t*>(impl_->storage->data()) + impl_->offset;
}
int64_t* Tensor::data_i64() const {
  RequireDType(DType::kInt64);
  return reinterpret_cast<int64_t*>(impl_->storage->data()) + impl_->offset;
}

std::vector<float> Tensor::ToVector() const {
  std::vector<float> out;
  out.reserve(static_cast<size_t>(numel()));
  const Tensor host = OnHost(*this);
  const TensorImpl& h = *host.impl();
  const uint8_t* base = h.storage->data();  // host memory: OnHost's copy
  ForEachOffset(h.shape, h.strides, h.offset, [&](int64_t at) {
    switch (h.dtype) {
      case DType::kFloat32: out.push_back(reinterpret_cast<const float*>(base)[at]); break;
      case DType::kInt32: out.push_back(static_cast<float>(reinterpret_cast<const int32_t*>(base)[at])); break;
      case DType::kInt64: out.push_back(static_cast<float>(reinterpret_cast<const int64_t*>(base)[at])); break;
    }
  });
  return out;
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(numel()));
  const Tensor host = OnHost(*this);
  const TensorImpl& h = *host.impl();
  const uint8_t* base = h.storage->data();  // host memory: OnHost's copy
  ForEachOffset(h.shape, h.strides, h.offset, [&](int64_t at) {
    switch (h.dtype) {
      case DType::kFloat32: {
        const float v = reinterpret_cast<const float*>(base)[at];
        // Clamp, NaN -> 0 (docs/numerics.md, rule 6).
        out.push_back(v != v ? 0 : v >= 9.2233720368547758e18f ? INT64_MAX
                                 : v <= -9.2233720368547758e18f ? INT64_MIN
                                                                : static_cast<int64_t>(v));
        break;
      }
      case DType::kInt32: out.push_back(reinterpret_cast<const int32_t*>(base)[at]); break;
      case DType::kInt64: out.push_back(reinterpret_cast<const int64_t*>(base)[at]); break;
    }
  });
  return out;
}

float Tensor::item() const {
  LOCKSTEP_REQUIRE(numel() == 1, "item: the tensor has " << numel() << " elements "
                                     << ShapeString(shape()) << ", expected exactly 1");
  return ToVector()[0];
}

Tensor Tensor::MakeView(const Shape& shape, const Shape& strides, int64_t offset) const {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->offset = offset;
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = impl_->dtype;
  return Tensor(impl);
}

namespace {

// The requested shape with its one -1 inferred; it must hold exactly numel elements.
Shape InferShape(const Shape& requested, int64_t numel, const Shape& from, const char* op) {
  Shape shape = requested;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      LOCKSTEP_REQUIRE(infer < 0, op << ": only one dimension may be -1, got " << ShapeString(requested));
      infer = static_cast<int64_t>(i);
    } else {
      LOCKSTEP_REQUIRE(shape[i] >= 0, op << ": invalid shape " << ShapeString(requested));
      LOCKSTEP_REQUIRE(shape[i] == 0 || known <= INT64_MAX / shape[i],
                       op << ": shape " << ShapeString(requested) << " has too many elements");
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    LOCKSTEP_REQUIRE(known != 0 && numel % known == 0,
                     op << ": cannot reshape " << ShapeString(from) << " into " << ShapeString(requested));
    shape[infer] = numel / known;
  }
  LOCKSTEP_REQUIRE(NumElements(shape) == numel, op << ": cannot reshape " << ShapeString(from) << " (" << numel
                                                   << " elements) into " << ShapeString(requested));
  return shape;
}

// Strides that let a view of `shape`/`strides` take new_shape without copying, or false when a
// new dimension would span memory that is not evenly strided (PyTorch's computeStride).
bool ViewStrides(const Shape& shape, const Shape& strides, const Shape& new_shape, Shape* out) {
  out->assign(new_shape.size(), 0);
  if (NumElements(shape) == 0 || shape.empty()) {
    *out = ContiguousStrides(new_shape);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= shape[tensor_d];
    if (tensor_d == 0 ||
        (shape[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        (*out)[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor Tensor::Reshape(const Shape& new_shape_in) const {
  const Shape new_shape = InferShape(new_shape_in, numel(), shape(), "reshape");
  const Tensor source = Contiguous();
  Tensor out = source.MakeView(new_shape, ContiguousStrides(new_shape), source.impl_->offset);
  if (NeedsGrad({source})) {
    Node& node = RecordNode(out, OpKind::kView, {source});
    node.shapes = {source.shape()};
  }
  return out;
}

Tensor Tensor::View(const Shape& new_shape_in) const {
  const Shape new_shape = InferShape(new_shape_in, numel(), shape(), "view");
  Shape new_strides;
  LOCKSTEP_REQUIRE(ViewStrides(shape(), strides(), new_shape, &new_strides),
                   "view: shape " << ShapeString(new_shape_in) << " is not compatible with the tensor's shape "
                                  << ShapeString(shape()) << " and strides " << ShapeString(strides())
                                  << " (a dimension would span memory that is not evenly strided, e.g. after a "
                                     "transpose); use reshape(), which copies when it must");
  Tensor out = MakeView(new_shape, new_strides, impl_->offset);
  if (NeedsGrad({*this})) {
    Node& node = RecordNode(out, OpKind::kView, {*this});
    node.shapes = {shape()};
  }
  return out;
}

Tensor Tensor::Permute(const std::vector<int64_t>& dims) const {
  LOCKSTEP_REQUIRE(static_cast<int64_t>(dims.size()) == dim(),
                   "permute: " << dims.size() << " dimensions given for a tensor of rank " << dim());
  Shape new_shape(dims.size()), new_strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  std::vector<int64_t> normalized(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = NormalizeDim(dims[i], dim(), "permute");
    LOCKSTEP_REQUIRE(!seen[d], "permute: dimension " << d << " appears twice");
    seen[d] = true;
    normalized[i] = d;
    new_shape[i] = shape()[d];
    new_strides[i] = strides()[d];
  }
  Tensor out = MakeView(new_shape, new_strides, impl_->offset);
  if (NeedsGrad({*this})) {
    Node& node = RecordNode(out, OpKind::kPermute, {*this});
    node.ints = normalized;
  }
  return out;
}

Tensor Tensor::Transpose(int64_t dim0, int64_t dim1) const {
  std::vector<int64_t> dims(static_cast<size_t>(dim()));
  for (int64_t i = 0; i < dim(); ++i) dims[i] = i;
  std::swap(dims[NormalizeDim(dim0, dim(), "transpose")], dims[NormalizeDim(dim1, dim(), "transpose")]);
  return Permute(dims);
}

Tensor Tensor::Slice(int64_t d_in, int64_t start, int64_t end, int64_t step) const {
  const int64_t d = NormalizeDim(d_in, dim(), "slice");
  const int64_t extent = shape()[d];
  LOCKSTEP_REQUIRE(step >= 1, "slice: step must be >= 1, got " << step);
  if (start < 0) start += extent;
  if (end < 0) end += extent;
  start = start < 0 ? 0 : (start > extent ? extent : start);
  end = end < start ? start : (end > extent ? extent : end);
  Shape new_shape = shape(), new_strides = strides();
  new_shape[d] = (end - start + step - 1) / step;
  new_strides[d] = strides()[d] * step;
  Tensor out = MakeView(new_shape, new_strides, impl_->offset + start * strides()[d]);
  if (NeedsGrad({*this})) {
    Node& node = RecordNode(out, OpKind::kSlice, {*this});
    node.ints = {d, start, step};
  }
  return out;
}

Tensor Tensor::Squeeze(int64_t d_in) const {
  const int64_t d = NormalizeDim(d_in, dim(), "squeeze");
  LOCKSTEP_REQUIRE(shape()[d] == 1, "squeeze: dimension " << d << " of " << ShapeString(shape())
                                                           << " has extent " << shape()[d] << ", expected 1");
  Shape new_shape = shape();
  new_shape.erase(new_shape.begin() + d);
  return Reshape(new_shape);
}

Tensor Tensor::Unsqueeze(int64_t d_in) const {
  const int64_t d = NormalizeDim(d_in, dim() + 1, "unsqueeze");
  Shape new_shape = shape();
  new_shape.insert(new_shape.begin() + d, 1);
  return Reshape(new_shape);
}

Tensor Tensor::Select(int64_t d, int64_t index) const {
  const int64_t nd = NormalizeDim(d, dim(), "select");
  LOCKSTEP_REQUIRE(index >= -shape()[nd] && index < shape()[nd],
                   "select: index " << index << " is out of range for dimension " << nd << " of "
                                    << ShapeString(shape()));
  const int64_t i = index < 0 ? index + shape()[nd] : index;
  return Slice(nd, i, i + 1).Squeeze(nd);
}

Tensor Tensor::Expand(const Shape& target) const {
  LOCKSTEP_REQUIRE(target.size() >= shape().size(),
                   "expand: cannot expand " << ShapeString(shape()) << " to fewer dimensions " << ShapeString(target));
  const size_t lead = target.size() - shape().size();
  Shape new_strides(target.size(), 0);
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) continue;
    const int64_t have = shape()[i - lead];
    LOCKSTEP_REQUIRE(have == target[i] || have == 1,
                     "expand: cannot expand " << ShapeString(shape()) << " to " << ShapeString(target));
    new_strides[i] = have == 1 && target[i] != 1 ? 0 : strides()[i - lead];
  }
  Tensor out = MakeView(target, new_strides, impl_->offset);
  if (NeedsGrad({*this})) {
    Node& node = RecordNode(out, OpKind::kExpand, {*this});
    node.shapes = {shape()};
  }
  return out;
}

Tensor Tensor::Flatten(int64_t start_in, int64_t end_in) const {
  if (dim() == 0) return Reshape({1});
  const int64_t start = NormalizeDim(start_in, dim(), "flatten");
  const int64_t end = NormalizeDim(end_in, dim(), "flatten");
  LOCKSTEP_REQUIRE(start <= end, "flatten: start dimension " << start << " is after end " << end);
  Shape new_shape(shape().begin(), shape().begin() + start);
  int64_t merged = 1;
  for (int64_t d = start; d <= end; ++d) merged *= shape()[d];
  new_shape.push_back(merged);
  new_shape.insert(new_shape.end(), shape().begin() + end + 1, shape().end());
  return Reshape(new_shape);
}

namespace {

// The strided copy of a view's elements as 32-bit words (an 8-byte element is two words, one more
// dimension), from the view's layout to `to_strides` (in elements) at dst; false when it has more
// dimensions than a strided copy takes.
bool WordCopy(const TensorImpl& t, const Shape& to_strides, const uint8_t* src, uint8_t* dst,
              backend::StridedCopyCall* call) {
  const int64_t words = static_cast<int64_t>(DTypeSize(t.dtype) / 4);
  const int64_t rank = static_cast<int64_t>(t.shape.size()) + (words > 1 ? 1 : 0);
  if (rank > backend::kMaxCopyRank) return false;
  *call = backend::StridedCopyCall{};
  call->rank = static_cast<int32_t>(rank);
  for (size_t d = 0; d < t.shape.size(); ++d) {
    call->shape[d] = t.shape[d];
    call->src_strides[d] = t.strides[d] * words;
    call->dst_strides[d] = to_strides[d] * words;
  }
  if (words > 1) {
    call->shape[rank - 1] = words;
    call->src_strides[rank - 1] = call->dst_strides[rank - 1] = 1;
  }
  call->src = src;
  call->dst = dst;
  return true;
}

// Writes view's elements, in row-major order, contiguously to dst, memory of the view's device, by
// that device's strided copy (or, on the CPU, the host's loop where a strided copy cannot).
void CopyElements(const Tensor& view, uint8_t* dst) {
  const TensorImpl& t = *view.impl();
  const size_t size = DTypeSize(t.dtype);
  const uint8_t* base = t.storage->data() + t.offset * size;
  const backend::KernelTable& kernels = KernelsOf(view.device());
  backend::StridedCopyCall call;
  if (view.is_contiguous()) {  // one run of words
    const TensorImpl run{nullptr, 0, {view.numel() * static_cast<int64_t>(size / 4)}, {1}, DType::kFloat32};
    WordCopy(run, {1}, base, dst, &call);
    CheckKernel(kernels, kernels.strided_copy(&call), "copy");
  } else if (WordCopy(t, ContiguousStrides(t.shape), base, dst, &call)) {
    CheckKernel(kernels, kernels.strided_copy(&call), "copy");
  } else {
    LOCKSTEP_REQUIRE(view.device() == Device::Cpu(), "copy: a view of " << view.dim() << " dimensions on "
                                                         << view.device().ToString() << " (at most "
                                                         << backend::kMaxCopyRank - 1 << " on a device)");
    int64_t i = 0;
    // host memory: the CPU-only fallback (required above)
    ForEachOffset(t.shape, t.strides, 0, [&](int64_t at) { memcpy(dst + (i++) * size, base + at * size, size); });
  }
}

}  // namespace

Tensor Tensor::Clone() const {
  Tensor out(NewImpl(shape(), dtype(), device()));  // on this tensor's device
  CopyElements(*this, out.impl_->storage->data());
  if (NeedsGrad({*this})) RecordNode(out, OpKind::kCopy, {*this});
  return out;
}

void Tensor::CopyFrom(const Tensor& src) const {
  LOCKSTEP_REQUIRE(src.shape() == shape() && src.dtype() == dtype(),
                   "copy: cannot copy a " << DTypeName(src.dtype()) << " tensor of shape "
                                          << ShapeString(src.shape()) << " into a " << DTypeName(dtype())
                                          << " tensor of shape " << ShapeString(shape()));
  // A contiguous source on this tensor's device, then the device's strided copy into this view.
  Tensor source = src.device() == device() ? src : src.ToDevice(device());
  if (!source.is_contiguous()) source = source.Detach().Clone();
  const size_t size = DTypeSize(dtype());
  const uint8_t* from = source.impl_->storage->data() + source.impl_->offset * size;
  uint8_t* to = impl_->storage->data() + impl_->offset * size;
  backend::StridedCopyCall call;
  // The source's layout is contiguous: a view of this shape with contiguous strides.
  const TensorImpl contiguous{nullptr, 0, shape(), ContiguousStrides(shape()), dtype()};
  if (WordCopy(contiguous, strides(), from, to, &call)) {
    const backend::KernelTable& kernels = KernelsOf(device());
    CheckKernel(kernels, kernels.strided_copy(&call), "copy");
    return;
  }
  LOCKSTEP_REQUIRE(device() == Device::Cpu(), "copy: a view of " << dim() << " dimensions on " << device().ToString()
                                                                  << " (at most " << backend::kMaxCopyRank - 1
                                                                  << " on a device)");
  int64_t i = 0;
  // host memory: the CPU-only fallback (required above)
  ForEachOffset(shape(), strides(), 0, [&](int64_t at) { memcpy(to + at * size, from + (i++) * size, size); });
}

Tensor Tensor::Contiguous() const { return is_contiguous() ? *this : Clone(); }

Tensor Tensor::ToDevice(Device target) const {
  if (device() == target) return *this;
  const Tensor source = is_contiguous() ? *this : Detach().Clone();  // contiguous, on its own device
  Tensor out(NewImpl(shape(), dtype(), target));
  const size_t bytes = static_cast<size_t>(numel()) * DTypeSize(dtype());
  if (bytes == 0) return out;
  const uint8_t* from = source.impl_->storage->data() + source.impl_->offset * DTypeSize(dtype());
  uint8_t* to = out.impl_->storage->data();
  const backend::KernelTable& from_kernels = KernelsOf(device());
  const backend::KernelTable& to_kernels = KernelsOf(target);
  if (target == Device::Cpu()) {
    CheckKernel(from_kernels, from_kernels.copy_to_host(to, from, bytes), "copy to the host");
  } else if (device() == Device::Cpu()) {
    CheckKernel(to_kernels, to_kernels.copy_to_device(to, from, bytes), "copy to the device");
  } else {  // between two devices, through host memory
    std::vector<uint8_t> staging(bytes);
    CheckKernel(from_kernels, from_kernels.copy_to_host(staging.data(), from, bytes), "copy to the host");
    CheckKernel(to_kernels, to_kernels.copy_to_device(to, staging.data(), bytes), "copy to the device");
  }
  return out;
}

Tensor Tensor::To(DType target) const {
  if (target == dtype()) return *this;
  // Converted in host memory, then copied to the current device.
  Tensor out = Empty(shape(), target);
  if (target == DType::kFloat32) {
    const std::vector<float> v = ToVector();
    Upload(out, v.data(), v.size() * 4);
  } else if (target == DType::kInt64) {
    const std::vector<int64_t> v = ToInt64Vector();
    Upload(out, v.data(), v.size() * 8);
  } else {
    const std::vector<int64_t> v = ToInt64Vector();
    std::vector<int32_t> narrow(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      narrow[i] = static_cast<int32_t>(v[i] > INT32_MAX ? INT32_MAX : v[i] < INT32_MIN ? INT32_MIN : v[i]);
    }
    Upload(out, narrow.data(), narrow.size() * 4);
  }
  return out;
}

Tensor& Tensor::RequiresGrad(bool requires) {
  LOCKSTEP_REQUIRE(!requires || dtype() == DType::kFloat32,
                   "RequiresGrad: only float32 tensors can require gradients, this one is " << DTypeName(dtype()));
  LOCKSTEP_REQUIRE(!impl_->grad_fn, "RequiresGrad: only leaf tensors can be marked; this one was computed by "
                                        << OpKindName(impl_->grad_fn->kind) << " (use Detach() first)");
  impl_->requires_grad = requires;
  return *this;
}

Tensor Tensor::Detach() const { return MakeView(shape(), strides(), impl_->offset); }

void Tensor::Backward(const Tensor& grad_output, bool retain_graph) const {
  RunBackward(*this, grad_output, retain_graph);
}

std::string Tensor::ToString(int64_t max_elements) const {
  std::ostringstream out;
  out << "tensor(" << ShapeString(shape()) << ", " << DTypeName(dtype());
  if (requires_grad()) out << ", requires_grad";
  out << ")\n[";
  const std::vector<float> v = ToVector();
  for (size_t i = 0; i < v.size() && static_cast<int64_t>(i) < max_elements; ++i) {
    out << (i ? ", " : "") << v[i];
  }
  if (static_cast<int64_t>(v.size()) > max_elements) out << ", ... (" << v.size() << " in all)";
  out << "]";
  return out.str();
}

}  // namespace lockstep
