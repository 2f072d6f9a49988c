// Devices: parsing, the error when one is missing, explicit moves, and ops on the CUDA plugin's
// kernels (run here by the host emulation plugin) giving the CPU's bits, autograd included.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/backend/device.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/tensor.h"

namespace lockstep {
namespace {

#ifdef LOCKSTEP_EMULATED_PLUGIN
// Before anything loads the plugin (once per process): the emulation stands in for the GPU.
const bool plugin_selected = [] { return setenv("LOCKSTEP_CUDA_PLUGIN", LOCKSTEP_EMULATED_PLUGIN, 1) == 0; }();
#endif

std::string ErrorOf(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("device names parse; others are refused naming the accepted forms") {
  CHECK(Device::Parse("cpu") == Device::Cpu());
  CHECK(Device::Parse("cuda") == Device::Cuda(0));
  CHECK(Device::Parse("cuda:3").index == 3);
  CHECK(Device::Cuda(2).ToString() == "cuda:2");
  for (const char* bad : {"gpu", "cuda:", "cuda:x", "CUDA", "cuda:123456789", ""}) {
    try {
      Device::Parse(bad);
      FAIL("accepted ", bad);
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("expected cpu, cuda or cuda:N") != std::string::npos);
    }
  }
}

TEST_CASE("a missing device throws why and leaves the current device alone") {
  const std::string why = ErrorOf([] { SetCurrentDevice(Device::Cuda(7)); });
  CHECK(why.find("device cuda:7 is not available") != std::string::npos);
  CHECK(CurrentDevice() == Device::Cpu());
  CHECK(std::string(CurrentKernels().device_name) == "cpu");
  CHECK(Tensor::Zeros({3}).device() == Device::Cpu());
}

#ifdef LOCKSTEP_EMULATED_PLUGIN
bool SameBits(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.ToDevice(Device::Cpu()).ToVector(), y = b.ToDevice(Device::Cpu()).ToVector();
  return x.size() == y.size() && memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

TEST_CASE("the CUDA plugin (host emulation) computes the CPU's bits, forward and backward") {
  REQUIRE(plugin_selected);
  const CudaDeviceListing listing = ListCudaDevices();
  REQUIRE(listing.devices.size() == 1);
  CHECK(listing.devices[0].find("host emulation") != std::string::npos);

  std::vector<float> xs(6 * 33), ws(33 * 10);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>((i * 37) % 101) / 17.0f - 2.5f;
  for (size_t i = 0; i < ws.size(); ++i) ws[i] = static_cast<float>((i * 53) % 89) / 41.0f - 1.0f;
  auto run = [&](Tensor x, Tensor w) {
    w.RequiresGrad();
    Tensor loss = Sum(LogSoftmax(GeluErf(Matmul(x, w)), -1));
    loss.Backward();
    return std::vector<Tensor>{loss, w.grad()};
  };
  const Tensor x = Tensor::FromVector({6, 33}, xs), w = Tensor::FromVector({33, 10}, ws);
  const std::vector<Tensor> on_cpu = run(x, w.Clone());
  std::vector<Tensor> on_cuda;
  {
    DeviceScope scope(Device::Cuda());
    CHECK(CurrentDevice() == Device::Cuda(0));
    const Tensor xd = x.ToDevice(Device::Cuda()), wd = w.ToDevice(Device::Cuda());
    CHECK(xd.device() == Device::Cuda(0));
    on_cuda = run(xd, wd);
    CHECK(on_cuda[0].device() == Device::Cuda(0));
    CHECK(on_cuda[1].device() == Device::Cuda(0));
    // An op given a tensor from another device refuses, naming both.
    const std::string why = ErrorOf([] {
      DeviceScope inner(Device::Cuda());
      Add(Tensor::Zeros({2}).ToDevice(Device::Cuda()), Tensor::Ones({2}).ToDevice(Device::Cpu()));
    });
    CHECK(why.find("is on cpu but the current device is cuda:0") != std::string::npos);
  }
  CHECK(CurrentDevice() == Device::Cpu());
  CHECK(SameBits(on_cpu[0], on_cuda[0]));
  CHECK(SameBits(on_cpu[1], on_cuda[1]));
  // Non-contiguous views move as their elements in row-major order.
  const Tensor t = x.Transpose(0, 1);
  CHECK(SameBits(t.Contiguous(), t.ToDevice(Device::Cuda())));
}

// Values with specials sprinkled in (NaN, +-0, +-inf, a subnormal) at fixed places.
std::vector<float> Values(size_t n, unsigned seed, bool specials) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 2654435761u + seed * 40503u) % 2003) / 401.0f - 2.5f;
  if (specials && n > 8) {
    const float inf = __builtin_inff();
    v[1] = __builtin_nanf("");
    v[3] = -0.0f;
    v[4] = 0.0f;
    v[5] = inf;
    v[6] = -inf;
    v[7] = 1e-40f;
  }
  return v;
}

