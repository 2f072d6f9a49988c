#include "distributed/mpi_communicator.h"

#include "core/error.h"

namespace lockstep {
namespace distributed {

namespace {

template <class Call>
void Transport(Call&& call) {
  try {
    call();
  } catch (const TransportError& e) {
    throw Error(std::string("data-parallel: ") + e.what(), ErrorKind::kUnavailable);
  }
}

}  // namespace

void MpiCommunicator::AllToAll(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                               const std::vector<size_t>& recv_bytes) {
  Transport([&] { group_.AllToAll(send, send_bytes.data(), recv, recv_bytes.data()); });
}

void MpiCommunicator::AllGather(const void* mine, void* all, const std::vector<size_t>& bytes) {
  Transport([&] { group_.AllGather(mine, all, bytes.data()); });
}

void MpiCommunicator::Broadcast(void* data, size_t bytes, int root) {
  Transport([&] { group_.Broadcast(data, bytes, root); });
}

void MpiCommunicator::AllSum(int64_t* values, size_t count) {
  Transport([&] { group_.AllSum(values, count); });
}

}  // namespace distributed
}  // namespace lockstep
