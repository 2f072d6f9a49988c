// `lockstep diff A B`: where two traces first differ, and how the difference spreads.
//
// Records are aligned by (step, phase, module path, op, call index, output, parameter). Where the
// two sides decompose a module into different ops (PyTorch and lockstep, or two PyTorch
// versions), the ops that have no counterpart are left out of the comparison and the module is
// compared at its boundary: its "output" record in the forward phase and its parameters'
// gradients and updates, which both sides always record. Different trace lengths are therefore
// never a failure; traces that share almost nothing are (they describe unrelated runs).
#ifndef LOCKSTEP_DIAGNOSTICS_DIFF_H_
#define LOCKSTEP_DIAGNOSTICS_DIFF_H_

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "diagnostics/trace_file.h"

namespace lockstep {
namespace diagnostics {

// How two aligned records differ. With values for both, elementwise figures; without, the
// statistics' relative difference stands in for them.
struct Comparison {
  const TraceRecord* a = nullptr;
  const TraceRecord* b = nullptr;
  bool identical = false;
  bool with_values = false;
  int64_t elements = 0, differing = -1;  // differing: -1 when unknown (no values)
  double max_ulp = 0, max_abs = 0, max_rel = 0;
  double stat_rel = 0;  // largest relative difference of min, max, mean, l2 (and NaN/Inf counts)
  double Severity() const { return with_values ? max_rel : stat_rel; }
};

struct OpAgreement {
  std::string phase, op;
  int64_t compared = 0, identical = 0;
  double max_ulp = -1, max_rel = 0;  // max_ulp -1: no values
};

struct ModuleSpread {
  std::string module;
  const TraceRecord* first = nullptr;         // where divergence enters this module (A's record)
  std::map<int64_t, double> worst_by_step;    // the largest severity per training step
  double worst_eval = -1;                     // ... over the eval and sample phases (-1: none differ)
};

struct DiffResult {
  int64_t compared = 0, identical = 0, different = 0, only_a = 0, only_b = 0;
  std::vector<Comparison> comparisons;  // in A's order
  int64_t first_divergence = -1;        // index into comparisons
  int64_t identical_before = 0;         // identical comparisons before the first divergence
  std::vector<ModuleSpread> modules;    // where divergence enters, in A's order
  std::vector<OpAgreement> ops;         // agreement per (phase, op), in A's order
  std::map<std::string, int64_t> only_a_ops, only_b_ops;  // "phase op" -> records without a counterpart
  bool same() const { return different == 0; }
};

// Throws lockstep::Error (kind kArgument) when the traces do not describe the same run: fewer than
// a tenth of the smaller trace's records align, or none at all.
DiffResult Diff(const TraceFile& a, const TraceFile& b);

// The text report: the first divergence, what was still identical, the spread per module and the
// agreement per op (at most max_rows rows per table).
std::string FormatReport(const DiffResult& result, const TraceFile& a, const TraceFile& b, int max_rows = 20);

// A self-contained HTML page: divergence per module over the steps as a coloured grid, the first
// divergence and the per-op agreement.
std::string HtmlReport(const DiffResult& result, const TraceFile& a, const TraceFile& b);

// The distance between two float32 values in units in the last place (adjacent floats are 1
// apart, -0 and +0 are 0 apart; NaN against a number is infinite, NaN against NaN 0).
double UlpDistance(float a, float b);

}  // namespace diagnostics
}  // namespace lockstep

#endif  // LOCKSTEP_DIAGNOSTICS_DIFF_H_
