// A consumer of the installed C++ API (find_package(lockstep), target lockstep::cxx): builds the
// MNIST reference model, checks its golden initial hash, trains a few AdamW steps with the thread
// count set through the API, and checks that an error in user input is a lockstep::Error with a
// kind. Exit status 0 on success.
#include <cstdio>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/error.h"
#include "core/models/lenet.h"
#include "core/ops.h"
#include "core/optim/optimizer.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"

int main() {
  using namespace lockstep;
  simd::SetDefaultThreadCount(2);  // the C++ form of LOCKSTEP_NUM_THREADS
  auto model = models::MakeLeNet5(/*seed=*/2);
  const std::string golden = "6e81662d18be056c8ceae58f214a85418520a7f5550563ba17e9c0a3fdd80111";
  if (ModelHash(*model) != golden) {
    std::fprintf(stderr, "initial hash %s, expected the golden %s\n", ModelHash(*model).c_str(), golden.c_str());
    return 1;
  }
  optim::AdamW optimizer(model->NamedParameters(), optim::AdamWOptions{});
  std::vector<float> pixels(8 * 28 * 28);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>((i * 7) % 31) / 31.0f;
  const Tensor x = Tensor::FromVector({8, 1, 28, 28}, pixels);
  const Tensor y = Tensor::FromInt64({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  for (int step = 0; step < 3; ++step) {
    optimizer.ZeroGrad();
    const Tensor loss = CrossEntropy((*model)(x), y);
    loss.Backward();
    optimizer.Step();
  }
  try {
    CrossEntropy((*model)(x), Tensor::FromVector({8}, std::vector<float>(8, 1.0f)));  // float labels
    std::fprintf(stderr, "float labels were accepted\n");
    return 1;
  } catch (const Error& e) {
    std::printf("error as expected (kind %s): %s\n", ErrorKindName(e.kind()), e.what());
  }
  std::printf("C++ consumer: %s after 3 AdamW steps on %s, %zu threads\n", ModelHash(*model).c_str(),
              simd::ActiveTargetName().c_str(), simd::DefaultThreadCount());
  return 0;
}
