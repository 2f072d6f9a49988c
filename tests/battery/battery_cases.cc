#include "tests/battery/battery_cases.h"

#include <string.h>

#include "simd/elementwise.h"
#include "simd/gemm.h"
#include "simd/math.h"
#include "simd/philox.h"
#include "simd/reduce.h"
#include "simd/softmax.h"
#include "simd/thread_pool.h"
#include "tests/battery/battery_inputs.h"

namespace lockstep {
namespace battery {

void KernelOutput::Append(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  bytes.insert(bytes.end(), p, p + size);
}

namespace {

constexpr size_t kLongest = 12345 + 8;

void ElementwiseCases(std::vector<KernelOutput>& outputs) {
  const std::vector<float> a = MixedInputs(kLongest, 1), b = MixedInputs(kLongest, 2),
                           c = MixedInputs(kLongest, 3);
  std::vector<float> out(kLongest);
  const simd::BinaryOp binary_ops[] = {
      simd::BinaryOp::kAdd, simd::BinaryOp::kSub, simd::BinaryOp::kMul, simd::BinaryOp::kDiv,
      simd::BinaryOp::kMax, simd::BinaryOp::kMin, simd::BinaryOp::kEq,  simd::BinaryOp::kNe,
      simd::BinaryOp::kLt,  simd::BinaryOp::kLe,  simd::BinaryOp::kGt,  simd::BinaryOp::kGe};
  for (simd::BinaryOp op : binary_ops) {
    KernelOutput k{std::string("binary_") + simd::BinaryOpName(op), {}};
    for (size_t n : BatteryLengths()) {
      for (size_t offset : kBatteryOffsets) {
        simd::Binary(op, a.data() + offset, b.data() + 2, out.data(), n);
        k.Append(out.data(), n * 4);
        simd::BinaryScalarRight(op, a.data() + offset, b[n % 97], out.data(), n);
        k.Append(out.data(), n * 4);
        simd::BinaryScalarLeft(op, b[n % 89], a.data() + offset, out.data(), n);
        k.Append(out.data(), n * 4);
      }
    }
    outputs.push_back(std::move(k));
  }
  const simd::UnaryOp unary_ops[] = {simd::UnaryOp::kNeg,          simd::UnaryOp::kAbs,
                                     simd::UnaryOp::kSqrt,         simd::UnaryOp::kRelu,
                                     simd::UnaryOp::kCanonicalize, simd::UnaryOp::kReciprocal,
                                     simd::UnaryOp::kSquare};
  for (simd::UnaryOp op : unary_ops) {
    KernelOutput k{std::string("unary_") + simd::UnaryOpName(op), {}};
    for (size_t n : BatteryLengths()) {
      for (size_t offset : kBatteryOffsets) {
        simd::Unary(op, a.data() + offset, out.data() + 1, n);
        k.Append(out.data() + 1, n * 4);
      }
    }
    outputs.push_back(std::move(k));
  }
  KernelOutput select{"select", {}};
  for (size_t n : BatteryLengths()) {
    simd::Select(c.data(), a.data() + 1, b.data() + 3, out.data(), n);
    select.Append(out.data(), n * 4);
  }
  outputs.push_back(std::move(select));
}

void ReductionCases(std::vector<KernelOutput>& outputs) {
  const std::vector<float> moderate = ModerateInputs(kLongest, 4);
  const std::vector<float> mixed = MixedInputs(kLongest, 5);
  KernelOutput sum{"sum", {}}, max{"max", {}}, min{"min", {}}, argmax{"argmax", {}};
  for (size_t n : BatteryLengths()) {
    for (size_t offset : kBatteryOffsets) {
      for (const std::vector<float>* x : {&moderate, &mixed}) {
        float r;
        int64_t index;
        r = simd::Sum(x->data() + offset, n);
        sum.Append(&r, 4);
        simd::MaxAxis(x->data() + offset, 1, n, 1, &r);
        max.Append(&r, 4);
        simd::MinAxis(x->data() + offset, 1, n, 1, &r);
        min.Append(&r, 4);
        simd::ArgmaxAxis(x->data() + offset, 1, n, 1, &index);
        argmax.Append(&index, 8);
      }
    }
  }
  // Over middle and last axes of [outer, len, inner] views, including blocks past kReduceBlock.
  const size_t shapes[][3] = {{1, 7, 3},  {4, 10, 1},  {3, 65, 9},  {2, 129, 17},
                              {1, 5000, 2}, {2, 3, 70}, {1, 9000, 1}, {5, 0, 3}};
  KernelOutput sum_axis{"sum_axis", {}}, mean_axis{"mean_axis", {}}, var_axis{"variance_axis", {}},
      max_axis{"max_axis", {}}, argmax_axis{"argmax_axis", {}};
  for (const auto& s : shapes) {
    const size_t outer = s[0], len = s[1], inner = s[2];
    std::vector<float> out(outer * inner);
    std::vector<int64_t> index(outer * inner);
    for (const std::vector<float>* x : {&moderate, &mixed}) {
      simd::SumAxis(x->data(), outer, len, inner, out.data());
      sum_axis.Append(out.data(), out.size() * 4);
      simd::MeanAxis(x->data(), outer, len, inner, out.data());
      mean_axis.Append(out.data(), out.size() * 4);
      simd::VarianceAxis(x->data(), outer, len, inner, 1, out.data());
      var_axis.Append(out.data(), out.size() * 4);
      simd::MaxAxis(x->data(), outer, len, inner, out.data());
      max_axis.Append(out.data(), out.size() * 4);
      simd::ArgmaxAxis(x->data(), outer, len, inner, index.data());
      argmax_axis.Append(index.data(), index.size() * 8);
    }
  }
  for (KernelOutput* k : {&sum, &max, &min, &argmax, &sum_axis, &mean_axis, &var_axis, &max_axis,
                          &argmax_axis}) {
    outputs.push_back(std::move(*k));
  }
}

void GemmCases(std::vector<KernelOutput>& outputs) {
  const std::vector<float> a = ModerateInputs(300 * 260 + 16, 6), b = ModerateInputs(300 * 260 + 16, 7);
  const std::vector<float> a_mixed = MixedInputs(64 * 64, 8);
  const size_t shapes[][3] = {{1, 1, 1},    {3, 5, 7},   {6, 16, 33},  {13, 31, 64},
                              {48, 256, 257}, {50, 70, 300}, {1, 260, 100}, {100, 120, 250},
                              {7, 3, 0}};
  for (int t = 0; t < 4; ++t) {
    const bool ta = t & 1, tb = t & 2;
    KernelOutput k{std::string("gemm_") + (ta ? "t" : "n") + (tb ? "t" : "n"), {}};
    for (const auto& s : shapes) {
      simd::GemmArgs g;
      g.trans_a = ta; g.trans_b = tb;
      g.m = s[0]; g.n = s[1]; g.k = s[2];
      g.lda = (ta ? g.m : g.k) + 1;
      g.ldb = (tb ? g.k : g.n) + 2;
      g.ldc = g.n;
      g.a = a.data() + 1;
      g.b = b.data() + 3;
      std::vector<float> c(g.m * g.n);
      g.c = c.data();
      simd::Gemm(g);
      k.Append(c.data(), c.size() * 4);
    }
    // Specials flow through products and sums and come out canonical.
    simd::GemmArgs g;
    g.trans_a = ta; g.trans_b = tb;
    g.m = 20; g.n = 20; g.k = 20;
    g.lda = g.ldb = g.ldc = 20;
    g.a = a_mixed.data();
    g.b = a_mixed.data() + 400;
    std::vector<float> c(400);
    g.c = c.data();
    simd::Gemm(g);
    k.Append(c.data(), c.size() * 4);
    outputs.push_back(std::move(k));
  }
}

void MathCases(std::vector<KernelOutput>& outputs) {
  const std::vector<float> mixed = MixedInputs(kLongest, 9);
  // Moderate inputs scaled into the interesting range of each function (|x| up to about 2^8).
  const std::vector<float> moderate = ModerateInputs(kLongest, 10);
  std::vector<float> out(kLongest);
  for (int f = 0; f < simd::kMathFnCount; ++f) {
    const simd::MathFn fn = static_cast<simd::MathFn>(f);
    KernelOutput k{std::string("math_") + simd::MathFnName(fn), {}};
    for (size_t n : BatteryLengths()) {
      for (size_t offset : kBatteryOffsets) {
        for (const std::vector<float>* x : {&mixed, &moderate}) {
          simd::Math(fn, x->data() + offset, out.data(), n);
          k.Append(out.data(), n * 4);
        }
      }
    }
    outputs.push_back(std::move(k));
  }
  KernelOutput pow{"math_pow", {}};
  for (int exponent = simd::kPowIntProvenMin; exponent <= simd::kPowIntProvenMax; ++exponent) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{1000}}) {
      simd::PowInt(mixed.data() + 1, exponent, out.data(), n);
      pow.Append(out.data(), n * 4);
      simd::PowInt(moderate.data() + 1, exponent, out.data(), n);
      pow.Append(out.data(), n * 4);
    }
  }
  simd::PowHalf(mixed.data(), out.data(), 1000);
  pow.Append(out.data(), 1000 * 4);
  outputs.push_back(std::move(pow));
}

