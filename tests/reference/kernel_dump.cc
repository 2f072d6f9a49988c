// lockstep_kernel_dump: runs every kernel on deterministic inputs and writes the inputs and
// lockstep's outputs to a fixture file that tests/reference/torch_kernels.py compares with PyTorch.
//
//   lockstep_kernel_dump [--target NAME] FILE
//
// --target forces one Highway target (simd/targets.h); the contract says the file is then
// byte-identical to the one the best target writes.
//
// Inputs come from Philox (simd/philox.h: PhiloxUint32 for bit patterns, PhiloxUniformRange for
// ranges), never from libc rand, so the fixture is the same on every machine. Elementwise and math
// inputs start with every pair (binary) or every value (unary) of a list of special values.
//
// Fixture format (little-endian):
//   "LSKDUMP1"  u32 case_count
//   per case:   str name, u32 param_count, param_count x (str key, i64 value),
//               u32 array_count, array_count x (str name, u8 dtype (0 float32, 1 int64),
//                                              u32 ndim, ndim x i64 dim, raw data)
//   str:        u32 length, bytes (no terminator)
// Arrays named "out" are lockstep's results; the others are inputs.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <utility>
#include <vector>

#include "simd/elementwise.h"
#include "simd/gemm.h"
#include "simd/math.h"
#include "simd/philox.h"
#include "simd/reduce.h"
#include "simd/targets.h"
#if __has_include("simd/softmax.h")
#include "simd/softmax.h"
#define LOCKSTEP_DUMP_HAVE_SOFTMAX 1
#else
#define LOCKSTEP_DUMP_HAVE_SOFTMAX 0
#endif

namespace {

using namespace lockstep::simd;

constexpr uint64_t kSeed = 20261130;

struct Array {
  std::string name;
  uint8_t dtype;  // 0 float32, 1 int64
  std::vector<int64_t> dims;
  std::vector<char> bytes;
};

struct Case {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> params;
  std::vector<Array> arrays;

