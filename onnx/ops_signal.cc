// Signal-processing operators: the generalized cosine windows HannWindow, HammingWindow and
// BlackmanWindow, computed with lockstep's correctly rounded cosine.
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) for n < size, N = size (periodic) or size - 1
// (symmetric), each angle n times the float32 nearest 2 pi / N (or 4 pi / N), then the float32
// operations in that order.
OpSpec CosineWindow(const char* name, double a0, double a1, double a2) {
  return {name, 17, [name, a0, a1, a2](const NodeView& node) -> Kernel {
            node.RequireInputs(1, 1);
            const bool periodic = node.Int("periodic", 1) != 0;
            Elem out = Elem::kFloat;
            const int32_t type = static_cast<int32_t>(node.Int("output_datatype", kFloat));
            if (!ElemFromDataType(type, &out) || out == Elem::kBool) node.Unsupported("output_datatype " + DataTypeName(type));
            return [name, a0, a1, a2, periodic, out](const Values& in, RunContext&) -> Values {
              const Value& size_value = Input(in, 0, name);
              LOCKSTEP_REQUIRE(size_value.is_int() && size_value.tensor.numel() == 1,
                               name << ": size must be one integer, got " << ElemName(size_value.elem));
              const int64_t size = IntValues(size_value)[0];
              LOCKSTEP_REQUIRE(size >= 1 && size <= (int64_t{1} << 24), name << ": size must be in [1, 2^24], got " << size);
              const int64_t n_1 = periodic ? size : size - 1;
              std::vector<float> n(static_cast<size_t>(size));
              for (int64_t i = 0; i < size; ++i) n[i] = static_cast<float>(i);
              const Tensor index = Tensor::FromVector({size}, n);
              const double pi = 3.141592653589793238462643383279502884;
              Tensor w;
              if (n_1 == 0) {  // a symmetric window of one point: its peak
                w = Tensor::Full({size}, static_cast<float>(a0 - a1 + a2));
              } else {
                const Tensor c1 = Cos(MulScalar(index, static_cast<float>(2.0 * pi / n_1)));
                w = AddScalar(MulScalar(c1, static_cast<float>(-a1)), static_cast<float>(a0));
                if (a2 != 0.0) w = Add(w, MulScalar(Cos(MulScalar(index, static_cast<float>(4.0 * pi / n_1))), static_cast<float>(a2)));
              }
              return {CastValue(FloatValue(w), out)};
            };
          }};
}

}  // namespace

void AddSignalOps(std::vector<OpSpec>* t) {
  t->push_back(CosineWindow("HannWindow", 0.5, 0.5, 0.0));
  t->push_back(CosineWindow("HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0));
  t->push_back(CosineWindow("BlackmanWindow", 0.42, 0.5, 0.08));
}

}  // namespace onnx
}  // namespace lockstep
