// What does not need MPI: reading the launcher's environment.
#include <stdlib.h>

#include "distributed/process_group.h"

namespace lockstep {
namespace distributed {

int ProcessGroup::LaunchedSize() {
  // Open MPI's mpirun, then the PMI variables of other launchers (MPICH's hydra, PMIx).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* value = getenv(name);
    if (value != nullptr && atoi(value) > 0) return atoi(value);
  }
  return 0;
}

}  // namespace distributed
}  // namespace lockstep
