#include "bindings/native/cli/c_communicator.h"

#include <stdio.h>

namespace lockstep_cli {

using lockstep::distributed::ProcessGroup;
using lockstep::distributed::TransportError;

namespace {

template <class Call>
int Status(void* user, Call&& call) {
  ProcessGroup& group = *static_cast<ProcessGroup*>(user);
  try {
    call(group);
    return 0;
  } catch (const TransportError& e) {
    fprintf(stderr, "lockstep: rank %d of %d: %s\n", group.rank(), group.size(), e.what());
    return 1;
  }
}

}  // namespace

lockstep_communicator CCommunicatorOf(ProcessGroup& group) {
  lockstep_communicator c{};
  c.struct_size = sizeof(lockstep_communicator);
  c.rank = group.rank();
  c.size = group.size();
  c.user = &group;
  c.all_to_all = [](void* user, const void* send, const size_t* send_bytes, void* recv, const size_t* recv_bytes) {
    return Status(user, [&](ProcessGroup& g) { g.AllToAll(send, send_bytes, recv, recv_bytes); });
  };
  c.all_gather = [](void* user, const void* mine, void* all, const size_t* bytes) {
    return Status(user, [&](ProcessGroup& g) { g.AllGather(mine, all, bytes); });
  };
  c.broadcast = [](void* user, void* data, size_t bytes, int root) {
    return Status(user, [&](ProcessGroup& g) { g.Broadcast(data, bytes, root); });
  };
  c.all_sum = [](void* user, int64_t* values, size_t count) {
    return Status(user, [&](ProcessGroup& g) { g.AllSum(values, count); });
  };
  return c;
}

}  // namespace lockstep_cli
