// The processes of an MPI job (Debian's Open MPI), as lockstep's data-parallel training uses them:
// bytes moved between ranks and exact integer sums, nothing else (no floating-point reduction of
// MPI's is ever used: lockstep adds partial sums itself, in its fixed order). Depends on MPI only,
// so both the C ABI's command-line tool and C++ programs use it (docs/distributed.md).
//
// Every call waits at most a timeout (LOCKSTEP_MPI_TIMEOUT seconds, default 120) for the other
// ranks; past it the process says which call and rank waited and stops the whole job, so a rank
// that died or hangs never leaves the others waiting forever.
#ifndef LOCKSTEP_DISTRIBUTED_PROCESS_GROUP_H_
#define LOCKSTEP_DISTRIBUTED_PROCESS_GROUP_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep {
namespace distributed {

// A failed MPI call, or a distributed run this build cannot do.
class TransportError : public std::runtime_error {
 public:
  explicit TransportError(const std::string& message) : std::runtime_error(message) {}
};

class ProcessGroup {
 public:
  // Whether this build has MPI.
  static bool Available();
  // The job size its launcher (mpirun) announces in the environment; 0 when not launched by one.
  static int LaunchedSize();
  // Joins the job when this process was launched by mpirun (MPI_Init); null when it was not.
  // Throws TransportError when launched with more than one process by a build without MPI.
  static std::unique_ptr<ProcessGroup> Join(int* argc, char*** argv);
  ~ProcessGroup();  // MPI_Finalize
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The collectives of lockstep::parallel::Communicator, with the same meaning; TransportError on
  // failure.
  void AllToAll(const void* send, const size_t* send_bytes, void* recv, const size_t* recv_bytes);
  void AllGather(const void* mine, void* all, const size_t* bytes);
  void Broadcast(void* data, size_t bytes, int root);
  void AllSum(int64_t* values, size_t count);
  // Stops every process of the job (MPI_Abort) with this exit code, after printing message.
  [[noreturn]] void Abort(int code, const std::string& message);

 private:
  ProcessGroup(int rank, int size, double timeout_seconds);
  void Wait(void* request, const char* what);
  int rank_, size_;
  double timeout_seconds_;
};

}  // namespace distributed
}  // namespace lockstep

#endif  // LOCKSTEP_DISTRIBUTED_PROCESS_GROUP_H_
