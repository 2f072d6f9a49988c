// `lockstep info`: what this build and this machine give.
#include <stdio.h>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/commands.h"
#include "distributed/process_group.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {

int InfoCommand(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, &args, &error)) return UsageError("info", error);
  if (args.help) {
    fputs("usage: lockstep info\n\nPrints the library version, the numerical contract version, the SIMD targets\n"
          "this CPU can run and the one in use, the kernel thread count, and the CUDA devices the\n"
          "CUDA plugin finds (or why there are none), and whether data-parallel training over MPI\n"
          "is built in.\n",
          stdout);
    return kExitOk;
  }
  if (!args.positional.empty()) return UsageError("info", "unexpected argument '" + args.positional[0] + "'");
  const char* version = nullptr;
  int contract = 0, threads = 0;
  char available[512], active[64];
  int status = lockstep_version(&version);
  if (status == LOCKSTEP_OK) status = lockstep_contract_version(&contract);
  if (status == LOCKSTEP_OK) status = lockstep_simd_targets_available(available, sizeof available);
  if (status == LOCKSTEP_OK) status = lockstep_simd_target(active, sizeof active);
  if (status == LOCKSTEP_OK) status = lockstep_get_num_threads(&threads);
  if (status != LOCKSTEP_OK) return ApiFailure("info", "querying the library", status);
  printf("lockstep %s\n", version);
  printf("contract version: %d\n", contract);
  printf("SIMD targets available: %s\n", available);
  printf("SIMD target in use: %s\n", active);
  printf("threads: %d\n", threads);
  char devices[4096];
  int device_count = 0;
  status = lockstep_cuda_devices(devices, sizeof devices, &device_count);
  if (status != LOCKSTEP_OK) return ApiFailure("info", "listing CUDA devices", status);
  if (device_count == 0) {
    printf("CUDA devices: none (%s)\n", devices);
  } else {
    printf("CUDA devices: %d\n%s", device_count, devices);
  }
  printf("data-parallel training: %s\n", lockstep::distributed::ProcessGroup::Available()
                                               ? "over MPI (mpirun -np N lockstep train ...)"
                                               : "none (built without MPI)");
  return kExitOk;
}

}  // namespace lockstep_cli
