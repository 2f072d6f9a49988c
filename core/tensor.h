// Tensor: a strided view of shared storage, float32, int32 or int64, with autograd metadata.
// Copies of a Tensor share everything (like PyTorch's Python objects); Clone() copies the data.
// Compute ops read any strided view and write fresh contiguous results.
#ifndef LOCKSTEP_CORE_TENSOR_H_
#define LOCKSTEP_CORE_TENSOR_H_

#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

#include "core/backend/device.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace lockstep {

struct Node;

// Bytes shared by views; 64-byte aligned; allocated on the current device (core/backend/device.h)
// through its caching allocator.
class Storage {
 public:
  explicit Storage(size_t bytes) : Storage(bytes, CurrentDevice()) {}
  Storage(size_t bytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  uint8_t* data() { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  backend::CachingAllocator& allocator_;  // whose Allocate made data_
  Device device_;
  uint8_t* data_;
  size_t bytes_;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape, strides;
  DType dtype = DType::kFloat32;
  // Autograd: a leaf that requires grad accumulates into grad; a computed tensor has grad_fn.
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;
  std::shared_ptr<Node> grad_fn;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Creation (contiguous, fresh storage).
  static Tensor Empty(const Shape& shape, DType dtype = DType::kFloat32);
  static Tensor Zeros(const Shape& shape, DType dtype = DType::kFloat32);
  static Tensor Ones(const Shape& shape);
  static Tensor Full(const Shape& shape, float value);
  static Tensor Arange(int64_t end, DType dtype = DType::kInt64);
  static Tensor FromVector(const Shape& shape, const std::vector<float>& values);
  static Tensor FromInt64(const Shape& shape, const std::vector<int64_t>& values);
  static Tensor Scalar(float value) { return FromVector({}, {value}); }

  bool defined() const { return impl_ != nullptr; }
  // Every accessor below throws lockstep::Error on an undefined tensor (default-constructed or
  // moved from) instead of dereferencing nothing.
  const Shape& shape() const { return Impl().shape; }
  const Shape& strides() const { return Impl().strides; }
  int64_t dim() const { return static_cast<int64_t>(Impl().shape.size()); }
  int64_t size(int64_t d) const;
  int64_t numel() const { return NumElements(Impl().shape); }
  DType dtype() const { return Impl().dtype; }
  bool is_contiguous() const;
  bool same(const Tensor& other) const { return impl_ == other.impl_; }
  Device device() const { return Impl().storage->device(); }

  // Raw element pointers at the view's first element (respect strides unless contiguous); a
  // tensor of another dtype throws, naming both.
  float* data_f32() const;
  int32_t* data_i32() const;
  int64_t* data_i64() const;

  // Copies out in row-major order (any dtype converted to float / int64).
  std::vector<float> ToVector() const;
  std::vector<int64_t> ToInt64Vector() const;
  float item() const;  // the single element of a one-element float tensor

  // Views (share storage; differentiable).
  Tensor Reshape(const Shape& shape) const;  // copies first when not contiguous
  // A view without copying; throws when the strides do not allow one (after a transpose, say),
  // as PyTorch's view() does: reshape() is the call that copies.
  Tensor View(const Shape& shape) const;
  Tensor Transpose(int64_t dim0, int64_t dim1) const;
  Tensor Permute(const std::vector<int64_t>& dims) const;
  Tensor Slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor Squeeze(int64_t dim) const;
  Tensor Unsqueeze(int64_t dim) const;
  Tensor Expand(const Shape& shape) const;
  Tensor Flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor Select(int64_t dim, int64_t index) const;  // Slice then Squeeze

  Tensor Contiguous() const;  // this when already contiguous, else a differentiable copy
  Tensor Clone() const;       // always a fresh contiguous copy (differentiable)
  Tensor To(DType dtype) const;  // conversion; float->int rounds toward zero, clamps, NaN -> 0
  // A contiguous copy on `device` (this tensor itself when it is already there), without history.
  Tensor ToDevice(Device device) const;
  // Writes src's elements (same shape and dtype) into this view, in place, without history.
  void CopyFrom(const Tensor& src) const;

  // Autograd.
  Tensor& RequiresGrad(bool requires = true);
  bool requires_grad() const { return Impl().requires_grad; }
  Tensor grad() const { return Tensor(Impl().grad); }
  void SetGrad(const Tensor& grad) { Impl().grad = grad.impl_; }
  void ZeroGrad() { Impl().grad.reset(); }
  const std::shared_ptr<Node>& grad_fn() const { return Impl().grad_fn; }
  Tensor Detach() const;  // shares data, no history
  // Gradients of this tensor into the leaves' grad(). Without retain_graph the graph's saved
  // results are freed and a second backward through it throws (PyTorch's rule).
  void Backward(const Tensor& grad_output = Tensor(), bool retain_graph = false) const;

  std::string ToString(int64_t max_elements = 64) const;
  const std::shared_ptr<TensorImpl>& impl() const { return impl_; }

 private:
  Tensor MakeView(const Shape& shape, const Shape& strides, int64_t offset) const;
  TensorImpl& Impl() const {
    if (impl_ == nullptr) ThrowUndefined();
    return *impl_;
  }
  [[noreturn]] static void ThrowUndefined();
  void RequireDType(DType expected) const;
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_TENSOR_H_
