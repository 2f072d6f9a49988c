// The activation modules (core/ops_composite.cc, core/nn/layers.h): ReLU6, Hardtanh, SiLU,
// Hardsigmoid, Hardswish with PyTorch's values and gradients at their bounds; MaxPool2d with
// ceil_mode against the same pooling over an input padded with -inf; the mean over several
// dimensions; AdaptiveAvgPool2d's three ways against its definition; ChannelShuffle as a
// permutation; StochasticDepth's masks and streams.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/nn/attention.h"
#include "core/nn/layers.h"
#include "core/ops.h"
#include "tests/unit/tensor_values.h"

namespace lockstep {
namespace {

using testing::DifferingBits;
using testing::SeededValues;

std::vector<float> Values(const Tensor& t) { return t.Contiguous().ToVector(); }

// The values of f at xs and the gradient of sum(f(x)).
void ValuesAndGrads(Tensor (*f)(const Tensor&), const std::vector<float>& xs, std::vector<float>* values,
                    std::vector<float>* grads) {
  Tensor x = Tensor::FromVector({static_cast<int64_t>(xs.size())}, xs);
  x.RequiresGrad(true);
  const Tensor y = f(x);
  Sum(y).Backward();
  *values = Values(y);
  *grads = Values(x.grad());
}

TEST_CASE("ReLU6, Hardsigmoid and Hardswish: PyTorch's values and gradients at their bounds") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v, g;
  ValuesAndGrads(&Relu6, {-1.0f, 0.0f, 3.0f, 6.0f, 7.0f, nan}, &v, &g);
  CHECK(v[0] == 0.0f);
  CHECK(v[1] == 0.0f);
  CHECK(v[2] == 3.0f);
  CHECK(v[3] == 6.0f);
  CHECK(v[4] == 6.0f);
  CHECK(std::isnan(v[5]));
  // hardtanh_backward: 0 where x <= 0 or x >= 6.
  CHECK(g == std::vector<float>{0.0f, 0.0f, 1.0f, 0.0f, 0.0f, g[5]});

  ValuesAndGrads(&Hardsigmoid, {-4.0f, -3.0f, 0.0f, 2.9999998f, 3.0f, 4.0f}, &v, &g);
  CHECK(v == std::vector<float>{0.0f, 0.0f, 0.5f, 1.0f, 1.0f, 1.0f});
  const float sixth = 1.0f / 6.0f;
  // 1/6 strictly inside (-3, 3), also where x + 3 rounds to 6.
  CHECK(g == std::vector<float>{0.0f, 0.0f, sixth, sixth, 0.0f, 0.0f});

  ValuesAndGrads(&Hardswish, {-4.0f, -3.0f, 0.0f, 1.5f, 3.0f, 4.0f}, &v, &g);
  CHECK(v == std::vector<float>{0.0f, 0.0f, 0.0f, 1.125f, 3.0f, 4.0f});
  // PyTorch's (vectorised): 0 below -3, x / 3 + 1/2 for -3 <= x < 3, 1 from 3 on.
  CHECK(g == std::vector<float>{0.0f, -0.5f, 0.5f, 1.0f, 1.0f, 1.0f});

  ValuesAndGrads(&Silu, {0.0f, 1.0f}, &v, &g);
  CHECK(v[0] == 0.0f);
  CHECK(v[1] == Values(Sigmoid(Tensor::Scalar(1.0f)))[0]);

