#include "bindings/python/src/numpy_bridge.h"

#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings/python/src/engine.h"
#include "core/error.h"

namespace lockstep {
namespace python {

namespace {

DType DTypeOfArray(const py::array& a) {
  const py::dtype dt = a.dtype();
  if (dt.kind() == 'f' && dt.itemsize() == 4) return DType::kFloat32;
  if (dt.kind() == 'i' && dt.itemsize() == 4) return DType::kInt32;
  if (dt.kind() == 'i' && dt.itemsize() == 8) return DType::kInt64;
  throw py::type_error("from_numpy: lockstep tensors hold float32, int32 or int64, got an array of dtype " +
                       py::str(static_cast<py::object>(dt)).cast<std::string>() +
                       " (convert it first, e.g. array.astype(numpy.float32))");
}

// Copies `dims` dimensions of a strided source (byte strides, any sign) into contiguous dst.
void StridedCopy(const uint8_t* src, const ssize_t* shape, const ssize_t* strides, int dims, size_t item,
                 uint8_t** dst) {
  if (dims == 0) {
    memcpy(*dst, src, item);
    *dst += item;
    return;
  }
  if (dims == 1 && strides[0] == static_cast<ssize_t>(item)) {
    const size_t n = static_cast<size_t>(shape[0]) * item;
    memcpy(*dst, src, n);
    *dst += n;
    return;
  }
  for (ssize_t i = 0; i < shape[0]; ++i) StridedCopy(src + i * strides[0], shape + 1, strides + 1, dims - 1, item, dst);
}

}  // namespace

Tensor TensorFromArray(const py::array& a) {
  const DType dtype = DTypeOfArray(a);
  if (!a.dtype().attr("isnative").cast<bool>()) {
    throw py::type_error("from_numpy: the array's bytes are not in this machine's byte order (use "
                         "array.astype(array.dtype.newbyteorder('=')))");
  }
  // Everything read from the array object before the GIL may be released.
  const Shape shape(a.shape(), a.shape() + a.ndim());
  const std::vector<ssize_t> extents(a.shape(), a.shape() + a.ndim()), strides(a.strides(), a.strides() + a.ndim());
  const auto* src = static_cast<const uint8_t*>(a.data());
  const size_t item = DTypeSize(dtype);
  return Sized(NumElements(shape), [&] {
    const Device device = CurrentDevice();
    Tensor t;
    {
      const DeviceScope host(Device::Cpu());  // copied in host memory, then moved to the current device
      t = Tensor::Empty(shape, dtype);
    }
    if (t.numel() == 0) return t.ToDevice(device);
    uint8_t* dst = t.impl()->storage->data();
    StridedCopy(src, extents.data(), strides.data(), static_cast<int>(extents.size()), item, &dst);
    return t.ToDevice(device);
  });
}

py::array ArrayView(const Tensor& t) {
  LOCKSTEP_REQUIRE(t.device() == Device::Cpu(), "numpy: the tensor is on " << t.device().ToString()
                                                                          << "; move it with .cpu() first");
  const TensorImpl& impl = *t.impl();
  const size_t item = DTypeSize(impl.dtype);
  std::vector<ssize_t> shape(impl.shape.begin(), impl.shape.end()), strides;
  for (int64_t s : impl.strides) strides.push_back(static_cast<ssize_t>(s * static_cast<int64_t>(item)));
  py::dtype dtype = impl.dtype == DType::kFloat32 ? py::dtype::of<float>()
                    : impl.dtype == DType::kInt32 ? py::dtype::of<int32_t>()
                                                  : py::dtype::of<int64_t>();
  auto* owner = new std::shared_ptr<Storage>(impl.storage);
  py::capsule base(owner, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  uint8_t* data = impl.storage->data() + impl.offset * static_cast<int64_t>(item);
  return py::array(dtype, shape, strides, data, base);
}

Shape ShapeFrom(const py::handle& sequence, const char* what, bool allow_infer) {
  Shape shape;
  for (const py::handle item : py::iter(sequence)) {
    if (!PyLong_Check(item.ptr()) && !PyIndex_Check(item.ptr())) {
      throw py::type_error(std::string(what) + ": a size must be an int, got " +
                           py::str(py::type::handle_of(item).attr("__name__")).cast<std::string>());
    }
    const int64_t d = py::int_(py::reinterpret_borrow<py::object>(item)).cast<int64_t>();
    LOCKSTEP_REQUIRE(d >= (allow_infer ? -1 : 0), what << ": sizes must be >= 0" << (allow_infer ? " (or -1)" : "")
                                                       << ", got " << d);
    shape.push_back(d);
  }
  return shape;
}

py::tuple ShapeTuple(const Shape& shape) {
  py::tuple out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out[i] = py::int_(shape[i]);
  return out;
}

}  // namespace python
}  // namespace lockstep