// Runs f on the CPU and on the CUDA device (inputs moved there, parameters requiring gradients)
// and checks that every output and every parameter gradient has the same bits.
void ExpectSameOnDevice(const std::vector<Tensor>& inputs, const std::vector<Tensor>& params,
                        std::vector<Tensor> (*f)(const std::vector<Tensor>&, const std::vector<Tensor>&)) {
  auto run = [&](Device device) {
    DeviceScope scope(device);
    std::vector<Tensor> in, p;
    for (const Tensor& t : inputs) in.push_back(t.ToDevice(device));
    for (const Tensor& t : params) p.push_back(t.ToDevice(device).Clone().Detach().RequiresGrad());
    std::vector<Tensor> outs = f(in, p);
    if (!params.empty()) Sum(outs[0]).Backward();
    for (const Tensor& t : p) outs.push_back(t.grad());
    return outs;
  };
  const std::vector<Tensor> cpu = run(Device::Cpu()), cuda = run(Device::Cuda());
  REQUIRE(cpu.size() == cuda.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    CAPTURE(i);
    CHECK(cuda[i].device() == Device::Cuda(0));
    CHECK(SameBits(cpu[i], cuda[i]));
  }
}

TEST_CASE("the CUDA plugin's layer kernels (host emulation) match the CPU, edge geometries included") {
  SUBCASE("broadcasts of every pattern, and the general fallback") {
    const Tensor x = Tensor::FromVector({3, 4, 5}, Values(60, 1, true));
    const Tensor row = Tensor::FromVector({3, 1, 1}, Values(3, 2, false));
    const Tensor mid = Tensor::FromVector({1, 4, 1}, Values(4, 3, false));
    const Tensor tail = Tensor::FromVector({5}, Values(5, 4, false));
    const Tensor gap = Tensor::FromVector({3, 1, 5}, Values(15, 5, true));
    const Tensor unit = Tensor::FromVector({3, 1, 4, 1}, Values(12, 13, false));  // around a size-1 dim
    ExpectSameOnDevice({x}, {row, mid, tail, gap, unit}, [](const std::vector<Tensor>& in, const std::vector<Tensor>& p) {
      const Tensor y = Add(Mul(Sub(in[0], p[0]), p[1]), Div(p[2], in[0]));
      const Tensor z = Add(Add(y, p[3]), Mul(in[0].Reshape({3, 1, 4, 5}), p[4]).Reshape({3, 4, 5}));
      // (Maximum and Minimum have no gradient: compared only)
      return std::vector<Tensor>{z, Maximum(z, Minimum(p[3], in[0]))};
    });
  }
  SUBCASE("copies of permuted and sliced views") {
    const Tensor x = Tensor::FromVector({2, 3, 4, 5}, Values(120, 6, true));
    ExpectSameOnDevice({x}, {}, [](const std::vector<Tensor>& in, const std::vector<Tensor>&) {
      return std::vector<Tensor>{in[0].Permute({2, 0, 3, 1}).Slice(0, 1, 4, 2).Contiguous(),
                                 in[0].Transpose(1, 3).Clone(), in[0].Select(1, 2).Clone()};
    });
  }
  SUBCASE("convolution with stride, padding, dilation and groups; max pooling with padding") {
    const Tensor x = Tensor::FromVector({3, 4, 9, 8}, Values(3 * 4 * 9 * 8, 7, true));
    const Tensor w = Tensor::FromVector({6, 2, 3, 2}, Values(6 * 2 * 3 * 2, 8, false));
    const Tensor b = Tensor::FromVector({6}, Values(6, 9, false));
    ExpectSameOnDevice({x}, {w, b}, [](const std::vector<Tensor>& in, const std::vector<Tensor>& p) {
      Conv2dOptions o;
      o.stride_h = 2; o.stride_w = 1; o.padding_h = 1; o.padding_w = 2; o.dilation_h = 2; o.groups = 2;
      const Tensor y = Conv2d(in[0], p[0], p[1], o);
      const Tensor pooled = MaxPool2d(Relu(y), Pool2dOptions{3, 2, 2, 2, 1, 1});
      return std::vector<Tensor>{pooled, y};
    });
  }
  SUBCASE("the composed modules: ceil_mode max pooling, adaptive pooling, bounded activations, stochastic depth") {
    const Tensor x = Tensor::FromVector({4, 6, 7, 5}, Values(4 * 6 * 7 * 5, 14, false));
    ExpectSameOnDevice({}, {x}, [](const std::vector<Tensor>&, const std::vector<Tensor>& p) {
      const Tensor wide = MulScalar(p[0], 3.0f);  // [-7.5, 7.5]: every bound of the activations
      Pool2dOptions o{3, 3, 2, 2, 1, 1};
      o.ceil_mode = true;  // 7 x 5 -> 4 x 3, the last windows past the end
      const Tensor pooled = MaxPool2d(ChannelShuffle(Hardswish(wide), 3), o);
      const Tensor adaptive = AdaptiveAvgPool2d(Silu(wide), 3, 4);
      const Tensor dropped = StochasticDepth(Relu6(wide), 0.5f, true, true, 1, 2, 0);
      const Tensor mean = Mean(Hardsigmoid(wide), {1, 3}, true);
      const Tensor total = Add(Add(Sum(pooled), Sum(adaptive)), Add(Sum(dropped), Sum(mean)));
      return std::vector<Tensor>{total, pooled, adaptive, dropped, mean};
    });
  }
  SUBCASE("LayerNorm and embedding rows (repeated ids), into a cross-entropy loss") {
    const Tensor ids = Tensor::FromInt64({2, 6}, {3, 1, 3, 0, 4, 3, 1, 1, 2, 0, 4, 4});
    const Tensor targets = Tensor::FromInt64({12}, {0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4});
    const Tensor table = Tensor::FromVector({5, 7}, Values(35, 10, false));
    const Tensor gain = Tensor::FromVector({7}, Values(7, 11, false));
    const Tensor shift = Tensor::FromVector({7}, Values(7, 12, false));
    ExpectSameOnDevice({ids, targets}, {table, gain, shift}, [](const std::vector<Tensor>& in, const std::vector<Tensor>& p) {
      const Tensor h = LayerNorm(Embedding(in[0], p[0]), 1, p[1], p[2], 1e-5f);
      return std::vector<Tensor>{CrossEntropy(h.Reshape({12, 7}), in[1]), h};
    });
  }
}
// cudaMalloc memory is not addressable from the host: neither is the emulation's, so a core that
// dereferences device data instead of calling a kernel or a copy fails here as it would on a GPU.
TEST_CASE("the emulated CUDA device's memory: the host cannot touch it, the device's copies and kernels can") {
  const DeviceScope cuda(Device::Cuda(0));
  const Tensor t = Tensor::FromVector({4}, {1.0f, 2.0f, 3.0f, 4.0f});
  CHECK(t.ToVector() == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});          // copy_to_host
  CHECK(Relu(Neg(t)).ToVector() == std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f});  // kernels
  int err_pipe[2];
  REQUIRE(pipe(err_pipe) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(err_pipe[1], 2);
    freopen("/dev/null", "w", stdout);  // the test framework's own crash report stays out of the log
    const volatile float first = t.data_f32()[0];  // the host reading device memory
    _exit(first == 1.0f ? 0 : 3);
  }
  close(err_pipe[1]);
  std::string err;
  char buffer[512];
  for (ssize_t got; (got = read(err_pipe[0], buffer, sizeof buffer)) > 0;) err.append(buffer, static_cast<size_t>(got));
  close(err_pipe[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(err.find("the host dereferenced emulated CUDA device memory") != std::string::npos);
}
#endif

}  // namespace
}  // namespace lockstep
