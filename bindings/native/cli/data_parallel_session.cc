#include "bindings/native/cli/data_parallel_session.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "bindings/native/cli/args.h"
#include "bindings/native/cli/c_communicator.h"

namespace lockstep_cli {

const char kDataParallelHelp[] =
    "\n"
    "Under mpirun (mpirun -np N lockstep train ...) training is data-parallel over the N processes:\n"
    "each computes its share of every batch, the gradients are combined in the contract's fixed\n"
    "order, and every hash is the one a single process prints, for any N. Rank 0 prints and writes\n"
    "the files; a state written with one number of processes resumes with another.\n";

DataParallelSession::~DataParallelSession() {
  if (group_) lockstep_data_parallel_end();
}

namespace {

char terminated_message[160];

// mpirun stops the other ranks with SIGTERM when one fails (killed, crashed, aborted): say so.
void OnTerminate(int) {
  const ssize_t written = write(2, terminated_message, strlen(terminated_message));
  (void)written;
  _exit(143);
}

}  // namespace

int DataParallelSession::Start(const char* command) {
  try {
    group_ = lockstep::distributed::ProcessGroup::Join(nullptr, nullptr);
  } catch (const lockstep::distributed::TransportError& e) {
    fprintf(stderr, "lockstep %s: %s\n", command, e.what());
    return kExitError;
  }
  if (!group_) return kExitOk;
  snprintf(terminated_message, sizeof terminated_message,
           "lockstep %s: rank %d of %d: stopped by mpirun (another rank of the job failed or was killed)\n", command,
           group_->rank(), group_->size());
  signal(SIGTERM, OnTerminate);
  communicator_ = CCommunicatorOf(*group_);
  const int status = lockstep_data_parallel_begin(&communicator_);
  if (status != LOCKSTEP_OK) return Failed(command, "data-parallel training", status);
  return kExitOk;
}

int DataParallelSession::Failed(const char* command, const char* what, int status) {
  if (!group_ || group_->size() == 1) return ApiFailure(command, what, status);
  const std::string message = "lockstep " + std::string(command) + ": rank " + std::to_string(group_->rank()) + " of " +
                              std::to_string(group_->size()) + ": " + what + " failed (" +
                              lockstep_status_name(static_cast<lockstep_status>(status)) + "): " + lockstep_last_error();
  group_->Abort(status == LOCKSTEP_ERROR_CANCELLED ? 130 : kExitError, message);
}

void DataParallelSession::Report(int64_t steps) const {
  if (!group_ || !reports()) return;
  uint64_t bytes = 0, exchanges = 0;
  if (lockstep_data_parallel_stats(&bytes, &exchanges) != LOCKSTEP_OK || steps <= 0) return;
  printf("data-parallel: %d ranks; rank 0 sent %.0f bytes per step in %.1f exchanges\n", group_->size(),
         static_cast<double>(bytes) / static_cast<double>(steps),
         static_cast<double>(exchanges) / static_cast<double>(steps));
}

}  // namespace lockstep_cli
