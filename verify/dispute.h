// `lockstep dispute A B`: two receipts of the same claimed run that disagree. The first step where
// their chains differ is found by bisection; a referee re-executes that step from the last state
// both agree on (a checkpoint of either receipt), says which side the re-execution supports, and,
// given the parties' traces, names the first op where the other side left the computation
// (docs/verifiable-training.md).
#ifndef LOCKSTEP_VERIFY_DISPUTE_H_
#define LOCKSTEP_VERIFY_DISPUTE_H_

#include <stdint.h>

#include <functional>
#include <string>

namespace lockstep {
namespace verify {

struct DisputeOptions {
  std::string a_path, b_path;
  std::string a_trace, b_trace;                // each party's trace of its run (--trace), optional
  std::string a_values, b_values;              // their values sidecars (--trace-values), optional
  std::string data;  // the training data (Replay); empty: the task's default
  std::function<void(const std::string& line)> print;
};

struct DisputeResult {
  bool agree = false;          // the chains are the same over every common step
  int64_t step = 0;            // the first differing step
  int64_t comparisons = 0;     // chain comparisons of the bisection
  int64_t executed = 0;        // steps the referee re-executed
  char supported = 0;          // 'A', 'B', or 0 when the re-execution matches neither
  std::string op;              // the first diverging op (with the other side's trace), or empty
};

DisputeResult Dispute(const DisputeOptions& options);

}  // namespace verify
}  // namespace lockstep

#endif  // LOCKSTEP_VERIFY_DISPUTE_H_