  nn::Hardtanh hardtanh(-2.0f, 2.5f);
  CHECK(Values(hardtanh(Tensor::FromVector({4}, {-3.0f, -2.0f, 1.0f, 9.0f}))) ==
        std::vector<float>{-2.0f, -2.0f, 1.0f, 2.5f});
  CHECK_THROWS(Hardtanh(Tensor::Scalar(1.0f), 2.0f, 1.0f));
}

// Max pooling with ceil_mode equals max pooling (floor) over the input with -inf rows and columns
// appended to reach the last window: same values, same argmax, same gradient.
TEST_CASE("MaxPool2d ceil_mode: PyTorch's output size and the windows past the end") {
  struct Case {
    int64_t h, w, k, s, p, ho, wo;
  };
  // Output sizes from torch.nn.MaxPool2d(k, s, p, ceil_mode=True).
  for (const Case& c : {Case{5, 5, 2, 2, 0, 3, 3}, Case{6, 7, 3, 2, 1, 4, 4}, Case{13, 13, 3, 2, 0, 6, 6},
                        Case{4, 4, 2, 2, 0, 2, 2}, Case{7, 5, 3, 3, 1, 3, 2}, Case{9, 9, 3, 2, 1, 5, 5}}) {
    CAPTURE(c.h);
    CAPTURE(c.w);
    CAPTURE(c.k);
    Tensor x = SeededValues({2, 3, c.h, c.w}, static_cast<uint32_t>(c.h * 31 + c.w));
    x.RequiresGrad(true);
    nn::MaxPool2d pool(c.k, c.s, c.p, true);
    const Tensor y = pool(x);
    REQUIRE(y.shape() == Shape{2, 3, c.ho, c.wo});
    const int64_t extra_h = (c.ho - 1) * c.s + c.k - (c.h + 2 * c.p), extra_w = (c.wo - 1) * c.s + c.k - (c.w + 2 * c.p);
    Tensor padded = x.Detach();
    const float inf = std::numeric_limits<float>::infinity();
    if (extra_h > 0) padded = Concat({padded, Tensor::Full({2, 3, extra_h, c.w}, -inf)}, 2);
    if (extra_w > 0) padded = Concat({padded, Tensor::Full({2, 3, padded.size(2), extra_w}, -inf)}, 3);
    padded.RequiresGrad(true);
    const Tensor want = MaxPool2d(padded, Pool2dOptions{c.k, c.k, c.s, c.s, c.p, c.p});
    CHECK(DifferingBits(y, want) == 0);
    const Tensor g = SeededValues(y.shape(), 7);
    Sum(Mul(y, g)).Backward();
    Sum(Mul(want, g)).Backward();
    CHECK(DifferingBits(x.grad(), padded.grad().Slice(2, 0, c.h).Slice(3, 0, c.w)) == 0);
  }
  Pool2dOptions avg{2, 2, 2, 2};
  avg.ceil_mode = true;
  CHECK_THROWS(AvgPool2d(Tensor::Zeros({1, 1, 5, 5}), avg));
}

TEST_CASE("mean over several dimensions: the dimensions merged last, then one canonical mean") {
  const Tensor x = SeededValues({2, 3, 4, 5}, 11);
  const Tensor m13 = Mean(x, {3, 1});
  CHECK(m13.shape() == Shape{2, 4});
  CHECK(DifferingBits(m13, Mean(x.Permute({0, 2, 1, 3}).Reshape({2, 4, 15}), -1)) == 0);
  CHECK(Mean(x, {-1, -2}, true).shape() == Shape{2, 3, 1, 1});
  CHECK(DifferingBits(Mean(x, {2, 3}), Mean(x.Reshape({2, 3, 20}), -1)) == 0);
  CHECK(DifferingBits(Mean(x, {1}), Mean(x, 1)) == 0);
  CHECK(Mean(x, std::vector<int64_t>{}).dim() == 0);
  const std::vector<float> v = Values(x), got = Values(m13);
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t c = 0; c < 4; ++c) {
      double sum = 0;
      for (int64_t b = 0; b < 3; ++b) {
        for (int64_t d = 0; d < 5; ++d) sum += v[((a * 3 + b) * 4 + c) * 5 + d];
      }
      CHECK(got[a * 4 + c] == doctest::Approx(sum / 15).epsilon(1e-6));
    }
  }
  CHECK_THROWS(Mean(x, {1, -3}));
  Tensor xg = x.Detach();
  xg.RequiresGrad(true);
  Sum(Mean(xg, {0, 2})).Backward();
  CHECK(Values(xg.grad())[0] == doctest::Approx(1.0 / 8));
}

TEST_CASE("AdaptiveAvgPool2d: PyTorch's windows, each the mean of its elements") {
  const Tensor x = SeededValues({2, 3, 7, 6}, 5);
  const std::vector<float> v = Values(x);
  for (const auto& size : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 3}, {3, 4}, {5, 5}, {7, 6}}) {
    // Plain variables, not a structured binding: doctest's CAPTURE takes them in a lambda, which
    // C++17 does not allow for bindings (clang refuses it).
    const int64_t oh = size.first, ow = size.second;
    CAPTURE(oh);
    CAPTURE(ow);
    nn::AdaptiveAvgPool2d pool(oh, ow);
    const Tensor y = pool(x);
    REQUIRE(y.shape() == Shape{2, 3, oh, ow});
    const std::vector<float> got = Values(y);
    for (int64_t plane = 0; plane < 6; ++plane) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          const int64_t r0 = i * 7 / oh, r1 = ((i + 1) * 7 + oh - 1) / oh;
          const int64_t c0 = j * 6 / ow, c1 = ((j + 1) * 6 + ow - 1) / ow;
          double sum = 0;
          for (int64_t r = r0; r < r1; ++r) {
            for (int64_t c = c0; c < c1; ++c) sum += v[(plane * 7 + r) * 6 + c];
          }
          CHECK(got[(plane * oh + i) * ow + j] == doctest::Approx(sum / ((r1 - r0) * (c1 - c0))).epsilon(1e-6));
        }
      }
    }
  }
  CHECK(DifferingBits(AdaptiveAvgPool2d(x, 1, 1), Mean(x, {2, 3}, true)) == 0);
  CHECK(DifferingBits(AdaptiveAvgPool2d(x, 7, 3), AvgPool2d(x, Pool2dOptions{1, 2, 1, 2})) == 0);
  CHECK(nn::AdaptiveAvgPool2d(0, 2)(x).shape() == Shape{2, 3, 7, 2});  // 0: the input's size (None)
  CHECK(AdaptiveAvgPool2d(x.Select(0, 0), 3, 4).shape() == Shape{3, 3, 4});
  Tensor xg = x.Detach();
  xg.RequiresGrad(true);
  Sum(AdaptiveAvgPool2d(xg, 3, 4)).Backward();
  CHECK(xg.grad().shape() == x.shape());
}

