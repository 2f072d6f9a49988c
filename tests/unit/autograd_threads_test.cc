// A graph whose parts are built on other threads and joined on this one: one backward gives the
// gradients of the same graph built on one thread (backward keys pending nodes by their sequence
// numbers, which must not collide across threads).
#include <doctest/doctest.h>

#include <string.h>

#include <thread>
#include <vector>

#include "core/ops.h"

namespace lockstep {
namespace {

struct Part {
  Tensor w;  // a leaf of this part
  Tensor y;  // the part's output, [4]
};

// tanh(w * x) * w + x: several nodes, each one's gradient depends on its own saved values.
Part BuildPart(float scale) {
  Part p;
  p.w = Tensor::FromVector({4}, {0.5f * scale, -1.25f * scale, 2.0f * scale, 0.75f * scale});
  p.w.RequiresGrad();
  const Tensor x = Tensor::FromVector({4}, {1.5f, 0.25f, -0.5f, 3.0f});
  p.y = Add(Mul(Tanh(Mul(p.w, x)), p.w), x);
  return p;
}

std::vector<uint32_t> Bits(const Tensor& t) {
  const std::vector<float> v = t.ToVector();
  std::vector<uint32_t> bits(v.size());
  memcpy(bits.data(), v.data(), v.size() * 4);
  return bits;
}

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // the single-thread WebAssembly builds start no threads
TEST_CASE("parts of one graph built on two threads: one backward gives the single-thread gradients") {
  // Single thread: the reference.
  Part a = BuildPart(1.0f), b = BuildPart(-3.0f);
  Sum(Add(MulScalar(a.y, 2.0f), Mul(b.y, b.y))).Backward();
  const std::vector<uint32_t> expected_a = Bits(a.w.grad()), expected_b = Bits(b.w.grad());

  // Each part on a thread of its own (fresh threads: any per-thread numbering starts alike).
  Part ta, tb;
  std::thread first([&] { ta = BuildPart(1.0f); });
  first.join();
  std::thread second([&] { tb = BuildPart(-3.0f); });
  second.join();
  Sum(Add(MulScalar(ta.y, 2.0f), Mul(tb.y, tb.y))).Backward();
  CHECK(Bits(ta.w.grad()) == expected_a);
  CHECK(Bits(tb.w.grad()) == expected_b);
}
#endif

}  // namespace
}  // namespace lockstep