  Case& Param(const std::string& key, int64_t value) {
    params.emplace_back(key, value);
    return *this;
  }
  Case& F32(const std::string& array_name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    Array a{array_name, 0, dims, std::vector<char>(v.size() * 4)};
    memcpy(a.bytes.data(), v.data(), a.bytes.size());
    arrays.push_back(std::move(a));
    return *this;
  }
  Case& I64(const std::string& array_name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    Array a{array_name, 1, dims, std::vector<char>(v.size() * 8)};
    memcpy(a.bytes.data(), v.data(), a.bytes.size());
    arrays.push_back(std::move(a));
    return *this;
  }
};

float FromBits(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

// Streams: every input array draws from its own Philox stream.
uint64_t g_stream = 1;

const std::vector<float>& Specials() {
  static const std::vector<float> v = [] {
    const uint32_t bits[] = {
        0x00000000u, 0x80000000u,              // +-0
        0x00000001u, 0x80000001u, 0x007FFFFFu,  // subnormals
        0x00800000u, 0x80800000u,              // +-smallest normal
        0x7F7FFFFFu, 0xFF7FFFFFu,              // +-largest finite
        0x7F800000u, 0xFF800000u,              // +-inf
        0x7FC00000u, 0xFFC00000u, 0x7F800001u,  // NaNs: canonical, x86 default, signalling
        0x3F800000u, 0xBF800000u,              // +-1
        0x3F000000u, 0x40000000u, 0xC0400000u,  // 0.5, 2, -3
        0x4B000001u, 0x33800000u,              // 2^23 + 1, 2^-24
    };
    std::vector<float> out;
    for (uint32_t b : bits) out.push_back(FromBits(b));
    return out;
  }();
  return v;
}

std::vector<float> Uniform(size_t n, float low, float high) {
  std::vector<float> v(n);
  PhiloxUniformRange(kSeed, g_stream++, 0, low, high, v.data(), n);
  return v;
}

// Any bit pattern (NaNs, infinities, subnormals included).
std::vector<float> RandomBits(size_t n) {
  std::vector<uint32_t> w(n);
  PhiloxUint32(kSeed, g_stream++, 0, w.data(), n);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = FromBits(w[i]);
  return v;
}

// Random sign (unless positive) and mantissa, binary exponent uniform in [emin, emax] (unbiased;
// emin = -127 gives subnormals).
std::vector<float> LogUniform(size_t n, int emin, int emax, bool positive) {
  std::vector<uint32_t> w(2 * n);
  PhiloxUint32(kSeed, g_stream++, 0, w.data(), w.size());
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t biased = static_cast<uint32_t>(emin + 127) + w[2 * i] % static_cast<uint32_t>(emax - emin + 1);
    const uint32_t sign = positive ? 0u : (w[2 * i + 1] & 0x80000000u);
    v[i] = FromBits(sign | (biased << 23) | (w[2 * i + 1] & 0x7FFFFFu));
  }
  return v;
}

std::vector<float> Concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

int64_t Size(const std::vector<float>& v) { return static_cast<int64_t>(v.size()); }

void AddBinary(std::vector<Case>* cases) {
  // Every pair of specials, then ordinary values over a wide range, then any bit patterns.
  std::vector<float> a, b;
  for (float x : Specials()) {
    for (float y : Specials()) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  const std::vector<float> a_wide = LogUniform(3000, -30, 30, false), b_wide = LogUniform(3000, -30, 30, false);
  const std::vector<float> a_bits = RandomBits(1000), b_bits = RandomBits(1000);
  // Close values, for cancellation in add/sub and ties in max/min.
  std::vector<float> a_near = Uniform(500, -4, 4), b_near = a_near;
  const std::vector<float> nudge = Uniform(500, -1e-6f, 1e-6f);
  for (size_t i = 0; i < b_near.size(); ++i) b_near[i] = i % 3 == 0 ? -a_near[i] : a_near[i] + nudge[i];
  a = Concat({a, a_wide, a_bits, a_near});
  b = Concat({b, b_wide, b_bits, b_near});
  const std::pair<const char*, BinaryOp> ops[] = {{"add", BinaryOp::kAdd}, {"sub", BinaryOp::kSub},
                                                  {"mul", BinaryOp::kMul}, {"div", BinaryOp::kDiv},
                                                  {"max", BinaryOp::kMax}, {"min", BinaryOp::kMin}};
  for (const auto& op : ops) {
    std::vector<float> out(a.size());
    Binary(op.second, a.data(), b.data(), out.data(), a.size());
    Case c{op.first, {}, {}};
    c.Param("kind", 0).F32("a", {Size(a)}, a).F32("b", {Size(b)}, b).F32("out", {Size(out)}, out);
    cases->push_back(std::move(c));
  }
}

void AddUnary(std::vector<Case>* cases) {
  const std::vector<float> x =
      Concat({Specials(), LogUniform(3000, -127, 127, false), RandomBits(1000), Uniform(1000, -4, 4)});
  const std::pair<const char*, UnaryOp> ops[] = {{"relu", UnaryOp::kRelu}, {"sqrt", UnaryOp::kSqrt},
                                                 {"neg", UnaryOp::kNeg}, {"abs", UnaryOp::kAbs}};
  for (const auto& op : ops) {
    std::vector<float> out(x.size());
    Unary(op.second, x.data(), out.data(), x.size());
    Case c{op.first, {}, {}};
    c.F32("x", {Size(x)}, x).F32("out", {Size(out)}, out);
    cases->push_back(std::move(c));
  }
}

void AddMath(std::vector<Case>* cases) {
  struct Domain {
    const char* name;
    MathFn fn;
    std::vector<float> x;
  };
  // Sensible domains: the range where the function is neither constant nor overflowing, a dense
  // middle range, tiny magnitudes, and random bit patterns for the tails.
  std::vector<Domain> domains;
  domains.push_back({"exp", MathFn::kExp,
                     Concat({Specials(), Uniform(3000, -104, 89), Uniform(1000, -1, 1),
                             LogUniform(500, -60, -1, false), RandomBits(500)})});
  domains.push_back({"log", MathFn::kLog,
                     Concat({Specials(), LogUniform(3000, -127, 127, true), Uniform(1000, 0.5f, 2.0f),
                             Uniform(200, 0.999f, 1.001f), RandomBits(500)})});
  domains.push_back({"tanh", MathFn::kTanh,
                     Concat({Specials(), Uniform(3000, -10, 10), Uniform(1000, -1, 1),
                             LogUniform(500, -60, -1, false), RandomBits(500)})});
  domains.push_back({"sigmoid", MathFn::kSigmoid,
                     Concat({Specials(), Uniform(3000, -30, 30), Uniform(1000, -120, 120),
                             LogUniform(500, -60, -1, false), RandomBits(500)})});
  domains.push_back({"erf", MathFn::kErf,
                     Concat({Specials(), Uniform(3000, -5, 5), Uniform(1000, -1, 1),
                             LogUniform(500, -60, -1, false), RandomBits(500)})});
  domains.push_back({"gelu_erf", MathFn::kGeluErf,
                     Concat({Specials(), Uniform(3000, -6, 6), Uniform(1000, -20, 20),
                             LogUniform(500, -60, -1, false), RandomBits(500)})});
  domains.push_back({"gelu_tanh", MathFn::kGeluTanh,
                     Concat({Specials(), Uniform(3000, -6, 6), Uniform(1000, -20, 20),
                             LogUniform(500, -60, -1, false), RandomBits(500)})});
  domains.push_back({"softplus", MathFn::kSoftplus,
                     Concat({Specials(), Uniform(3000, -20, 20), Uniform(1000, -120, 120),
                             LogUniform(500, -60, -1, false), RandomBits(500)})});
  domains.push_back({"rsqrt", MathFn::kRsqrt,
                     Concat({Specials(), LogUniform(3000, -127, 127, true), Uniform(1000, 0.01f, 100.0f),
                             RandomBits(500)})});
  for (const Domain& d : domains) {
    std::vector<float> out(d.x.size());
    Math(d.fn, d.x.data(), out.data(), d.x.size());
    Case c{d.name, {}, {}};
    c.F32("x", {Size(d.x)}, d.x).F32("out", {Size(out)}, out);
    cases->push_back(std::move(c));
  }
  {
    const std::vector<float> x =
        Concat({Specials(), LogUniform(3000, -80, 70, false), Uniform(1000, -4, 4), RandomBits(500)});
    std::vector<float> out(x.size());
    PowInt(x.data(), 2, out.data(), x.size());
    Case c{"pow_2", {}, {}};
    c.Param("exponent_x2", 4).F32("x", {Size(x)}, x).F32("out", {Size(out)}, out);
    cases->push_back(std::move(c));
  }
  {
    const std::vector<float> x = Concat({Specials(), LogUniform(3000, -127, 127, true), Uniform(1000, 0, 4),
                                         Uniform(100, -4, 0), RandomBits(500)});
    std::vector<float> out(x.size());
    PowHalf(x.data(), out.data(), x.size());
    Case c{"pow_0.5", {}, {}};
    c.Param("exponent_x2", 1).F32("x", {Size(x)}, x).F32("out", {Size(out)}, out);
    cases->push_back(std::move(c));
  }
}

// Reductions over the last axis ([outer, len]) and a middle axis ([outer, len, inner]).
void AddReductions(std::vector<Case>* cases) {
  struct Layout {
    const char* suffix;
    size_t outer, len, inner;
  };
  const Layout layouts[] = {{"last", 16, 1000, 1}, {"last_long", 2, 10000, 1}, {"middle", 4, 300, 7}};
  for (const Layout& l : layouts) {
    const size_t n = l.outer * l.len * l.inner;
    const std::vector<int64_t> dims = {static_cast<int64_t>(l.outer), static_cast<int64_t>(l.len),
                                       static_cast<int64_t>(l.inner)};
    const std::vector<int64_t> out_dims = {static_cast<int64_t>(l.outer), static_cast<int64_t>(l.inner)};
    const std::string suffix = l.suffix;
    {
      // Mixed signs and magnitudes (cancellation).
      std::vector<float> x = Uniform(n, -1, 1);
      const std::vector<float> scale = LogUniform(n, -8, 8, true);
      for (size_t i = 0; i < n; ++i) x[i] = x[i] * scale[i];
      std::vector<float> sum(l.outer * l.inner), mean(l.outer * l.inner);
      SumAxis(x.data(), l.outer, l.len, l.inner, sum.data());
      MeanAxis(x.data(), l.outer, l.len, l.inner, mean.data());
      Case s{"sum_" + suffix, {}, {}};
      s.F32("x", dims, x).F32("out", out_dims, sum);
      cases->push_back(std::move(s));
      Case m{"mean_" + suffix, {}, {}};
      m.F32("x", dims, x).F32("out", out_dims, mean);
      cases->push_back(std::move(m));
    }
    {
      // Data whose mean is not zero: the two-pass variance against torch's.
      std::vector<float> x = Uniform(n, 2, 4);
      std::vector<float> var(l.outer * l.inner);
      VarianceAxis(x.data(), l.outer, l.len, l.inner, 1, var.data());
      Case v{"var_" + suffix, {}, {}};
      v.Param("correction", 1).F32("x", dims, x).F32("out", out_dims, var);
      cases->push_back(std::move(v));
    }
    {
      // Few distinct values (ties: the lowest index wins), no zeros (torch does not order -0 < +0),
      // and one NaN in the first slice (NaN is the maximum, its first index the argmax).
      std::vector<float> x = Uniform(n, -1, 1);
      for (float& v : x) v = (static_cast<float>(static_cast<int>(v * 20.0f + 20.0f)) + 0.5f) / 20.0f - 1.0f;
      x[l.inner * (l.len / 3)] = FromBits(0x7FC00000u);
      x[l.inner * (l.len / 2)] = FromBits(0x7FC00000u);
      std::vector<float> mx(l.outer * l.inner);
      std::vector<int64_t> am(l.outer * l.inner);
      MaxAxis(x.data(), l.outer, l.len, l.inner, mx.data());
      ArgmaxAxis(x.data(), l.outer, l.len, l.inner, am.data());
      Case m{"max_" + suffix, {}, {}};
      m.F32("x", dims, x).F32("out", out_dims, mx);
      cases->push_back(std::move(m));
      Case a{"argmax_" + suffix, {}, {}};
      a.F32("x", dims, x).I64("out", out_dims, am);
      cases->push_back(std::move(a));
    }
  }
}

void AddGemm(std::vector<Case>* cases) {
  const size_t m = 67, n = 45, k = 300;  // edges in every direction; K crosses a 256 block
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const std::vector<float> a = Uniform(m * k, -1, 1), b = Uniform(k * n, -1, 1);
      std::vector<float> c(m * n);
      GemmArgs g;
      g.trans_a = ta;
      g.trans_b = tb;
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = a.data();
      g.lda = ta ? m : k;
      g.b = b.data();
      g.ldb = tb ? k : n;
      g.c = c.data();
      g.ldc = n;
      Gemm(g);  // the default pool (one thread in WebAssembly)
      const int64_t M = m, N = n, K = k;
      Case cs{std::string("gemm_") + (ta ? "T" : "N") + (tb ? "T" : "N"), {}, {}};
      cs.Param("trans_a", ta).Param("trans_b", tb);
      cs.F32("a", ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, a);
      cs.F32("b", tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, b);
      cs.F32("out", {M, N}, c);
      cases->push_back(std::move(cs));
    }
  }
}

