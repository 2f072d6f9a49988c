#include "verify/dispute.h"

#include <stdio.h>

#include <vector>

#include "core/error.h"
#include "core/receipt/receipt.h"
#include "diagnostics/diff.h"
#include "diagnostics/trace_file.h"
#include "verify/replay.h"

namespace lockstep {
namespace verify {

namespace {

void RequireSameClaim(const receipt::Receipt& a, const receipt::Receipt& b) {
  auto same = [&](bool equal, const char* what) {
    LOCKSTEP_REQUIRE(equal, a.path << " and " << b.path << " are not receipts of the same claimed run: their " << what
                                   << " differ");
  };
  same(a.contract == b.contract, "contract versions");
  same(a.task == b.task, "tasks");
  same(a.identity == b.identity, "identities (seed, data, configuration)");
  same(a.initial_model == b.initial_model, "initial models");
  same(a.initial_state == b.initial_state, "initial states");
}

diagnostics::TraceFile StepOnly(diagnostics::TraceFile trace, int64_t step) {
  std::vector<diagnostics::TraceRecord> kept;
  for (const diagnostics::TraceRecord& r : trace.records) {
    if (r.step == step) kept.push_back(r);
  }
  trace.records = std::move(kept);
  return trace;
}

std::string FirstValues(const diagnostics::TraceFile& trace, const diagnostics::TraceRecord& r) {
  auto it = trace.values.find(r.values);
  char text[160];
  snprintf(text, sizeof text, "min %.9g, max %.9g, mean %.9g, hash %.16s", r.min, r.max, r.mean, r.hash.c_str());
  std::string out = text;
  if (r.values.empty() || it == trace.values.end()) return out + "; no values recorded";
  out += "; values [";
  for (size_t i = 0; i < it->second.size() && i < 4; ++i) {
    snprintf(text, sizeof text, "%s%.9g", i ? ", " : "", it->second[i]);
    out += text;
  }
  return out + (it->second.size() > 4 ? ", ...]" : "]");
}

}  // namespace

DisputeResult Dispute(const DisputeOptions& o) {
  auto print = [&](const std::string& line) {
    if (o.print) o.print(line);
  };
  const receipt::Receipt a = receipt::ReadReceipt(o.a_path), b = receipt::ReadReceipt(o.b_path);
  RequireSameClaim(a, b);
  DisputeResult result;
  const int64_t n = std::min(a.last_step(), b.last_step());
  ++result.comparisons;
  if (a.ChainAt(n) == b.ChainAt(n)) {
    result.agree = true;
    print("A and B agree on every one of their " + std::to_string(n) + " common steps" +
          (a.last_step() != b.last_step() ? " (A holds " + std::to_string(a.last_step()) + ", B " +
                                                std::to_string(b.last_step()) + ")"
                                          : ""));
    return result;
  }
  // Bisection: the chains agree at lo and differ at hi; each link binds every step before it.
  int64_t lo = 0, hi = n;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    ++result.comparisons;
    (a.ChainAt(mid) == b.ChainAt(mid) ? lo : hi) = mid;
  }
  result.step = hi;
  print("first differing step: " + std::to_string(hi) + " of " + std::to_string(n) + " (bisection: " +
        std::to_string(result.comparisons) + " chain comparisons)");

  // The referee starts from the latest checkpoint before it that matches its receipt.
  const Replay replay(a, o.data);
  std::string start_path;
  int64_t start = -1;
  for (const receipt::Receipt* side : {&a, &b}) {
    const receipt::CheckpointEntry* c = side->CheckpointAtOrBefore(hi - 1);
    if (c == nullptr || c->step <= start) continue;
    try {
      const std::string path = CheckedCheckpoint(*side, *c);
      replay.CheckStart(path);  // the state both receipts record at that step
      start_path = path;
      start = c->step;
    } catch (const Error& e) {
      print(std::string("not starting from it: ") + e.what());
    }
  }
  LOCKSTEP_REQUIRE_STATE(start >= 0, "no checkpoint of either receipt at or before step " << hi - 1
                                                                                         << " matches its receipt");
  std::vector<uint8_t> trace_bytes, value_bytes;
  StepDigests at{};
  replay.Run(start_path, hi, [&](const StepDigests& d) {
    if (d.step > start) ++result.executed;
    if (d.step == hi) at = d;
    return true;
  }, hi, &trace_bytes, &value_bytes);
  const bool a_ok = Compare(a, at).empty(), b_ok = Compare(b, at).empty();
  result.supported = a_ok ? 'A' : b_ok ? 'B' : 0;
  print("referee: re-executed steps " + std::to_string(start + 1) + "-" + std::to_string(hi) + " (" +
        std::to_string(result.executed) + " steps) from the checkpoint at step " + std::to_string(start) + " (" +
        start_path + ")");
  print(a_ok ? "A's step " + std::to_string(hi) + " is the re-executed one; B's is not: " + Compare(b, at)
        : b_ok ? "B's step " + std::to_string(hi) + " is the re-executed one; A's is not: " + Compare(a, at)
               : "neither side's step " + std::to_string(hi) + " is the re-executed one: A " + Compare(a, at) +
                     "; B " + Compare(b, at));

  // The first op where the unsupported side's trace leaves the re-execution's.
  const bool blame_b = result.supported != 'B';
  const std::string& other_trace = blame_b ? o.b_trace : o.a_trace;
  const std::string& other_values = blame_b ? o.b_values : o.a_values;
  const char* other = blame_b ? "B" : "A";
  if (other_trace.empty()) {
    print(std::string("give ") + other + "'s trace of its run (--trace-" + (blame_b ? "b" : "a") +
          ") to name the first diverging op");
    return result;
  }
  diagnostics::TraceFile referee =
      diagnostics::ParseTrace(std::string(trace_bytes.begin(), trace_bytes.end()), "the referee's re-execution");
  if (!value_bytes.empty()) diagnostics::AttachValues(value_bytes, "the referee's values", &referee);
  referee = StepOnly(std::move(referee), hi);
  const diagnostics::TraceFile theirs = StepOnly(diagnostics::ReadTrace(other_trace, other_values), hi);
  LOCKSTEP_REQUIRE(!theirs.records.empty(), other_trace << " holds no record of step " << hi);
  const diagnostics::DiffResult diff = diagnostics::Diff(referee, theirs);
  if (diff.first_divergence < 0) {
    print(std::string(other) + "'s trace of step " + std::to_string(hi) +
          " is the re-execution's, op for op: its receipt does not describe its own trace");
    return result;
  }
  const diagnostics::Comparison& c = diff.comparisons[diff.first_divergence];
  result.op = c.a->Describe();
  print("first diverging op: " + result.op + " (" + std::to_string(diff.identical_before) +
        " records identical before it)");
  print("  referee: " + FirstValues(referee, *c.a));
  print(std::string("  ") + other + ":       " + FirstValues(theirs, *c.b));
  if (c.with_values) {
    print("  " + std::to_string(c.differing) + " of " + std::to_string(c.elements) + " elements differ, by up to " +
          std::to_string(static_cast<int64_t>(c.max_ulp)) + " ulp");
  }
  return result;
}

}  // namespace verify
}  // namespace lockstep
