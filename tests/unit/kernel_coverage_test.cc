// Every entry of the kernel table (LOCKSTEP_KERNELS, core/backend/kernel_list.h) has a case in the
// kernel battery (the rows of tests/battery/battery_coverage.h, which the battery checks against
// its own cases) and, where it computes the forward or backward pass of a differentiable op, a
// gradient check in gradcheck_test.cc that runs it (by the op names that file registers); an entry
// without one is listed with the reason. A new X(...) line in the list fails here until it has a
// battery case and a line in one of the two tables below.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/backend/kernel_list.h"
#include "core/backend/kernel_table.h"
#include "simd/math.h"
#include "tests/battery/battery_coverage.h"
#include "tests/unit/gradcheck_registry.h"

namespace lockstep {
namespace {

// The table's entries, from the list itself.
std::vector<std::string> KernelEntries() {
#define LOCKSTEP_ENTRY_NAME(name, Name, label, parameters, arguments) #name,
  return {LOCKSTEP_KERNELS(LOCKSTEP_ENTRY_NAME)};
#undef LOCKSTEP_ENTRY_NAME
}

// Entries that compute the forward or backward pass of a differentiable op, and the gradient checks
// (gradcheck_test.cc op names) whose forward or backward pass calls them on the CPU table.
struct Checked {
  const char* entry;
  std::vector<std::string> gradchecks;
};
const std::vector<Checked> kGradientChecked = {
    {"binary", {"div", "mse_loss", "dropout"}},
    {"binary_scalar_right", {"add_scalar", "mul_scalar", "mean all"}},
    {"unary", {"neg", "relu", "abs", "sqrt"}},
    {"select", {"where (broadcast)", "masked_fill"}},
    {"clamp", {"clamp", "clamp lower bound only"}},
    {"clamp_backward", {"clamp", "clamp lower bound only"}},
    {"hardtanh", {"relu6", "hardtanh"}},
    {"hardtanh_backward", {"relu6", "hardtanh"}},
    {"binary_broadcast", {"add (broadcast)", "sub (broadcast)", "mul (broadcast)"}},
    {"strided_copy", {"permute", "batch_norm train", "conv2d (data-parallel batch)"}},
    {"math", {"exp", "log", "tanh", "sigmoid", "erf", "gelu erf", "gelu tanh", "rsqrt", "sin", "cos", "tan", "asin",
              "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"}},
    {"pow_int", {"pow 3", "pow -2"}},
    {"gelu_erf_backward", {"gelu erf"}},
    {"silu_backward", {"silu"}},
    {"layer_norm_rows", {"layer_norm", "layer_norm without weight and bias"}},
    {"layer_norm_rows_backward", {"layer_norm", "layer_norm without weight and bias"}},
    {"channel_normalize", {"batch_norm train", "batch_norm eval", "batch_norm train without weight and bias, [N, C]"}},
    {"channel_normalize_backward", {"batch_norm train", "batch_norm train without weight and bias, [N, C]"}},
    {"channel_deviation_square_sums", {"batch_norm train", "batch_norm train without weight and bias, [N, C]"}},
    {"channel_norm_backward_sums",
     {"batch_norm train", "batch_norm eval", "batch_norm train without weight and bias, [N, C]"}},
    {"sum_axis", {"sum all", "sum dim"}},
    {"mean_axis", {"mean all", "mean dim keepdim"}},
    {"gemm", {"matmul 2d", "matmul batched", "matmul batch x 2d", "linear", "linear (data-parallel batch)"}},
    {"gemm_batch_grouped", {"matmul 2d", "matmul batch x 2d", "linear"}},
    {"softmax", {"softmax", "softmax dim 0"}},
    {"log_softmax", {"log_softmax", "nll_loss", "cross_entropy smoothed, ignore"}},
    {"dropout_mask", {"dropout"}},  // the mask is dropout's forward pass and its saved gradient
    {"im2col", {"conv2d (data-parallel batch)", "conv2d groups dilation (data-parallel batch)"}},
    {"conv2d_forward", {"conv2d", "conv2d groups dilation"}},
    {"conv2d_input_grad", {"conv2d", "conv2d groups dilation"}},
    {"conv2d_weight_grad", {"conv2d", "conv2d groups dilation"}},
    {"max_pool_forward", {"max_pool2d", "max_pool2d padded, overlapping windows"}},
    {"max_pool_backward", {"max_pool2d", "max_pool2d padded, overlapping windows"}},
    {"avg_pool_forward", {"avg_pool2d padded", "avg_pool2d asymmetric, padding not counted"}},
    {"avg_pool_backward", {"avg_pool2d padded", "avg_pool2d asymmetric, padding not counted"}},
    {"gather_rows", {"embedding"}},
    {"scatter_add_rows", {"embedding"}},
    {"nll_forward", {"nll_loss", "cross_entropy smoothed, ignore", "nll_loss sum, ignore_index"}},
    {"nll_backward", {"nll_loss", "cross_entropy smoothed, ignore", "nll_loss sum, ignore_index"}},
};

// Entries with no gradient to check, and why.
struct NoGradient {
  const char* entry;
  const char* why;
};
const std::vector<NoGradient> kNoGradient = {
    {"binary_scalar_left", "no op calls it (scalar-left arithmetic has no caller in core/)"},
    {"fill", "writes constants (zeros, full, fresh storage): nothing to differentiate"},
    {"variance_axis", "Variance records no autograd node (no backward rule)"},
    {"max_axis", "Max(dim) records no autograd node (no backward rule)"},
    {"min_axis", "no op calls it"},
    {"argmax_axis", "integer indices"},
    {"channel_sums", "batch normalisation's statistics inside its forward and backward rules (the batch_norm "
                     "gradient checks run it); no op of its own"},
    {"col2im_add", "no op calls it: conv2d's input gradient is conv2d_input_grad"},
    {"adam_update", "an optimizer step: consumes gradients, is not differentiated"},
    {"sgd_update", "an optimizer step: consumes gradients, is not differentiated"},
};

TEST_CASE("every kernel-table entry has a battery case") {
  const std::vector<std::string> entries = KernelEntries();
  REQUIRE(entries.size() >= 40);
  for (const std::string& entry : entries) {
    INFO("kernel-table entry " << entry << " (core/backend/kernel_list.h)");
    bool covered = false;
    for (const battery::CaseCoverage& row : battery::kCaseCoverage) covered = covered || battery::CoversEntry(row, entry.c_str());
    CHECK_MESSAGE(covered, "no battery case runs it: add one (tests/battery) and its row in battery_coverage.h");
  }
  // The rows name real entries, and each case once.
  const std::set<std::string> known(entries.begin(), entries.end());
  std::set<std::string> cases;
  for (const battery::CaseCoverage& row : battery::kCaseCoverage) {
    INFO("battery case " << row.name << ": " << row.entries);
    CHECK(cases.insert(row.name).second);
    const std::string list = row.entries;
    for (size_t at = 0; at < list.size();) {
      const size_t end = std::min(list.find(' ', at), list.size());
      if (end > at) CHECK_MESSAGE(known.count(list.substr(at, end - at)) == 1, "unknown entry " << list.substr(at, end - at));
      at = end + 1;
    }
  }
}

TEST_CASE("every differentiable kernel-table entry has a gradient check, the others a reason") {
  const std::vector<std::string> entries = KernelEntries();
  const std::vector<std::string> names = testing::GradcheckOpNames();
  const std::set<std::string> gradchecks(names.begin(), names.end());
  CHECK(gradchecks.size() == names.size());  // op names are unique
  const std::set<std::string> known(entries.begin(), entries.end());
  std::set<std::string> listed;
  for (const Checked& c : kGradientChecked) {
    INFO("entry " << c.entry);
    CHECK_MESSAGE(known.count(c.entry) == 1, "not an entry of LOCKSTEP_KERNELS");
    CHECK_MESSAGE(listed.insert(c.entry).second, "listed twice");
    CHECK(!c.gradchecks.empty());
    for (const std::string& op : c.gradchecks) {
      CHECK_MESSAGE(gradchecks.count(op) == 1, "no gradient check named \"" << op << "\" in gradcheck_test.cc");
    }
  }
  for (const NoGradient& n : kNoGradient) {
    INFO("entry " << n.entry);
    CHECK_MESSAGE(known.count(n.entry) == 1, "not an entry of LOCKSTEP_KERNELS");
    CHECK_MESSAGE(listed.insert(n.entry).second, "listed twice");
    CHECK(std::string(n.why).size() > 0);
  }
  for (const std::string& entry : entries) {
    INFO("kernel-table entry " << entry << " (core/backend/kernel_list.h)");
    CHECK_MESSAGE(listed.count(entry) == 1,
                  "neither gradient-checked nor listed without a gradient: add its gradient check to "
                  "gradcheck_test.cc and a line to kGradientChecked, or a line with the reason to kNoGradient");
  }
}

// The table's math names (self-contained for plugins) are simd/'s: error messages name a function
// the same way on every device.
TEST_CASE("the kernel table's math function names are simd/'s") {
  for (int i = 0; i < simd::kMathFnCount; ++i) {
    CHECK(std::string(backend::MathFnName(static_cast<backend::MathFn>(i))) ==
          simd::MathFnName(static_cast<simd::MathFn>(i)));
  }
}

}  // namespace
}  // namespace lockstep
