// Traces (core/trace) and their comparison (diagnostics/): what a training step records, that the
// same run traced twice is identical record for record, that a one-ulp change is found where it
// was made, and that bad trace files get clear errors.
#include <doctest/doctest.h>

#include <stdio.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/io/byte_order.h"
#include "core/models/lenet.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "core/trace/bits_hash.h"
#include "core/trace/summary.h"
#include "core/trace/trace.h"
#include "simd/thread_pool.h"
#include "diagnostics/diff.h"
#include "diagnostics/json_line.h"
#include "diagnostics/trace_file.h"
#include "simd/philox.h"

namespace lockstep {
namespace {

// Two Adam steps of LeNet-5 on fixed data, traced; the trace's text.
std::string TraceTwoSteps(bool plant_fault) {
  auto model = models::MakeLeNet5(3);
  optim::Adam adam(model->NamedParameters(), optim::AdamOptions{});
  std::vector<float> pixels(8 * 784);
  simd::PhiloxUniform(5, 1, 0, pixels.data(), pixels.size());
  const Tensor x = Tensor::FromVector({8, 1, 28, 28}, pixels);
  const Tensor y = Tensor::FromInt64({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  trace::Options options;
  options.values_from = 1;
  options.values_to = 2;
  options.values_pattern = "grad";
  if (plant_fault) {
    options.fault_step = 2;
    options.fault_module = "3";
    options.fault_op = "conv2d";
  }
  trace::Session session(options, model.get());
  for (int step = 1; step <= 2; ++step) {
    trace::BeginStep(step);
    adam.ZeroGrad();
    CrossEntropy((*model)(x), y).Backward();
    adam.Step();
  }
  session.Finish();
  const std::vector<uint8_t> bytes = session.Bytes();
  return std::string(bytes.begin(), bytes.end());
}

TEST_CASE("a traced step records forward ops, module outputs, backward ops, gradients and updates") {
  const std::string text = TraceTwoSteps(false);
  const diagnostics::TraceFile t = diagnostics::ParseTrace(text, "memory");
  CHECK(t.header.at("producer") == "lockstep");
  bool conv = false, conv_backward = false, grad = false, update = false, output = false;
  for (const diagnostics::TraceRecord& r : t.records) {
    conv |= r.step == 1 && r.phase == "forward" && r.module == "0" && r.op == "conv2d" && r.shape.size() == 4;
    conv_backward |= r.phase == "backward" && r.module == "3" && r.op == "conv2d_backward" && r.out == 1;
    grad |= r.phase == "grad" && r.param == "3.weight" && r.module == "3";
    update |= r.phase == "update" && r.param == "11.bias";
    output |= r.phase == "forward" && r.module == "11" && r.op == "output" && r.shape == std::vector<int64_t>{8, 10};
  }
  CHECK(conv);
  CHECK(conv_backward);
  CHECK(grad);
  CHECK(update);
  CHECK(output);
  // Tracing changes nothing: the run gives the same bits with and without it (same trace twice).
  CHECK(TraceTwoSteps(false) == text);
}

TEST_CASE("diff finds a one-ulp fault at the op, module and step where it was planted") {
  const diagnostics::TraceFile a = diagnostics::ParseTrace(TraceTwoSteps(false), "a");
  const diagnostics::TraceFile b = diagnostics::ParseTrace(TraceTwoSteps(true), "b");
  const diagnostics::DiffResult same = diagnostics::Diff(a, a);
  CHECK(same.same());
  CHECK(same.compared == static_cast<int64_t>(a.records.size()));
  const diagnostics::DiffResult r = diagnostics::Diff(a, b);
  REQUIRE(!r.same());
  const diagnostics::Comparison& first = r.comparisons[static_cast<size_t>(r.first_divergence)];
  CHECK(first.a->step == 2);
  CHECK(first.a->phase == "forward");
  CHECK(first.a->module == "3");
  CHECK(first.a->op == "conv2d");
  const std::string report = diagnostics::FormatReport(r, a, b);
  CHECK(report.find("FIRST DIVERGENCE: step 2 forward 3 conv2d call 0") != std::string::npos);
  CHECK(diagnostics::HtmlReport(r, a, b).find("<table>") != std::string::npos);
}

TEST_CASE("bad trace files get clear errors") {
  const std::string good = TraceTwoSteps(false);
  auto error_of = [](const std::string& text) {
    try {
      diagnostics::ParseTrace(text, "t.trace");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kFormat);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(good.substr(0, good.size() / 2)).find("truncated") != std::string::npos);
  std::string other_version = good;
  other_version.replace(other_version.find("\"lockstep_trace\":1"), 18, "\"lockstep_trace\":7");
  CHECK(error_of(other_version).find("format version 7") != std::string::npos);
  CHECK(error_of("PK\x03\x04 not json").find("not a lockstep trace") != std::string::npos);
  CHECK(error_of("").find("empty") != std::string::npos);
  std::string bad_record = good;
  bad_record.insert(bad_record.find('\n') + 1, "{\"step\":1}\n");
  CHECK(error_of(bad_record).find("t.trace:2: the record has no \"phase\"") != std::string::npos);
  // Unrelated runs: a trace of other steps shares no record.
  const diagnostics::TraceFile a = diagnostics::ParseTrace(good, "a");
  diagnostics::TraceFile b = a;
  for (diagnostics::TraceRecord& r : b.records) r.step += 100;
  CHECK_THROWS_WITH_AS(diagnostics::Diff(a, b), doctest::Contains("do not describe the same run"), Error);
}

TEST_CASE("json lines: strings with escapes, numbers, null, booleans, number arrays") {
  diagnostics::JsonObject o;
  std::string error;
  REQUIRE(diagnostics::ParseJsonLine(R"({"a":"x\"y\\z\u0041","b":-1.5e3,"c":null,"d":true,"e":[1,2,3],"f":false})", &o,
                                     &error));
  CHECK(o["a"].text == "x\"y\\zA");
  CHECK(o["b"].number == -1500.0);
  CHECK(o["c"].type == diagnostics::JsonValue::Type::kNull);
  CHECK(o["d"].boolean);
  CHECK(!o["f"].boolean);
  CHECK(o["e"].numbers == std::vector<double>{1, 2, 3});
  CHECK(!diagnostics::ParseJsonLine(R"({"a":1,})", &o, &error));
  CHECK(!diagnostics::ParseJsonLine(R"({"a":1} extra)", &o, &error));
}

TEST_CASE("the bits hash depends on every byte and the length, and on nothing else") {
  std::vector<float> v(37, 1.5f);
  const std::string h = trace::BitsHash(v.data(), v.size() * 4);
  CHECK(h.size() == 32);
  CHECK(trace::BitsHash(v.data(), v.size() * 4) == h);
  v[36] = 1.5000001f;
  CHECK(trace::BitsHash(v.data(), v.size() * 4) != h);
  CHECK(trace::BitsHash(v.data(), 36 * 4) != trace::BitsHash(v.data(), 35 * 4));
  CHECK(trace::BitsHash(nullptr, 0).size() == 32);
  CHECK(diagnostics::UlpDistance(1.0f, 1.0000001f) == 1.0);
  CHECK(diagnostics::UlpDistance(-0.0f, 0.0f) == 0.0);
}

// The bits hash of n elements, over their little-endian bytes (as on a big-endian host too).
template <class T>
std::string LittleEndianHash(const T* values, size_t n) {
  const LittleEndianBytes bytes(values, n);
  return trace::BitsHash(bytes.data(), bytes.size());
}

// Threads where the build can start them (the single-thread WebAssembly builds cannot).
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
constexpr size_t kThreadCounts[] = {1, 2};
#else
constexpr size_t kThreadCounts[] = {1};
#endif

// A record's statistics (docs/diagnostics.md): min and max, and the mean and l2 from float64 sums:
// each block of 2^14 elements into 32 accumulators by element index mod 32, combined in order, and
// the blocks' sums added in order; NaN and infinity counted, not summed. Every length around the
// pass's vectors and blocks, with and without special values, on 1 and 2 threads.
TEST_CASE("record statistics follow the documented definition") {
  constexpr size_t kBlock = 16384;
  const size_t threads_before = simd::DefaultThreadCount();
  for (size_t n : {1, 2, 3, 31, 32, 33, 63, 64, 65, 97, 1000, 1001, 4099, 16383, 16384, 16385, 40001}) {
    for (int special = 0; special < 3; ++special) {
      std::vector<float> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 2654435761u) % 1000) / 7.0f - 60.0f;
      if (special == 1 && n > 2) v[n / 2] = __builtin_nanf("");
      if (special == 2 && n > 2) v[n - 1] = -__builtin_inff();
      double sum = 0, sum_sq = 0, lo = 1e300, hi = -1e300;
      long long nans = 0, infs = 0, finite = 0;
      for (size_t begin = 0; begin < n; begin += kBlock) {
        double sums[32] = {}, squares[32] = {};
        for (size_t i = begin; i < n && i < begin + kBlock; ++i) {
          const double x = v[i];
          if (x != x) { ++nans; continue; }
          if (x - x != 0.0) { ++infs; continue; }
          ++finite;
          lo = x < lo ? x : lo;
          hi = x > hi ? x : hi;
          sums[i % 32] += x;
          squares[i % 32] += x * x;
        }
        double block_sum = 0, block_sum_sq = 0;
        for (int k = 0; k < 32; ++k) {
          block_sum += sums[k];
          block_sum_sq += squares[k];
        }
        sum += block_sum;
        sum_sq += block_sum_sq;
      }
      for (size_t threads : kThreadCounts) {
        simd::SetDefaultThreadCount(threads);
        INFO("n = " << n << ", special " << special << ", threads " << threads);
        const trace::Statistics s = trace::ComputeStatistics(DType::kFloat32, v.data(), n);
        CHECK(s.min == lo);
        CHECK(s.max == hi);
        CHECK(s.mean == sum / static_cast<double>(finite));
        CHECK(s.l2 == __builtin_sqrt(sum_sq));
        CHECK(s.nan == nans);
        CHECK(s.inf == infs);
        // The summary's hash, computed block by block with the statistics, is the bits hash.
        const std::string json = trace::SummaryJson(DType::kFloat32, v.data(), n);
        CHECK(json.find("\"hash\":\"" + LittleEndianHash(v.data(), n) + "\"") == 1);
      }
    }
  }
  simd::SetDefaultThreadCount(threads_before);
}

TEST_CASE("integer records: the summary's hash is the bits hash, block by block on any thread count") {
  const size_t threads_before = simd::DefaultThreadCount();
  for (size_t n : {1, 3, 16384, 16385, 40001}) {
    std::vector<int32_t> a(n);
    std::vector<int64_t> b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<int32_t>(i * 2654435761u);
      b[i] = static_cast<int64_t>(i) * -977;
    }
    for (size_t threads : kThreadCounts) {
      simd::SetDefaultThreadCount(threads);
      INFO("n = " << n << ", threads " << threads);
      CHECK(trace::SummaryJson(DType::kInt32, a.data(), n).find(LittleEndianHash(a.data(), n)) == 9);
      CHECK(trace::SummaryJson(DType::kInt64, b.data(), n).find(LittleEndianHash(b.data(), n)) == 9);
      const trace::Statistics s = trace::ComputeStatistics(DType::kInt64, b.data(), n);
      CHECK(s.min == static_cast<double>(b[n - 1]));
      CHECK(s.max == 0.0);
    }
  }
  simd::SetDefaultThreadCount(threads_before);
}

}  // namespace
}  // namespace lockstep
