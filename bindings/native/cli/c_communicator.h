// A lockstep_communicator (the C ABI's transport, lockstep.h) over the processes of an MPI job: how
// the `lockstep` command trains data-parallel through liblockstep.so. On the C ABI's side of the
// layers: distributed/ sits below bindings/ and never sees lockstep.h.
#ifndef LOCKSTEP_BINDINGS_NATIVE_CLI_C_COMMUNICATOR_H_
#define LOCKSTEP_BINDINGS_NATIVE_CLI_C_COMMUNICATOR_H_

#include "distributed/process_group.h"
#include "lockstep/lockstep.h"

namespace lockstep_cli {

// Its functions call group's collectives and return nonzero (after printing why to stderr) when
// one fails; group must outlive its use.
lockstep_communicator CCommunicatorOf(lockstep::distributed::ProcessGroup& group);

}  // namespace lockstep_cli

#endif  // LOCKSTEP_BINDINGS_NATIVE_CLI_C_COMMUNICATOR_H_
