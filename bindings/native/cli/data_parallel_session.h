// `lockstep train` started by mpirun (docs/distributed.md): joins the MPI job, has the C ABI train
// data-parallel over it, and lets rank 0 alone report. Outside mpirun it does nothing.
#ifndef LOCKSTEP_BINDINGS_NATIVE_CLI_DATA_PARALLEL_SESSION_H_
#define LOCKSTEP_BINDINGS_NATIVE_CLI_DATA_PARALLEL_SESSION_H_

#include <stdint.h>

#include <memory>

#include "distributed/process_group.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {

// The help paragraph of `lockstep train` about mpirun.
extern const char kDataParallelHelp[];

class DataParallelSession {
 public:
  DataParallelSession() = default;
  ~DataParallelSession();  // ends data-parallel training and leaves the job
  DataParallelSession(const DataParallelSession&) = delete;
  DataParallelSession& operator=(const DataParallelSession&) = delete;

  // Joins when launched by mpirun; returns kExitOk, or prints why it cannot (a build without MPI)
  // and returns kExitError.
  int Start(const char* command);
  bool active() const { return group_ != nullptr; }
  int size() const { return group_ ? group_->size() : 1; }
  // Whether this process prints progress and results: rank 0, or a process outside a job.
  bool reports() const { return !group_ || group_->rank() == 0; }
  // A failed run: prints the error (naming the rank in a job) and returns the exit status. In a job
  // of several ranks it then stops them all: the others may be waiting for this one.
  int Failed(const char* command, const char* what, int status);
  // One line for rank 0: the ranks, and what this rank sent per training step.
  void Report(int64_t steps) const;

 private:
  std::unique_ptr<lockstep::distributed::ProcessGroup> group_;
  lockstep_communicator communicator_{};
};

}  // namespace lockstep_cli

#endif  // LOCKSTEP_BINDINGS_NATIVE_CLI_DATA_PARALLEL_SESSION_H_
