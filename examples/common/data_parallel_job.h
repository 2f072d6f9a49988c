// The examples under mpirun (docs/distributed.md): `mpirun -np N lockstep_gpt ...` joins the MPI
// job and trains data-parallel over its processes (the C++ API: distributed/mpi_communicator.h);
// rank 0 prints. Every line it prints is the one a single process prints, for any N.
#ifndef LOCKSTEP_EXAMPLES_COMMON_DATA_PARALLEL_JOB_H_
#define LOCKSTEP_EXAMPLES_COMMON_DATA_PARALLEL_JOB_H_

#include <stdio.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "core/parallel/data_parallel.h"
#include "distributed/mpi_communicator.h"
#include "distributed/process_group.h"

namespace lockstep {
namespace examples {

class DataParallelJob {
 public:
  // Joins when launched by mpirun (throws distributed::TransportError when this build has no MPI).
  DataParallelJob(int* argc, char*** argv) : group_(distributed::ProcessGroup::Join(argc, argv)) {
    if (!group_) return;
    communicator_ = std::make_unique<distributed::MpiCommunicator>(*group_);
    data_parallel_ = std::make_unique<parallel::DataParallel>(*communicator_);
    // Only rank 0 prints: the others write nowhere.
    if (group_->rank() != 0 && freopen("/dev/null", "w", stdout) == nullptr) perror("freopen");
  }
  ~DataParallelJob() {
    data_parallel_.reset();
    communicator_.reset();
  }
  // An error on one rank: the others may wait for it, so stop them all.
  [[noreturn]] void Fail(int code, const char* program, const char* message) {
    if (group_ && group_->size() > 1) {
      group_->Abort(code, std::string(program) + ": rank " + std::to_string(group_->rank()) + ": " + message);
    }
    fprintf(stderr, "%s: %s\n", program, message);
    exit(code);
  }

 private:
  std::unique_ptr<distributed::ProcessGroup> group_;
  std::unique_ptr<distributed::MpiCommunicator> communicator_;
  std::unique_ptr<parallel::DataParallel> data_parallel_;
};

}  // namespace examples
}  // namespace lockstep

#endif  // LOCKSTEP_EXAMPLES_COMMON_DATA_PARALLEL_JOB_H_