void AddSoftmax(std::vector<Case>* cases) {
#if LOCKSTEP_DUMP_HAVE_SOFTMAX
  const size_t rows = 16, cols = 1000;
  std::vector<float> x = Uniform(rows * cols, -10, 10);
  // A row with a large common offset (the max subtraction matters) and a row of small spread.
  for (size_t j = 0; j < cols; ++j) x[cols + j] += 1000.0f;
  for (size_t j = 0; j < cols; ++j) x[2 * cols + j] *= 1e-3f;
  std::vector<float> sm(rows * cols), lsm(rows * cols);
  Softmax(x.data(), rows, cols, sm.data());
  LogSoftmax(x.data(), rows, cols, lsm.data());
  const std::vector<int64_t> dims = {static_cast<int64_t>(rows), static_cast<int64_t>(cols)};
  Case s{"softmax_last", {}, {}};
  s.F32("x", dims, x).F32("out", dims, sm);
  cases->push_back(std::move(s));
  Case l{"log_softmax_last", {}, {}};
  l.F32("x", dims, x).F32("out", dims, lsm);
  cases->push_back(std::move(l));
#else
  (void)cases;
#endif
}

bool WriteAll(FILE* f, const void* p, size_t n) { return fwrite(p, 1, n, f) == n; }
bool WriteU32(FILE* f, uint32_t v) { return WriteAll(f, &v, 4); }  // x86, AArch64, WASM: little-endian
bool WriteI64(FILE* f, int64_t v) { return WriteAll(f, &v, 8); }
bool WriteStr(FILE* f, const std::string& s) {
  return WriteU32(f, static_cast<uint32_t>(s.size())) && WriteAll(f, s.data(), s.size());
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  std::string target_name;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      target_name = argv[++i];
    } else if (path == nullptr && argv[i][0] != '-') {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (path == nullptr) {
    fprintf(stderr, "usage: lockstep_kernel_dump [--target NAME] FILE\n");
    return 2;
  }
  if (!target_name.empty()) {
    bool found = false;
    for (const Target& t : RunnableTargets()) {
      if (t.name == target_name) {
        ForceTarget(t.bits);
        found = true;
      }
    }
    if (!found) {
      fprintf(stderr, "lockstep_kernel_dump: target %s is not runnable here\n", target_name.c_str());
      return 2;
    }
  }
  std::vector<Case> cases;
  AddBinary(&cases);
  AddUnary(&cases);
  AddMath(&cases);
  AddReductions(&cases);
  AddGemm(&cases);
  AddSoftmax(&cases);

  FILE* f = fopen(path, "wb");
  if (f == nullptr) {
    perror(path);
    return 1;
  }
  bool ok = WriteAll(f, "LSKDUMP1", 8) && WriteU32(f, static_cast<uint32_t>(cases.size()));
  for (const Case& c : cases) {
    ok = ok && WriteStr(f, c.name) && WriteU32(f, static_cast<uint32_t>(c.params.size()));
    for (const auto& p : c.params) ok = ok && WriteStr(f, p.first) && WriteI64(f, p.second);
    ok = ok && WriteU32(f, static_cast<uint32_t>(c.arrays.size()));
    for (const Array& a : c.arrays) {
      ok = ok && WriteStr(f, a.name) && WriteAll(f, &a.dtype, 1) &&
           WriteU32(f, static_cast<uint32_t>(a.dims.size()));
      for (int64_t d : a.dims) ok = ok && WriteI64(f, d);
      ok = ok && WriteAll(f, a.bytes.data(), a.bytes.size());
    }
  }
  ok = (fclose(f) == 0) && ok;
  if (!ok) {
    fprintf(stderr, "lockstep_kernel_dump: writing %s failed\n", path);
    return 1;
  }
  printf("lockstep_kernel_dump: %zu cases written to %s on target %s (softmax %s)\n", cases.size(), path,
         ActiveTargetName().c_str(),
         LOCKSTEP_DUMP_HAVE_SOFTMAX ? "included" : "not built yet: simd/softmax.h missing");
  return 0;
}
