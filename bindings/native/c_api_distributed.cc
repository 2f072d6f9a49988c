// The C ABI: data-parallel training over a caller's transport (lockstep_communicator), by
// installing the core's data-parallel context (core/parallel/data_parallel.h) on the thread.
#include <memory>
#include <string>

#include "bindings/native/c_api_internal.h"
#include "core/parallel/data_parallel.h"

using lockstep::capi::Boundary;
using lockstep::capi::Fail;
using lockstep::capi::RequireNonNull;

namespace {

// The caller's functions as a core Communicator; a nonzero return is an error of kind
// kUnavailable.
class CallerCommunicator : public lockstep::parallel::Communicator {
 public:
  explicit CallerCommunicator(const lockstep_communicator& c) : c_(c) {}
  int rank() const override { return c_.rank; }
  int size() const override { return c_.size; }
  void AllToAll(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                const std::vector<size_t>& recv_bytes) override {
    Check(c_.all_to_all(c_.user, send, send_bytes.data(), recv, recv_bytes.data()), "all_to_all");
  }
  void AllGather(const void* mine, void* all, const std::vector<size_t>& bytes) override {
    Check(c_.all_gather(c_.user, mine, all, bytes.data()), "all_gather");
  }
  void Broadcast(void* data, size_t bytes, int root) override {
    Check(c_.broadcast(c_.user, data, bytes, root), "broadcast");
  }
  void AllSum(int64_t* values, size_t count) override { Check(c_.all_sum(c_.user, values, count), "all_sum"); }

 private:
  static void Check(int status, const char* what) {
    if (status != 0) {
      throw lockstep::Error(std::string("data-parallel: the communicator's ") + what + " failed (" +
                                std::to_string(status) + ")",
                            lockstep::ErrorKind::kUnavailable);
    }
  }
  lockstep_communicator c_;
};

struct ThreadContext {
  std::unique_ptr<CallerCommunicator> communicator;
  std::unique_ptr<lockstep::parallel::DataParallel> data_parallel;
};
thread_local ThreadContext context;

}  // namespace

extern "C" {

lockstep_status lockstep_data_parallel_begin(const lockstep_communicator* comm) {
  return Boundary(__func__, [&] {
    RequireNonNull(comm, "comm");
    lockstep::capi::RequireStructSize(comm->struct_size, sizeof(lockstep_communicator), "lockstep_communicator");
    if (comm->all_to_all == nullptr || comm->all_gather == nullptr || comm->broadcast == nullptr ||
        comm->all_sum == nullptr) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT, "every function of the communicator must be set");
    }
    if (comm->size < 1 || comm->rank < 0 || comm->rank >= comm->size) {
      Fail(LOCKSTEP_ERROR_INVALID_ARGUMENT,
           "rank " + std::to_string(comm->rank) + " of " + std::to_string(comm->size) + " ranks is not a rank");
    }
    if (context.data_parallel) Fail(LOCKSTEP_ERROR_STATE, "this thread is already training data-parallel");
    context.communicator = std::make_unique<CallerCommunicator>(*comm);
    context.data_parallel = std::make_unique<lockstep::parallel::DataParallel>(*context.communicator);
  });
}

lockstep_status lockstep_data_parallel_end(void) {
  return Boundary(__func__, [&] {
    context.data_parallel.reset();
    context.communicator.reset();
  });
}

lockstep_status lockstep_data_parallel_stats(uint64_t* bytes_sent, uint64_t* exchanges) {
  return Boundary(__func__, [&] {
    RequireNonNull(bytes_sent, "bytes_sent");
    RequireNonNull(exchanges, "exchanges");
    if (!context.data_parallel) Fail(LOCKSTEP_ERROR_STATE, "this thread is not training data-parallel");
    *bytes_sent = context.data_parallel->bytes_sent();
    *exchanges = context.data_parallel->exchanges();
  });
}

}  // extern "C"
