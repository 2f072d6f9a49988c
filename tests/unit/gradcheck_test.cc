// Gradient check for every op with a backward rule, from one table: the analytic gradient of
// L = sum(op(inputs) * w) (w fixed random weights) against central finite differences. The ops'
// names are registered (gradcheck_registry.h) for kernel_coverage_test.cc, which names the checks
// that exercise each kernel-table entry.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/parallel/data_parallel.h"
#include "core/parallel/local_group.h"
#include "simd/philox.h"
#include "tests/unit/gradcheck_registry.h"

namespace lockstep {
namespace {

Tensor Random(const Shape& shape, uint64_t stream, float low = -1.0f, float high = 1.0f) {
  std::vector<float> v(static_cast<size_t>(NumElements(shape)));
  simd::PhiloxUniformRange(2026, stream, 0, low, high, v.data(), v.size());
  return Tensor::FromVector(shape, v);
}

struct OpCase {
  std::string name;
  std::vector<Shape> shapes;
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  float low = -1.0f, high = 1.0f;  // input range (e.g. positive for log)
};

std::vector<OpCase> OpTable() {
  const Tensor target = Tensor::FromInt64({4}, {1, 0, 2, 1});
  return {
      {"add (broadcast)", {{3, 4}, {4}}, [](auto& x) { return Add(x[0], x[1]); }},
      {"sub (broadcast)", {{2, 3, 4}, {3, 1}}, [](auto& x) { return Sub(x[0], x[1]); }},
      {"mul (broadcast)", {{3, 4}, {1, 4}}, [](auto& x) { return Mul(x[0], x[1]); }},
      {"div", {{3, 4}, {3, 4}}, [](auto& x) { return Div(x[0], x[1]); }, 0.5f, 2.0f},
      {"neg", {{5}}, [](auto& x) { return Neg(x[0]); }},
      {"add_scalar", {{5}}, [](auto& x) { return AddScalar(x[0], 3.0f); }},
      {"mul_scalar", {{5}}, [](auto& x) { return MulScalar(x[0], -2.5f); }},
      {"pow 3", {{6}}, [](auto& x) { return PowScalar(x[0], 3); }},
      {"pow -2", {{6}}, [](auto& x) { return PowScalar(x[0], -2); }, 0.5f, 2.0f},
      {"relu", {{7}}, [](auto& x) { return Relu(x[0]); }},
      {"gelu erf", {{7}}, [](auto& x) { return GeluErf(x[0]); }, -3.0f, 3.0f},
      {"gelu tanh", {{7}}, [](auto& x) { return GeluTanh(x[0]); }, -3.0f, 3.0f},
      {"tanh", {{7}}, [](auto& x) { return Tanh(x[0]); }},
      {"sigmoid", {{7}}, [](auto& x) { return Sigmoid(x[0]); }},
      {"exp", {{7}}, [](auto& x) { return Exp(x[0]); }},
      {"log", {{7}}, [](auto& x) { return Log(x[0]); }, 0.5f, 3.0f},
      {"sqrt", {{7}}, [](auto& x) { return Sqrt(x[0]); }, 0.5f, 3.0f},
      {"reshape", {{2, 6}}, [](auto& x) { return Mul(x[0].Reshape({3, 4}), Tensor::Arange(4, DType::kFloat32)); }},
      {"permute", {{2, 3, 4}}, [](auto& x) { return x[0].Permute({2, 0, 1}).Contiguous(); }},
      {"slice", {{5, 4}}, [](auto& x) { return x[0].Slice(0, 1, 5, 2); }},
      {"expand", {{3, 1}}, [](auto& x) { return x[0].Expand({2, 3, 4}); }},
      {"concat", {{2, 3}, {2, 2}}, [](auto& x) { return Concat({x[0], x[1]}, 1); }},
      {"sum all", {{3, 4}}, [](auto& x) { return Sum(x[0]); }},
      {"sum dim", {{3, 4, 2}}, [](auto& x) { return Sum(x[0], 1); }},
      {"mean dim keepdim", {{3, 4}}, [](auto& x) { return Mean(x[0], 0, true); }},
      {"mean all", {{3, 4}}, [](auto& x) { return Mean(x[0]); }},
      {"matmul 2d", {{3, 5}, {5, 4}}, [](auto& x) { return Matmul(x[0], x[1]); }},
      {"matmul batched", {{2, 3, 5}, {2, 5, 4}}, [](auto& x) { return Matmul(x[0], x[1]); }},
      {"matmul batch x 2d", {{2, 3, 5}, {5, 4}}, [](auto& x) { return Matmul(x[0], x[1]); }},
      {"linear", {{4, 5}, {3, 5}, {3}}, [](auto& x) { return Linear(x[0], x[1], x[2]); }},
      {"softmax", {{3, 5}}, [](auto& x) { return Softmax(x[0], -1); }},
      {"softmax dim 0", {{3, 5}}, [](auto& x) { return Softmax(x[0], 0); }},
      {"log_softmax", {{3, 5}}, [](auto& x) { return LogSoftmax(x[0], -1); }},
      {"conv2d", {{2, 2, 6, 5}, {3, 2, 3, 2}, {3}},
       [](auto& x) { return Conv2d(x[0], x[1], x[2], Conv2dOptions{1, 2, 1, 0, 1, 1, 1}); }},
      {"conv2d groups dilation", {{1, 4, 7, 7}, {4, 2, 2, 2}, {4}},
       [](auto& x) { return Conv2d(x[0], x[1], x[2], Conv2dOptions{2, 1, 1, 1, 2, 1, 2}); }},
      {"max_pool2d", {{2, 2, 4, 6}}, [](auto& x) { return MaxPool2d(x[0], Pool2dOptions{2, 2, 2, 2}); }},
      {"avg_pool2d padded", {{1, 2, 5, 5}}, [](auto& x) { return AvgPool2d(x[0], Pool2dOptions{3, 3, 2, 2, 1, 1}); }},
      {"dropout", {{4, 6}}, [](auto& x) { return Dropout(x[0], 0.3f, true, 1, 2, 0); }},
      {"layer_norm", {{3, 6}, {6}, {6}}, [](auto& x) { return LayerNorm(x[0], 1, x[1], x[2], 1e-5f); }},
      {"batch_norm train", {{4, 3, 2, 2}, {3}, {3}},
       [](auto& x) { return BatchNorm(x[0], Tensor(), Tensor(), x[1], x[2], true, 0.1f, 1e-5f); }},
      {"batch_norm eval", {{4, 3}, {3}, {3}},
       [](auto& x) {
         return BatchNorm(x[0], Tensor::Full({3}, 0.1f), Tensor::Full({3}, 2.0f), x[1], x[2], false, 0.1f, 1e-5f);
       }},
      {"embedding", {{5, 3}}, [](auto& x) { return Embedding(Tensor::FromInt64({2, 2}, {4, 0, 4, 2}), x[0]); }},
      {"nll_loss", {{4, 3}}, [target](auto& x) { return NllLoss(LogSoftmax(x[0]), target); }},
      {"cross_entropy smoothed, ignore", {{4, 3}},
       [](auto& x) { return CrossEntropy(x[0], Tensor::FromInt64({4}, {2, -100, 0, 1}), Reduction::kMean, -100, 0.1f); }},
      {"mse_loss", {{3, 4}, {3, 4}}, [](auto& x) { return MseLoss(x[0], x[1]); }},
      {"masked_fill", {{3, 4}}, [](auto& x) {
         return MaskedFill(x[0], Tensor::FromVector({1, 4}, {0, 1, 0, 1}), -5.0f);
       }},
      // Appended (new cases go last, so the earlier cases keep their random inputs).
      {"abs", {{7}}, [](auto& x) { return Abs(x[0]); }},
      {"erf", {{7}}, [](auto& x) { return Erf(x[0]); }, -2.0f, 2.0f},
      {"rsqrt", {{7}}, [](auto& x) { return Rsqrt(x[0]); }, 0.5f, 3.0f},
      {"where (broadcast)", {{3, 4}, {4}},
       [](auto& x) { return Where(Tensor::FromVector({3, 1}, {1.0f, 0.0f, 1.0f}), x[0], x[1]); }},
      {"avg_pool2d asymmetric, padding not counted", {{1, 2, 5, 4}},
       [](auto& x) { return AvgPool2d(x[0], Pool2dOptions{3, 2, 2, 1, 0, 1, 1, 0, false}); }},
      // Max pooling off the 2x2 fast path: padding, overlapping windows (one input element the
      // maximum of several outputs, so max_pool_backward adds several gradients into it).
      {"max_pool2d padded, overlapping windows", {{2, 2, 6, 5}},
       [](auto& x) { return MaxPool2d(x[0], Pool2dOptions{3, 3, 2, 2, 1, 1}); }},
      {"layer_norm without weight and bias", {{4, 5}}, [](auto& x) { return LayerNorm(x[0], 1, Tensor(), Tensor(), 1e-5f); }},
      {"batch_norm train without weight and bias, [N, C]", {{5, 3}},
       [](auto& x) { return BatchNorm(x[0], Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1f, 1e-5f); }},
      {"nll_loss sum, ignore_index", {{5, 4}},
       [](auto& x) {
         return NllLoss(LogSoftmax(x[0]), Tensor::FromInt64({5}, {3, 1, -1, 0, 3}), Reduction::kSum, -1);
       }},
      // The modules composed of ops (core/ops_composite.cc).
      {"relu6", {{9}}, [](auto& x) { return Relu6(x[0]); }, -2.0f, 8.0f},
      {"hardtanh", {{9}}, [](auto& x) { return Hardtanh(x[0], -1.5f, 2.0f); }, -3.0f, 3.0f},
      {"hardsigmoid", {{9}}, [](auto& x) { return Hardsigmoid(x[0]); }, -5.0f, 5.0f},
      {"hardswish", {{9}}, [](auto& x) { return Hardswish(x[0]); }, -5.0f, 5.0f},
      // SiLU, one op since its gradient became one kernel (silu_backward).
      {"silu", {{7}}, [](auto& x) { return Silu(x[0]); }, -3.0f, 3.0f},
      {"mean over dims", {{3, 4, 5}}, [](auto& x) { return Mean(x[0], {0, 2}); }},
      {"adaptive_avg_pool2d uneven windows", {{1, 2, 5, 7}}, [](auto& x) { return AdaptiveAvgPool2d(x[0], 3, 4); }},
      {"channel_shuffle", {{2, 6, 2, 2}}, [](auto& x) { return ChannelShuffle(x[0], 3); }},
      {"max_pool2d ceil_mode", {{1, 2, 7, 5}},
       [](auto& x) {
         Pool2dOptions o{3, 3, 2, 2};
         o.ceil_mode = true;
         return MaxPool2d(x[0], o);
       },
       -10.0f, 10.0f},  // wide: no two candidates of a window within the finite difference's step
      {"stochastic_depth rows", {{6, 2, 3}}, [](auto& x) { return StochasticDepth(x[0], 0.5f, true, true, 1, 2, 0); }},
      // The trigonometric family, each on a domain where its derivative is moderate.
      {"sin", {{7}}, [](auto& x) { return Sin(x[0]); }, -3.0f, 3.0f},
      {"cos", {{7}}, [](auto& x) { return Cos(x[0]); }, -3.0f, 3.0f},
      {"tan", {{7}}, [](auto& x) { return Tan(x[0]); }, -1.2f, 1.2f},
      {"asin", {{7}}, [](auto& x) { return Asin(x[0]); }, -0.8f, 0.8f},
      {"acos", {{7}}, [](auto& x) { return Acos(x[0]); }, -0.8f, 0.8f},
      {"atan", {{7}}, [](auto& x) { return Atan(x[0]); }, -3.0f, 3.0f},
      {"sinh", {{7}}, [](auto& x) { return Sinh(x[0]); }, -2.0f, 2.0f},
      {"cosh", {{7}}, [](auto& x) { return Cosh(x[0]); }, -2.0f, 2.0f},
      {"asinh", {{7}}, [](auto& x) { return Asinh(x[0]); }, -3.0f, 3.0f},
      {"acosh", {{7}}, [](auto& x) { return Acosh(x[0]); }, 1.3f, 4.0f},
      {"atanh", {{7}}, [](auto& x) { return Atanh(x[0]); }, -0.8f, 0.8f},
      {"conv_transpose2d stride padding output_padding", {{2, 4, 3, 4}, {4, 3, 3, 2}, {3}},
       [](auto& x) {
         ConvTranspose2dOptions o;
         o.stride_h = 2, o.stride_w = 3, o.padding_h = 1, o.output_padding_h = 1, o.output_padding_w = 2;
         return ConvTranspose2d(x[0], x[1], x[2], o);
       }},
      {"conv_transpose2d groups dilation", {{1, 4, 4, 3}, {4, 1, 2, 2}},
       [](auto& x) {
         ConvTranspose2dOptions o;
         o.groups = 2, o.dilation_h = 2, o.stride_w = 2;
         return ConvTranspose2d(x[0], x[1], Tensor(), o);
       }},
      // Remainders away from their jumps (a / b within (1.1, 1.9) and (-1.9, -1.1)).
      {"fmod", {{6}, {6}},
       [](auto& x) { return Fmod(x[0], AddScalar(MulScalar(x[1], 0.1f), 1.9f)); }, 2.5f, 3.5f},
      {"remainder", {{6}, {6}},
       [](auto& x) { return Remainder(Neg(x[0]), AddScalar(MulScalar(x[1], 0.1f), 1.9f)); }, 2.5f, 3.5f},
      // Inputs on both sides of both bounds (none within the finite difference's step of one).
      {"clamp", {{9}}, [](auto& x) { return Clamp(x[0], -0.8f, 1.0f); }, -2.0f, 2.0f},
      {"clamp lower bound only", {{9}}, [](auto& x) { return Clamp(x[0], 0.1f, __builtin_inff()); }, -2.0f, 2.0f},
  };
}

// Ops whose backward rules take another path inside a data-parallel batch (core/parallel): they
// are checked again inside a batch of one rank, where the weight gradient of conv2d is the
// batch-grouped GEMM of im2col columns (Conv2dWeightGradOverRanks) and a linear layer's weight
// gradient the GEMM over ranks.
std::vector<OpCase> DataParallelOpTable() {
  return {
      {"conv2d (data-parallel batch)", {{2, 2, 6, 5}, {3, 2, 3, 2}, {3}},
       [](auto& x) { return Conv2d(x[0], x[1], x[2], Conv2dOptions{1, 2, 1, 0, 1, 1, 1}); }},
      {"conv2d groups dilation (data-parallel batch)", {{2, 4, 7, 7}, {4, 2, 2, 2}, {4}},
       [](auto& x) { return Conv2d(x[0], x[1], x[2], Conv2dOptions{2, 1, 1, 1, 2, 1, 2}); }},
      {"linear (data-parallel batch)", {{4, 5}, {3, 5}, {3}}, [](auto& x) { return Linear(x[0], x[1], x[2]); }},
  };
}

double Loss(const OpCase& op, const std::vector<Tensor>& inputs, const std::vector<float>& weights) {
  NoGradGuard no_grad;
  const std::vector<float> out = op.fn(inputs).ToVector();
  double total = 0;
  for (size_t i = 0; i < out.size(); ++i) total += static_cast<double>(out[i]) * weights[i];
  return total;
}

// The analytic gradients of one op against central finite differences (inputs and weights drawn
// from the next streams).
void CheckOp(const OpCase& op, uint64_t& stream) {
  INFO("op " << op.name);
  std::vector<Tensor> inputs;
  for (const Shape& s : op.shapes) inputs.push_back(Random(s, ++stream, op.low, op.high).RequiresGrad());
  const Tensor out = op.fn(inputs);
  std::vector<float> weights(static_cast<size_t>(out.numel()));
  simd::PhiloxUniformRange(7, ++stream, 0, 0.5f, 1.5f, weights.data(), weights.size());
  // dL/d out = w: the gradient Sum(Mul(out, w)).Backward() gives, bit for bit, without a sum over
  // the whole batch (which a data-parallel batch refuses).
  out.Backward(Tensor::FromVector(out.shape(), weights));
  for (size_t k = 0; k < inputs.size(); ++k) {
    REQUIRE(inputs[k].grad().defined());
    const std::vector<float> analytic = inputs[k].grad().ToVector();
    for (int64_t i = 0; i < inputs[k].numel(); ++i) {
      const float h = 1e-2f;
      float* p = inputs[k].data_f32() + i;
      const float saved = *p;
      *p = saved + h;
      const double up = Loss(op, inputs, weights);
      *p = saved - h;
      const double down = Loss(op, inputs, weights);
      *p = saved;
      const double numeric = (up - down) / (2.0 * h);
      INFO("input " << k << " element " << i << " analytic " << analytic[i] << " numeric " << numeric);
      CHECK(std::abs(analytic[i] - numeric) <= 2e-2 * (1.0 + std::abs(numeric)));
    }
  }
}

TEST_CASE("every backward rule matches central finite differences") {
  uint64_t stream = 0;
  for (const OpCase& op : OpTable()) CheckOp(op, stream);
}

TEST_CASE("the data-parallel backward paths match central finite differences (one rank)") {
  parallel::LocalGroup group(1);
  parallel::DataParallel dp(group.rank(0));
  uint64_t stream = 1000;
  for (const OpCase& op : DataParallelOpTable()) {
    parallel::BatchScope batch(dp, op.shapes[0][0]);  // the first input's rows are the batch
    CheckOp(op, stream);
  }
}

TEST_CASE("gradients accumulate across backward calls and ZeroGrad clears them") {
  Tensor x = Tensor::FromVector({3}, {1, 2, 3}).RequiresGrad();
  Sum(Mul(x, x)).Backward();
  Sum(Mul(x, x)).Backward();
  CHECK(x.grad().ToVector() == std::vector<float>{4, 8, 12});
  x.ZeroGrad();
  CHECK(!x.grad().defined());
}

TEST_CASE("a tensor used twice gets both contributions, in a fixed order") {
  Tensor x = Tensor::FromVector({2}, {3, -1}).RequiresGrad();
  const Tensor y = Add(Mul(x, x), MulScalar(x, 4.0f));  // dy/dx = 2x + 4
  Sum(y).Backward();
  CHECK(x.grad().ToVector() == std::vector<float>{10, 2});
}

TEST_CASE("no_grad and detach record no history") {
  Tensor x = Tensor::FromVector({2}, {1, 2}).RequiresGrad();
  {
    NoGradGuard guard;
    CHECK(!Mul(x, x).requires_grad());
  }
  CHECK(!Mul(x.Detach(), x.Detach()).requires_grad());
  CHECK_THROWS_AS(Sum(Mul(x.Detach(), x.Detach())).Backward(), Error);
}

TEST_CASE("shape errors name both shapes") {
  const Tensor a = Tensor::Zeros({2, 3}), b = Tensor::Zeros({4});
  try {
    Add(a, b);
    FAIL("expected an error");
  } catch (const Error& e) {
    const std::string message = e.what();
    CHECK(message.find("[2, 3]") != std::string::npos);
    CHECK(message.find("[4]") != std::string::npos);
  }
  CHECK_THROWS_AS(Matmul(Tensor::Zeros({2, 3}), Tensor::Zeros({4, 5})), Error);
  CHECK_THROWS_AS(Tensor::Zeros({2, 3}).Reshape({4}), Error);
  CHECK_THROWS_AS(Embedding(Tensor::FromInt64({1}, {9}), Tensor::Zeros({3, 2})), Error);
}

}  // namespace

namespace testing {

std::vector<std::string> GradcheckOpNames() {
  std::vector<std::string> names;
  for (const OpCase& op : OpTable()) names.push_back(op.name);
  for (const OpCase& op : DataParallelOpTable()) names.push_back(op.name);
  return names;
}

}  // namespace testing
}  // namespace lockstep
