// The MNIST reference run (see core/train/mnist.h): prints the initial model hash, the loss with
// progress, the trained model hash, the test accuracy and the test-logits hash.
//
// usage: lockstep_mnist [--data DIR] [--epochs N] [--seed S] [--threads T] [--steps N] [--out FILE]
//        lockstep_mnist --verify-receipt RECEIPT [--sample K --sample-seed S] [--data DIR]
// --receipt FILE writes a training receipt, --verify-receipt checks one by re-execution
// (docs/verifiable-training.md): what `lockstep train mnist --receipt` and `lockstep verify-run`
// do, here on every platform this example is built for (WebAssembly, AArch64, s390x).
// Under mpirun (mpirun -np N lockstep_mnist ...) it trains data-parallel over the N processes and
// prints the same lines.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <string>

#include "core/train/mnist.h"
#include "examples/common/data_parallel_job.h"
#include "examples/common/run_options.h"
#include "simd/targets.h"
#include "simd/thread_pool.h"
#include "verify/verify_run.h"

namespace {

int Usage(const std::string& problem) {
  fprintf(stderr,
          "%s\nusage: lockstep_mnist [--data DIR] [--epochs N] [--seed S] [--threads T] [--steps N]\n"
          "                      [--test N] [--lr LR] [--target NAME] [--device D] [--out FILE]\n"
          "                      [--trace FILE [--trace-values FILE --trace-steps A-B --trace-match TEXT]]\n"
          "                      [--receipt FILE [--receipt-every N]] [--quiet]\n"
          "       lockstep_mnist --verify-receipt RECEIPT [--sample K --sample-seed S] [--data DIR]\n",
          problem.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  lockstep::train::MnistConfig config;
  config.data_dir = ".deps/data/mnist";
  bool quiet = false;
  lockstep::verify::VerifyOptions verify;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quiet") {
      quiet = true;
      continue;
    }
    if (i + 1 >= argc) return Usage("missing value after " + arg);
    const char* value = argv[++i];
    long long n = 0;
    const bool numeric = lockstep::examples::ParseInt(value, &n);
    std::string problem;
    if (lockstep::examples::ParseTraceOption(arg, value, &config.trace, &problem)) {
      if (!problem.empty()) return Usage(problem);
      continue;
    }
    if (arg == "--data") config.data_dir = verify.data = value;
    else if (arg == "--receipt") config.receipt.path = value;
    else if (arg == "--verify-receipt") verify.receipt_path = value;
    else if (arg == "--target" || arg == "--device") {
      const std::string problem = arg == "--target" ? lockstep::examples::ForceTargetByName(value)
                                                    : lockstep::examples::UseDevice(value);
      if (!problem.empty()) return Usage(problem);
    }
    else if (arg == "--lr" || arg == "--lr-gamma") {
      float v = 0;
      if (!lockstep::examples::ParseFloat(value, &v)) return Usage("expected a number after " + arg + ", got '" + value + "'");
      (arg == "--lr" ? config.lr : config.lr_gamma) = v;
    }
    else if (arg == "--out") config.save_path = value;
    else if (!numeric || n < 0) return Usage("expected a non-negative integer after " + arg + ", got '" + value + "'");
    else if (arg == "--epochs") config.epochs = n;
    else if (arg == "--seed") config.seed = static_cast<uint64_t>(n);
    else if (arg == "--steps") config.max_steps = n;
    else if (arg == "--lr-step") config.lr_step_epochs = n;
    else if (arg == "--test") config.max_test = n;
    else if (arg == "--receipt-every") config.receipt.every = n;
    else if (arg == "--sample") verify.sample = n;
    else if (arg == "--sample-seed") verify.seed = static_cast<uint64_t>(n);
    else if (arg == "--threads") lockstep::simd::SetDefaultThreadCount(n < 1 ? 1 : static_cast<size_t>(n));
    else return Usage("unknown option " + arg);
  }
  if (!verify.receipt_path.empty()) {
    try {
      if (!quiet) verify.print = [](const std::string& line) { printf("%s\n", line.c_str()); };
      const lockstep::verify::VerifyResult r = lockstep::verify::VerifyRun(verify);
      if (r.first_mismatch != 0) {
        printf("FAILED: step %lld does not match the receipt: %s\n", static_cast<long long>(r.first_mismatch),
               r.mismatch.c_str());
        return 1;
      }
      printf("VERIFIED %lld steps (%lld re-executed) on %s\n", static_cast<long long>(r.checked),
             static_cast<long long>(r.executed), lockstep::simd::ActiveTargetName().c_str());
      return 0;
    } catch (const std::exception& e) {
      fprintf(stderr, "lockstep_mnist: %s\n", e.what());
      return 2;
    }
  }
  std::unique_ptr<lockstep::examples::DataParallelJob> job;
  try {
    job = std::make_unique<lockstep::examples::DataParallelJob>(&argc, &argv);
    printf("lockstep MNIST: LeNet-5, Adam lr %g, batch %lld, seed %llu, %lld epochs, SIMD target %s, device %s\n",
           config.lr, static_cast<long long>(config.batch_size), static_cast<unsigned long long>(config.seed),
           static_cast<long long>(config.epochs), lockstep::simd::ActiveTargetName().c_str(), lockstep::CurrentKernels().device_name);
    const auto start = std::chrono::steady_clock::now();
    bool printed_initial = false;
    lockstep::train::MnistResult result = lockstep::train::RunMnist(config, [&](const lockstep::train::MnistProgress& p) {
      if (!quiet && (p.step % 20 == 0 || p.step == p.total_steps)) {
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        printf("step %5lld/%lld  epoch %lld  loss %.6f  %.1f steps/s\n", static_cast<long long>(p.step),
               static_cast<long long>(p.total_steps), static_cast<long long>(p.epoch + 1), p.loss, p.step / seconds);
        fflush(stdout);
      }
      (void)printed_initial;
    });
    printf("initial model hash  %s\n", result.initial_hash.c_str());
    printf("trained model hash  %s\n", result.trained_hash.c_str());
    printf("test accuracy       %.4f (%lld images)\n", result.test_accuracy, static_cast<long long>(result.test_examples));
    printf("test logits hash    %s\n", result.logits_hash.c_str());
    return 0;
  } catch (const std::exception& e) {
    if (job) job->Fail(1, "lockstep_mnist", e.what());
    fprintf(stderr, "lockstep_mnist: %s\n", e.what());
    return 1;
  }
}
