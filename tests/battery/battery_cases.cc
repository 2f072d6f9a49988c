#include "tests/battery/battery_cases.h"

#include <string.h>

#include <memory>

#include "core/backend/device.h"
#include "core/error.h"
#include "core/io/byte_order.h"
#include "simd/elementwise.h"
#include "simd/math.h"
#include "simd/philox.h"
#include "tests/battery/battery_inputs.h"
#include "tests/battery/battery_runner.h"

namespace lockstep {
namespace battery {

void KernelOutput::Append(const void* data, size_t count, size_t element_size) {
  const size_t at = bytes.size();
  bytes.resize(at + count * element_size);
  CopyLittleEndian(bytes.data() + at, data, count, element_size);
}

namespace {

constexpr size_t kLongest = 12345 + 8;
namespace be = backend;

void ElementwiseCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const std::vector<float> a = MixedInputs(kLongest, 1), b = MixedInputs(kLongest, 2),
                           c = MixedInputs(kLongest, 3);
  const float *da = r.Upload(a), *db = r.Upload(b), *dc = r.Upload(c);
  float* out = r.Alloc<float>(kLongest);
  const be::BinaryOp binary_ops[] = {
      be::BinaryOp::kAdd, be::BinaryOp::kSub, be::BinaryOp::kMul, be::BinaryOp::kDiv,
      be::BinaryOp::kMax, be::BinaryOp::kMin, be::BinaryOp::kEq,  be::BinaryOp::kNe,
      be::BinaryOp::kLt,  be::BinaryOp::kLe,  be::BinaryOp::kGt,  be::BinaryOp::kGe,
      be::BinaryOp::kFmod, be::BinaryOp::kRemainder};
  for (be::BinaryOp op : binary_ops) {
    KernelOutput k{std::string("binary_") + simd::BinaryOpName(static_cast<simd::BinaryOp>(op)), {}};
    for (size_t n : BatteryLengths()) {
      for (size_t offset : kBatteryOffsets) {
        r.Check(r.k.binary(op, da + offset, db + 2, out, n), "binary");
        r.Fetch(k, out, n);
        r.Check(r.k.binary_scalar_right(op, da + offset, b[n % 97], out, n), "binary");
        r.Fetch(k, out, n);
        r.Check(r.k.binary_scalar_left(op, b[n % 89], da + offset, out, n), "binary");
        r.Fetch(k, out, n);
      }
    }
    outputs.push_back(std::move(k));
  }
  const be::UnaryOp unary_ops[] = {be::UnaryOp::kNeg,          be::UnaryOp::kAbs,
                                   be::UnaryOp::kSqrt,         be::UnaryOp::kRelu,
                                   be::UnaryOp::kCanonicalize, be::UnaryOp::kReciprocal,
                                   be::UnaryOp::kSquare,       be::UnaryOp::kFloor,
                                   be::UnaryOp::kCeil,         be::UnaryOp::kRoundEven,
                                   be::UnaryOp::kRoundFloat16, be::UnaryOp::kRoundBFloat16};
  for (be::UnaryOp op : unary_ops) {
    KernelOutput k{std::string("unary_") + simd::UnaryOpName(static_cast<simd::UnaryOp>(op)), {}};
    for (size_t n : BatteryLengths()) {
      for (size_t offset : kBatteryOffsets) {
        r.Check(r.k.unary(op, da + offset, out + 1, n), "unary");
        r.Fetch(k, out + 1, n);
      }
    }
    outputs.push_back(std::move(k));
  }
  KernelOutput select{"select", {}};
  for (size_t n : BatteryLengths()) {
    r.Check(r.k.select(dc, da + 1, db + 3, out, n), "select");
    r.Fetch(select, out, n);
  }
  outputs.push_back(std::move(select));
  // ReLU6's bounds, bounds of either sign and zero's two signs, one-sided bounds, and lo > hi.
  const float inf = __builtin_inff();
  const float bounds[][2] = {{0.0f, 6.0f}, {-1.5f, 2.25f}, {-0.0f, 0.0f}, {0.0f, -0.0f}, {-inf, 0.5f},
                             {-3.0f, inf}, {1.0f, -1.0f}, {-inf, inf}};
  KernelOutput clamp{"clamp", {}};
  for (size_t n : BatteryLengths()) {
    for (const auto& bound : bounds) {
      r.Check(r.k.clamp(da + n % 5, bound[0], bound[1], out, n), "clamp");
      r.Fetch(clamp, out, n);
    }
  }
  outputs.push_back(std::move(clamp));
  // Its gradient over the same bounds, mixed values (NaN, infinities, +-0) in x and in g.
  KernelOutput clamp_backward{"clamp_backward", {}};
  for (size_t n : BatteryLengths()) {
    for (const auto& bound : bounds) {
      r.Check(r.k.clamp_backward(da + n % 5, bound[0], bound[1], db + n % 3, out, n), "clamp_backward");
      r.Fetch(clamp_backward, out, n);
    }
  }
  outputs.push_back(std::move(clamp_backward));
}

void ReductionCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const float* moderate = r.Upload(ModerateInputs(kLongest, 4));
  const float* mixed = r.Upload(MixedInputs(kLongest, 5));
  float* result = r.Alloc<float>(kLongest);
  int64_t* index = r.Alloc<int64_t>(kLongest);
  KernelOutput sum{"sum", {}}, max{"max", {}}, min{"min", {}}, argmax{"argmax", {}};
  for (size_t n : BatteryLengths()) {
    for (size_t offset : kBatteryOffsets) {
      for (const float* x : {moderate, mixed}) {
        r.Check(r.k.sum_axis(x + offset, 1, n, 1, result), "sum");
        r.Fetch(sum, result, 1);
        r.Check(r.k.max_axis(x + offset, 1, n, 1, result), "max");
        r.Fetch(max, result, 1);
        r.Check(r.k.min_axis(x + offset, 1, n, 1, result), "min");
        r.Fetch(min, result, 1);
        r.Check(r.k.argmax_axis(x + offset, 1, n, 1, index), "argmax");
        r.Fetch(argmax, index, 1);
      }
    }
  }
  // Over middle and last axes of [outer, len, inner] views, including blocks past kReduceBlock.
  const size_t shapes[][3] = {{1, 7, 3},  {4, 10, 1},  {3, 65, 9},  {2, 129, 17},
                              {1, 5000, 2}, {2, 3, 70}, {1, 9000, 1}, {5, 0, 3}};
  KernelOutput sum_axis{"sum_axis", {}}, mean_axis{"mean_axis", {}}, var_axis{"variance_axis", {}},
      max_axis{"max_axis", {}}, argmax_axis{"argmax_axis", {}};
  for (const auto& s : shapes) {
    const size_t outer = s[0], len = s[1], inner = s[2], count = outer * inner;
    for (const float* x : {moderate, mixed}) {
      r.Check(r.k.sum_axis(x, outer, len, inner, result), "sum_axis");
      r.Fetch(sum_axis, result, count);
      r.Check(r.k.mean_axis(x, outer, len, inner, result), "mean_axis");
      r.Fetch(mean_axis, result, count);
      r.Check(r.k.variance_axis(x, outer, len, inner, 1, result), "variance_axis");
      r.Fetch(var_axis, result, count);
      r.Check(r.k.max_axis(x, outer, len, inner, result), "max_axis");
      r.Fetch(max_axis, result, count);
      r.Check(r.k.argmax_axis(x, outer, len, inner, index), "argmax_axis");
      r.Fetch(argmax_axis, index, count);
    }
  }
  for (KernelOutput* k : {&sum, &max, &min, &argmax, &sum_axis, &mean_axis, &var_axis, &max_axis,
                          &argmax_axis}) {
    outputs.push_back(std::move(*k));
  }
}

void GemmCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const float* a = r.Upload(ModerateInputs(300 * 260 + 16, 6));
  const float* b = r.Upload(ModerateInputs(300 * 260 + 16, 7));
  const float* a_mixed = r.Upload(MixedInputs(64 * 64, 8));
  float* c = r.Alloc<float>(300 * 300);
  const size_t shapes[][3] = {{1, 1, 1},    {3, 5, 7},   {6, 16, 33},  {13, 31, 64},
                              {48, 256, 257}, {50, 70, 300}, {1, 260, 100}, {100, 120, 250},
                              {7, 3, 0}};
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    KernelOutput k{std::string("gemm_") + (ta ? "t" : "n") + (tb ? "t" : "n"), {}};
    for (const auto& s : shapes) {
      be::GemmCall g{};
      g.trans_a = ta; g.trans_b = tb;
      g.m = s[0]; g.n = s[1]; g.k = s[2];
      g.lda = (ta ? g.m : g.k) + 1;
      g.ldb = (tb ? g.k : g.n) + 2;
      g.ldc = g.n;
      g.a = a + 1;
      g.b = b + 3;
      g.c = c;
      r.Check(r.k.gemm(&g), "gemm");
      r.Fetch(k, c, g.m * g.n);
    }
    // Specials flow through products and sums and come out canonical.
    be::GemmCall g{};
    g.trans_a = ta; g.trans_b = tb;
    g.m = 20; g.n = 20; g.k = 20;
    g.lda = g.ldb = g.ldc = 20;
    g.a = a_mixed;
    g.b = a_mixed + 400;
    g.c = c;
    r.Check(r.k.gemm(&g), "gemm");
    r.Fetch(k, c, 400);
    outputs.push_back(std::move(k));
  }
}

void MathCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const float* mixed = r.Upload(MixedInputs(kLongest, 9));
  // Moderate inputs scaled into the interesting range of each function (|x| up to about 2^8).
  const float* moderate = r.Upload(ModerateInputs(kLongest, 10));
  float* out = r.Alloc<float>(kLongest);
  for (int f = 0; f < simd::kMathFnCount; ++f) {
    const be::MathFn fn = static_cast<be::MathFn>(f);
    KernelOutput k{std::string("math_") + simd::MathFnName(static_cast<simd::MathFn>(f)), {}};
    for (size_t n : BatteryLengths()) {
      for (size_t offset : kBatteryOffsets) {
        for (const float* x : {mixed, moderate}) {
          r.Check(r.k.math(fn, x + offset, out, n), "math");
          r.Fetch(k, out, n);
        }
      }
    }
    outputs.push_back(std::move(k));
  }
  KernelOutput pow{"math_pow", {}};
  for (int exponent = simd::kPowIntProvenMin; exponent <= simd::kPowIntProvenMax; ++exponent) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{1000}}) {
      r.Check(r.k.pow_int(mixed + 1, exponent, out, n), "pow_int");
      r.Fetch(pow, out, n);
      r.Check(r.k.pow_int(moderate + 1, exponent, out, n), "pow_int");
      r.Fetch(pow, out, n);
    }
  }
  // pow(x, 0.5) has no device kernel (no op calls it); the host's result completes the record.
  std::vector<float> half(1000);
  simd::PowHalf(MixedInputs(kLongest, 9).data(), half.data(), 1000);
  pow.Append(half.data(), 1000);
  outputs.push_back(std::move(pow));
}

