// Training progress: a bar redrawn in place on a terminal, plain lines (about 20 per run) when
// the output is piped. Both show step, loss, steps/s and the estimated time left.
#ifndef LOCKSTEP_BINDINGS_NATIVE_CLI_PROGRESS_H_
#define LOCKSTEP_BINDINGS_NATIVE_CLI_PROGRESS_H_

#include <stdint.h>
#include <stdio.h>

#include <chrono>

namespace lockstep_cli {

class Progress {
 public:
  explicit Progress(FILE* out);
  void Update(int64_t step, int64_t total, int64_t epoch, float loss);  // epoch < 0: not shown
  void Finish();  // ends the bar's line

 private:
  FILE* out_;
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lockstep_cli

#endif  // LOCKSTEP_BINDINGS_NATIVE_CLI_PROGRESS_H_
