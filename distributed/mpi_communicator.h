// lockstep::parallel::Communicator over the processes of an MPI job: the C++ API's door to
// data-parallel training (docs/distributed.md).
//
//   auto group = lockstep::distributed::ProcessGroup::Join(&argc, &argv);  // null without mpirun
//   lockstep::distributed::MpiCommunicator comm(*group);
//   lockstep::parallel::DataParallel dp(comm);   // this thread's runs are now data-parallel
//   lockstep::train::RunGpt(config, corpus, progress);   // or a loop of one's own (data_parallel.h)
#ifndef LOCKSTEP_DISTRIBUTED_MPI_COMMUNICATOR_H_
#define LOCKSTEP_DISTRIBUTED_MPI_COMMUNICATOR_H_

#include "core/parallel/communicator.h"
#include "distributed/process_group.h"

namespace lockstep {
namespace distributed {

// A failing transport throws lockstep::Error of kind kUnavailable.
class MpiCommunicator : public parallel::Communicator {
 public:
  explicit MpiCommunicator(ProcessGroup& group) : group_(group) {}
  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  void AllToAll(const void* send, const std::vector<size_t>& send_bytes, void* recv,
                const std::vector<size_t>& recv_bytes) override;
  void AllGather(const void* mine, void* all, const std::vector<size_t>& bytes) override;
  void Broadcast(void* data, size_t bytes, int root) override;
  void AllSum(int64_t* values, size_t count) override;

 private:
  ProcessGroup& group_;
};

}  // namespace distributed
}  // namespace lockstep

#endif  // LOCKSTEP_DISTRIBUTED_MPI_COMMUNICATOR_H_
