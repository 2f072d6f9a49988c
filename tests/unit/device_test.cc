// Devices: parsing, the error when one is missing, explicit moves, and ops on the CUDA plugin's
// kernels (run here by the host emulation plugin) giving the CPU's bits, autograd included.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <string.h>

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

bool SameBits(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.ToDevice(Device::Cpu()).ToVector(), y = b.ToDevice(Device::Cpu()).ToVector();
  return x.size() == y.size() && memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
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
#endif

}  // namespace
}  // namespace lockstep