void SoftmaxCases(Runner& r, std::vector<KernelOutput>& outputs) {
  const float* moderate = r.Upload(ModerateInputs(kLongest, 11));
  const float* mixed = r.Upload(MixedInputs(kLongest, 12));
  float* out = r.Alloc<float>(kLongest);
  const size_t shapes[][2] = {{1, 1}, {3, 10}, {100, 10}, {7, 65}, {2, 129}, {1, 5000}, {4, 0}};
  KernelOutput softmax{"softmax", {}}, log_softmax{"log_softmax", {}};
  for (const auto& s : shapes) {
    for (const float* x : {moderate, mixed}) {
      r.Check(r.k.softmax(x, s[0], s[1], out), "softmax");
      r.Fetch(softmax, out, s[0] * s[1]);
      r.Check(r.k.log_softmax(x, s[0], s[1], out), "log_softmax");
      r.Fetch(log_softmax, out, s[0] * s[1]);
    }
  }
  outputs.push_back(std::move(softmax));
  outputs.push_back(std::move(log_softmax));
}

// Raw words, uniform and normal draws initialise parameters and shuffle data on the host; only
// the dropout mask is a device kernel.
void HostPhiloxCases(std::vector<KernelOutput>& outputs) {
  KernelOutput raw{"philox_uint32", {}}, uniform{"philox_uniform", {}};
  std::vector<uint32_t> words(1001);
  std::vector<float> values(1001);
  for (uint64_t first : {uint64_t{0}, uint64_t{3}, uint64_t{1} << 33}) {
    simd::PhiloxUint32(7, 11, first, words.data(), words.size());
    raw.Append(words.data(), words.size());
    simd::PhiloxUniform(7, 12, first, values.data(), values.size());
    uniform.Append(values.data(), values.size());
  }
  KernelOutput normal{"philox_normal", {}};
  for (uint64_t first : {uint64_t{0}, uint64_t{5}}) {
    simd::PhiloxNormal(7, 14, first, 0.0f, 1.0f, values.data(), values.size());
    normal.Append(values.data(), values.size());
    simd::PhiloxNormal(7, 15, first, 0.5f, 0.02f, values.data(), values.size());
    normal.Append(values.data(), values.size());
  }
  outputs.push_back(std::move(raw));
  outputs.push_back(std::move(uniform));
  outputs.push_back(std::move(normal));
}

void DropoutCases(Runner& r, std::vector<KernelOutput>& outputs) {
  KernelOutput dropout{"philox_dropout", {}};
  float* values = r.Alloc<float>(1001);
  for (uint64_t first : {uint64_t{0}, uint64_t{3}, uint64_t{1} << 33}) {
    for (float p : {0.0f, 0.1f, 0.5f, 1.0f}) {
      r.Check(r.k.dropout_mask(7, 13, first, p, values, 1001), "dropout_mask");
      r.Fetch(dropout, values, 1001);
    }
  }
  outputs.push_back(std::move(dropout));
}

}  // namespace

bool IsHostOnlyKernel(const std::string& name) {
  return name == "philox_uint32" || name == "philox_uniform" || name == "philox_normal";
}

std::vector<KernelOutput> RunBattery(const backend::KernelTable& kernels, bool include_host_only) {
  Runner r(kernels);
  std::vector<KernelOutput> outputs;
  ElementwiseCases(r, outputs);
  ReductionCases(r, outputs);
  GemmCases(r, outputs);
  MathCases(r, outputs);
  SoftmaxCases(r, outputs);
  if (include_host_only) HostPhiloxCases(outputs);
  DropoutCases(r, outputs);
  LayerCases(r, outputs);     // golden section 2
  TrainingCases(r, outputs);  // golden section 8
  return outputs;
}

std::vector<KernelOutput> RunBattery() { return RunBattery(CpuKernels(), true); }

}  // namespace battery
}  // namespace lockstep
