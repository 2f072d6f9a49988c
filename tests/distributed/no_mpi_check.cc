// A build without MPI (distributed/process_group_unavailable.cc, compiled in here whatever this
// build has): one process runs as usual, and a job of several processes is refused with the reason.
// Exits 0 when both hold (tests/distributed/run.sh).
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "distributed/process_group.h"

int main() {
  using lockstep::distributed::ProcessGroup;
  int failures = 0;
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("PMI_SIZE");
  unsetenv("PMIX_SIZE");
  if (ProcessGroup::Available() || ProcessGroup::Join(nullptr, nullptr) != nullptr) {
    printf("FAIL: without MPI and without mpirun, expected no process group\n");
    ++failures;
  }
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  if (ProcessGroup::Join(nullptr, nullptr) != nullptr) {
    printf("FAIL: a job of one process should run as one process\n");
    ++failures;
  }
  setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
  try {
    ProcessGroup::Join(nullptr, nullptr);
    printf("FAIL: a job of 3 processes was not refused\n");
    ++failures;
  } catch (const lockstep::distributed::TransportError& e) {
    const std::string message = e.what();
    if (message.find("built without MPI") == std::string::npos || message.find("3 processes") == std::string::npos) {
      printf("FAIL: unclear refusal: %s\n", e.what());
      ++failures;
    } else {
      printf("ok: refused: %s\n", e.what());
    }
  }
  return failures == 0 ? 0 : 1;
}
