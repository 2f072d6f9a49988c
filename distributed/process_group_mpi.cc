// ProcessGroup over MPI. Collectives are started non-blocking and polled, so a wait can time out
// with a message instead of hanging; counts and displacements are in bytes (MPI_BYTE).
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <string>
#include <vector>

#include "distributed/process_group.h"

namespace lockstep {
namespace distributed {

namespace {

void Check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw TransportError(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(length)));
}

int Count(size_t bytes, const char* what) {
  if (bytes > static_cast<size_t>(INT_MAX)) {
    throw TransportError(std::string(what) + ": " + std::to_string(bytes) + " bytes exceed one MPI message (2 GiB)");
  }
  return static_cast<int>(bytes);
}

// Byte counts and their displacements, in rank order.
void Layout(const size_t* bytes, int ranks, const char* what, std::vector<int>* counts, std::vector<int>* offsets) {
  size_t at = 0;
  for (int r = 0; r < ranks; ++r) {
    counts->push_back(Count(bytes[r], what));
    offsets->push_back(Count(at, what));
    at += bytes[r];
  }
}

}  // namespace

bool ProcessGroup::Available() { return true; }

std::unique_ptr<ProcessGroup> ProcessGroup::Join(int* argc, char*** argv) {
  if (LaunchedSize() == 0) return nullptr;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    Check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double timeout = 120;
  if (const char* value = getenv("LOCKSTEP_MPI_TIMEOUT")) {
    timeout = atof(value);
    if (!(timeout > 0)) throw TransportError("LOCKSTEP_MPI_TIMEOUT must be a number of seconds > 0, got '" + std::string(value) + "'");
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(rank, size, timeout));
}

ProcessGroup::ProcessGroup(int rank, int size, double timeout_seconds)
    : rank_(rank), size_(size), timeout_seconds_(timeout_seconds) {}

ProcessGroup::~ProcessGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void ProcessGroup::Wait(void* pending, const char* what) {
  MPI_Request* request = static_cast<MPI_Request*>(pending);
  const auto start = std::chrono::steady_clock::now();
  // Spin briefly (most exchanges complete within microseconds once every rank has arrived), then
  // sleep between polls: a waiting rank must not take the core from the ranks it waits for (on a
  // machine with as many ranks as cores, or more, that is what decides the speed).
  for (uint64_t polls = 0;; ++polls) {
    int done = 0;
    Check(MPI_Test(request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (polls < 2000) continue;
    if (polls % 16 == 0) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > timeout_seconds_) {
        Abort(3, "lockstep: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " + what +
                     " waited " + std::to_string(static_cast<int>(waited)) +
                     " s for the other ranks (one has stopped or hangs; LOCKSTEP_MPI_TIMEOUT sets the limit): "
                     "stopping the job");
      }
    }
    const timespec pause{0, polls < 20000 ? 20000 : 200000};  // 20 us, after 0.5 s of waiting 0.2 ms
    nanosleep(&pause, nullptr);
  }
}

void ProcessGroup::AllToAll(const void* send, const size_t* send_bytes, void* recv, const size_t* recv_bytes) {
  std::vector<int> send_counts, send_offsets, recv_counts, recv_offsets;
  Layout(send_bytes, size_, "all-to-all", &send_counts, &send_offsets);
  Layout(recv_bytes, size_, "all-to-all", &recv_counts, &recv_offsets);
  MPI_Request request;
  Check(MPI_Ialltoallv(send, send_counts.data(), send_offsets.data(), MPI_BYTE, recv, recv_counts.data(),
                       recv_offsets.data(), MPI_BYTE, MPI_COMM_WORLD, &request),
        "MPI_Ialltoallv");
  Wait(&request, "an all-to-all exchange");
}

void ProcessGroup::AllGather(const void* mine, void* all, const size_t* bytes) {
  std::vector<int> counts, offsets;
  Layout(bytes, size_, "all-gather", &counts, &offsets);
  MPI_Request request;
  Check(MPI_Iallgatherv(mine, counts[static_cast<size_t>(rank_)], MPI_BYTE, all, counts.data(), offsets.data(), MPI_BYTE,
                        MPI_COMM_WORLD, &request),
        "MPI_Iallgatherv");
  Wait(&request, "an all-gather");
}

void ProcessGroup::Broadcast(void* data, size_t bytes, int root) {
  MPI_Request request;
  Check(MPI_Ibcast(data, Count(bytes, "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD, &request), "MPI_Ibcast");
  Wait(&request, "a broadcast");
}

void ProcessGroup::AllSum(int64_t* values, size_t count) {
  // Integers only: exact whatever order MPI adds them in.
  MPI_Request request;
  Check(MPI_Iallreduce(MPI_IN_PLACE, values, Count(count, "sum"), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &request),
        "MPI_Iallreduce");
  Wait(&request, "an integer sum");
}

void ProcessGroup::Abort(int code, const std::string& message) {
  fprintf(stderr, "%s\n", message.c_str());
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  exit(code);  // MPI_Abort does not return; in case it does
}

}  // namespace distributed
}  // namespace lockstep
