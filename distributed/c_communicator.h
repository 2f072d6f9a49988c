// A lockstep_communicator (the C ABI's transport, lockstep.h) over the processes of an MPI job: how
// the `lockstep` command trains data-parallel through liblockstep.so.
#ifndef LOCKSTEP_DISTRIBUTED_C_COMMUNICATOR_H_
#define LOCKSTEP_DISTRIBUTED_C_COMMUNICATOR_H_

#include "distributed/process_group.h"
#include "lockstep/lockstep.h"

namespace lockstep {
namespace distributed {

// Its functions call group's collectives and return nonzero (after printing why to stderr) when
// one fails; group must outlive its use.
lockstep_communicator CCommunicatorOf(ProcessGroup& group);

}  // namespace distributed
}  // namespace lockstep

#endif  // LOCKSTEP_DISTRIBUTED_C_COMMUNICATOR_H_
