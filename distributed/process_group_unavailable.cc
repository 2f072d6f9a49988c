// A build without MPI: a job of one process runs as usual; a larger one is refused with the reason.
#include <stdlib.h>

#include <string>

#include "distributed/process_group.h"

namespace lockstep {
namespace distributed {

bool ProcessGroup::Available() { return false; }

std::unique_ptr<ProcessGroup> ProcessGroup::Join(int*, char***) {
  const int size = LaunchedSize();
  if (size > 1) {
    throw TransportError("this lockstep was built without MPI, so it cannot train over the " + std::to_string(size) +
                         " processes mpirun started: install libopenmpi-dev (tools/setup.sh does) and rebuild, "
                         "or run one process");
  }
  return nullptr;
}

ProcessGroup::ProcessGroup(int rank, int size, double timeout_seconds)
    : rank_(rank), size_(size), timeout_seconds_(timeout_seconds) {}
ProcessGroup::~ProcessGroup() = default;
void ProcessGroup::AllToAll(const void*, const size_t*, void*, const size_t*) { throw TransportError("no MPI"); }
void ProcessGroup::AllGather(const void*, void*, const size_t*) { throw TransportError("no MPI"); }
void ProcessGroup::Broadcast(void*, size_t, int) { throw TransportError("no MPI"); }
void ProcessGroup::AllSum(int64_t*, size_t) { throw TransportError("no MPI"); }
void ProcessGroup::Abort(int code, const std::string&) { exit(code); }
void ProcessGroup::Wait(void*, const char*) {}

}  // namespace distributed
}  // namespace lockstep