TEST_CASE("ChannelShuffle: channel g * (C / groups) + k goes to k * groups + g") {
  const Tensor x = SeededValues({2, 6, 2, 3}, 3);
  const std::vector<float> v = Values(x), got = Values(nn::ChannelShuffle(3)(x));
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t c = 0; c < 6; ++c) {
      const int64_t g = c / 2, k = c % 2, to = k * 3 + g;
      for (int64_t e = 0; e < 6; ++e) CHECK(got[(n * 6 + to) * 6 + e] == v[(n * 6 + c) * 6 + e]);
    }
  }
  CHECK_THROWS(ChannelShuffle(x, 4));
}

TEST_CASE("StochasticDepth: whole rows (or the whole batch) dropped from a Dropout's stream") {
  const Tensor x = SeededValues({64, 2, 3}, 9);
  const std::vector<float> v = Values(x);
  nn::StochasticDepth row(0.25f, true, Generator(4, "dropout/0"));
  const std::vector<float> got = Values(row(x));
  CHECK(row.generator().offset == 64);
  // The mask is Dropout's over one word per row, from the same stream and offset.
  const std::vector<float> mask = Values(Dropout(Tensor::Ones({64}), 0.25f, true, 4, StreamId("dropout/0"), 0));
  int dropped = 0;
  for (int64_t n = 0; n < 64; ++n) {
    dropped += mask[n] == 0.0f;
    for (int64_t e = 0; e < 6; ++e) CHECK(got[n * 6 + e] == v[n * 6 + e] * mask[n]);
  }
  CHECK(dropped > 4);
  CHECK(dropped < 32);

  nn::StochasticDepth batch(0.5f, false, Generator(4, "dropout/1"));
  for (int call = 0; call < 4; ++call) {
    const std::vector<float> b = Values(batch(x));
    const float scale = b[0] / v[0];
    CHECK((scale == 0.0f || scale == 2.0f));
    for (size_t i = 0; i < v.size(); ++i) CHECK(b[i] == v[i] * scale);
  }
  CHECK(batch.generator().offset == 4);

  batch.Eval();
  CHECK(DifferingBits(batch(x), x) == 0);
  nn::StochasticDepth none(0.0f, true, Generator(4, "dropout/2"));
  CHECK(DifferingBits(none(x), x) == 0);
  nn::StochasticDepth all(1.0f, true, Generator(4, "dropout/3"));
  for (float e : Values(all(x))) CHECK(e == 0.0f);
  CHECK_THROWS(nn::StochasticDepth(1.5f, true, Generator()));

  // SeedDropoutStreams names its stream by module path, as a Dropout's.
  nn::Sequential seq;
  seq.Add(std::make_shared<nn::ReLU>());
  auto sd = std::make_shared<nn::StochasticDepth>(0.2f, true, Generator());
  seq.Add(sd);
  nn::SeedDropoutStreams(seq, 17);
  CHECK(sd->generator().stream == StreamId("dropout/1"));
  CHECK(sd->generator().seed == 17);

  Tensor xg = x.Detach();
  xg.RequiresGrad(true);
  nn::StochasticDepth grad_row(0.25f, true, Generator(4, "dropout/0"));
  Sum(grad_row(xg)).Backward();
  const std::vector<float> gx = Values(xg.grad());
  for (int64_t n = 0; n < 64; ++n) CHECK(gx[n * 6] == mask[n]);
}

}  // namespace
}  // namespace lockstep