void SoftmaxCases(std::vector<KernelOutput>& outputs) {
  const std::vector<float> moderate = ModerateInputs(kLongest, 11);
  const std::vector<float> mixed = MixedInputs(kLongest, 12);
  const size_t shapes[][2] = {{1, 1}, {3, 10}, {100, 10}, {7, 65}, {2, 129}, {1, 5000}, {4, 0}};
  KernelOutput softmax{"softmax", {}}, log_softmax{"log_softmax", {}};
  for (const auto& s : shapes) {
    std::vector<float> out(s[0] * s[1]);
    for (const std::vector<float>* x : {&moderate, &mixed}) {
      simd::Softmax(x->data(), s[0], s[1], out.data());
      softmax.Append(out.data(), out.size() * 4);
      simd::LogSoftmax(x->data(), s[0], s[1], out.data());
      log_softmax.Append(out.data(), out.size() * 4);
    }
  }
  outputs.push_back(std::move(softmax));
  outputs.push_back(std::move(log_softmax));
}

void PhiloxCases(std::vector<KernelOutput>& outputs) {
  KernelOutput raw{"philox_uint32", {}}, uniform{"philox_uniform", {}}, dropout{"philox_dropout", {}};
  std::vector<uint32_t> words(1001);
  std::vector<float> values(1001);
  for (uint64_t first : {uint64_t{0}, uint64_t{3}, uint64_t{1} << 33}) {
    simd::PhiloxUint32(7, 11, first, words.data(), words.size());
    raw.Append(words.data(), words.size() * 4);
    simd::PhiloxUniform(7, 12, first, values.data(), values.size());
    uniform.Append(values.data(), values.size() * 4);
    for (float p : {0.0f, 0.1f, 0.5f, 1.0f}) {
      simd::PhiloxDropoutMask(7, 13, first, p, values.data(), values.size());
      dropout.Append(values.data(), values.size() * 4);
    }
  }
  KernelOutput normal{"philox_normal", {}};
  for (uint64_t first : {uint64_t{0}, uint64_t{5}}) {
    simd::PhiloxNormal(7, 14, first, 0.0f, 1.0f, values.data(), values.size());
    normal.Append(values.data(), values.size() * 4);
    simd::PhiloxNormal(7, 15, first, 0.5f, 0.02f, values.data(), values.size());
    normal.Append(values.data(), values.size() * 4);
  }
  outputs.push_back(std::move(raw));
  outputs.push_back(std::move(uniform));
  outputs.push_back(std::move(normal));
  outputs.push_back(std::move(dropout));
}

}  // namespace

std::vector<KernelOutput> RunBattery() {
  std::vector<KernelOutput> outputs;
  ElementwiseCases(outputs);
  ReductionCases(outputs);
  GemmCases(outputs);
  MathCases(outputs);
  SoftmaxCases(outputs);
  PhiloxCases(outputs);
  return outputs;
}

}  // namespace battery
}  // namespace lockstep
