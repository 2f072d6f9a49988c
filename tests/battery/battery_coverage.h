// Which entries of the kernel table (LOCKSTEP_KERNELS, core/backend/kernel_list.h) each battery
// case runs, and the golden section its hash belongs to. One row per case, in the battery's order.
//
// The battery checks at run time that its cases are exactly these rows (battery_main.cc), and
// tests/unit/kernel_coverage_test.cc checks that every entry of LOCKSTEP_KERNELS is run by at least
// one row, so a kernel added to the list without a battery case fails the unit tests.
// Header-only: the unit tests read it without linking the battery.
#ifndef LOCKSTEP_TESTS_BATTERY_BATTERY_COVERAGE_H_
#define LOCKSTEP_TESTS_BATTERY_BATTERY_COVERAGE_H_

#include <string.h>

namespace lockstep {
namespace battery {

// The golden file's sections, each hashed into its own total line, so that adding cases never
// changes an existing total: the battery of contract version 1 (`total`; its lines never change
// without a contract version bump), the cases added after it for the table's other entries
// (`total-layers`), and the elementwise functions added for ONNX's operators (`total-onnx-1`: sin,
// cos, tan, their inverses, the hyperbolic functions and theirs, floor, ceil, round), and those
// added for ONNX's element types and remainders (`total-onnx-2`: rounding to float16 and bfloat16,
// fmod and remainder), and the kernels and kernel modes added for speed on real models
// (`total-fused-1`: clamp, grouped convolutions in one call; `total-fused-2`: batch
// normalisation's channel sums read in place; `total-fused-3`: the forward convolution's epilogue;
// `total-fused-4`: Clip's gradient in one pass, batch normalisation's gradient sums in one pass;
// `total-fused-5`: SiLU's gradient in one pass, batch normalisation's variance sums in one pass, its
// arithmetic on small planes; `total-fused-6`: batch normalisation with the Relu, Clip, SiLU or
// hardtanh after it; `total-fused-7`: PyTorch's hardtanh and its gradient in one pass each).
enum class GoldenSection {
  kContract1, kLayers, kOnnxOps1, kOnnxOps2, kFused1, kFused2, kFused3, kFused4, kFused5, kFused6, kFused7
};
constexpr int kGoldenSections = 11;

struct CaseCoverage {
  const char* name;       // the battery case (its `kernel NAME HASH` line)
  GoldenSection section;
  const char* entries;    // the kernel-table entries it calls, separated by spaces; "" for a
                          // host-only case (simd/ functions that are no table entry)
};

inline constexpr GoldenSection kContract1 = GoldenSection::kContract1;
inline constexpr GoldenSection kLayers = GoldenSection::kLayers;
inline constexpr GoldenSection kOnnxOps1 = GoldenSection::kOnnxOps1;
inline constexpr GoldenSection kOnnxOps2 = GoldenSection::kOnnxOps2;
inline constexpr GoldenSection kFused1 = GoldenSection::kFused1;
inline constexpr GoldenSection kFused2 = GoldenSection::kFused2;
inline constexpr GoldenSection kFused3 = GoldenSection::kFused3;
inline constexpr GoldenSection kFused4 = GoldenSection::kFused4;
inline constexpr GoldenSection kFused5 = GoldenSection::kFused5;
inline constexpr GoldenSection kFused6 = GoldenSection::kFused6;
inline constexpr GoldenSection kFused7 = GoldenSection::kFused7;
inline constexpr const char* kBinaryEntries = "binary binary_scalar_right binary_scalar_left";

inline constexpr CaseCoverage kCaseCoverage[] = {
    // Section 1 (contract version 1).
    {"binary_add", kContract1, kBinaryEntries},
    {"binary_sub", kContract1, kBinaryEntries},
    {"binary_mul", kContract1, kBinaryEntries},
    {"binary_div", kContract1, kBinaryEntries},
    {"binary_max", kContract1, kBinaryEntries},
    {"binary_min", kContract1, kBinaryEntries},
    {"binary_eq", kContract1, kBinaryEntries},
    {"binary_ne", kContract1, kBinaryEntries},
    {"binary_lt", kContract1, kBinaryEntries},
    {"binary_le", kContract1, kBinaryEntries},
    {"binary_gt", kContract1, kBinaryEntries},
    {"binary_ge", kContract1, kBinaryEntries},
    {"binary_fmod", kOnnxOps2, kBinaryEntries},
    {"binary_remainder", kOnnxOps2, kBinaryEntries},
    {"unary_neg", kContract1, "unary"},
    {"unary_abs", kContract1, "unary"},
    {"unary_sqrt", kContract1, "unary"},
    {"unary_relu", kContract1, "unary"},
    {"unary_canonicalize", kContract1, "unary"},
    {"unary_reciprocal", kContract1, "unary"},
    {"unary_square", kContract1, "unary"},
    {"unary_floor", kOnnxOps1, "unary"},
    {"unary_ceil", kOnnxOps1, "unary"},
    {"unary_round", kOnnxOps1, "unary"},
    {"unary_round_float16", kOnnxOps2, "unary"},
    {"unary_round_bfloat16", kOnnxOps2, "unary"},
    {"select", kContract1, "select"},
    {"clamp", kFused1, "clamp"},
    {"clamp_backward", kFused4, "clamp_backward"},
    {"sum", kContract1, "sum_axis"},
    {"max", kContract1, "max_axis"},
    {"min", kContract1, "min_axis"},
    {"argmax", kContract1, "argmax_axis"},
    {"sum_axis", kContract1, "sum_axis"},
    {"mean_axis", kContract1, "mean_axis"},
    {"variance_axis", kContract1, "variance_axis"},
    {"max_axis", kContract1, "max_axis"},
    {"argmax_axis", kContract1, "argmax_axis"},
    {"gemm_nn", kContract1, "gemm"},
    {"gemm_tn", kContract1, "gemm"},
    {"gemm_nt", kContract1, "gemm"},
    {"gemm_tt", kContract1, "gemm"},
    {"math_exp", kContract1, "math"},
    {"math_log", kContract1, "math"},
    {"math_tanh", kContract1, "math"},
    {"math_sigmoid", kContract1, "math"},
    {"math_erf", kContract1, "math"},
    {"math_gelu_erf", kContract1, "math"},
    {"math_gelu_tanh", kContract1, "math"},
    {"math_softplus", kContract1, "math"},
    {"math_rsqrt", kContract1, "math"},
    {"math_sin", kOnnxOps1, "math"},
    {"math_cos", kOnnxOps1, "math"},
    {"math_tan", kOnnxOps1, "math"},
    {"math_asin", kOnnxOps1, "math"},
    {"math_acos", kOnnxOps1, "math"},
    {"math_atan", kOnnxOps1, "math"},
    {"math_sinh", kOnnxOps1, "math"},
    {"math_cosh", kOnnxOps1, "math"},
    {"math_asinh", kOnnxOps1, "math"},
    {"math_acosh", kOnnxOps1, "math"},
    {"math_atanh", kOnnxOps1, "math"},
    {"math_pow", kContract1, "pow_int"},  // and the host's pow(x, 0.5)
    {"softmax", kContract1, "softmax"},
    {"log_softmax", kContract1, "log_softmax"},
    {"philox_uint32", kContract1, ""},   // host-only (IsHostOnlyKernel)
    {"philox_uniform", kContract1, ""},  // host-only
    {"philox_normal", kContract1, ""},   // host-only
    {"philox_dropout", kContract1, "dropout_mask"},
    // Section 2 (battery_layer_cases.cc).
    {"binary_broadcast", kLayers, "binary_broadcast"},
    {"strided_copy", kLayers, "strided_copy"},
    {"fill", kLayers, "fill"},
    {"gelu_erf_backward", kLayers, "gelu_erf_backward"},
    {"layer_norm_rows", kLayers, "layer_norm_rows"},
    {"layer_norm_rows_backward", kLayers, "layer_norm_rows_backward"},
    {"channel_normalize", kLayers, "channel_normalize"},
    {"channel_normalize_backward", kLayers, "channel_normalize_backward"},
    {"min_axis", kLayers, "min_axis"},
    {"variance_axis_corrections", kLayers, "variance_axis"},
    {"gemm_bias", kLayers, "gemm"},
    {"gemm_batch_grouped", kLayers, "gemm_batch_grouped"},
    {"im2col", kLayers, "im2col"},
    {"col2im_add", kLayers, "col2im_add"},
    {"conv2d_forward", kLayers, "conv2d_forward"},
    {"conv2d_input_grad", kLayers, "conv2d_input_grad"},
    {"conv2d_weight_grad", kLayers, "conv2d_weight_grad"},
    {"conv2d_grouped", kFused1, "conv2d_forward conv2d_input_grad conv2d_weight_grad"},
    {"max_pool_forward", kLayers, "max_pool_forward"},
    {"max_pool_backward", kLayers, "max_pool_backward"},
    {"avg_pool_forward", kLayers, "avg_pool_forward"},
    {"avg_pool_backward", kLayers, "avg_pool_backward"},
    {"gather_rows", kLayers, "gather_rows"},
    {"scatter_add_rows", kLayers, "scatter_add_rows"},
    {"nll_forward", kLayers, "nll_forward"},
    {"nll_backward", kLayers, "nll_backward"},
    {"adam_update", kLayers, "adam_update"},
    {"sgd_update", kLayers, "sgd_update"},
    {"channel_sums", kFused2, "channel_sums"},
    {"conv2d_epilogue", kFused3, "conv2d_forward"},
    {"channel_norm_backward_sums", kFused4, "channel_norm_backward_sums"},
    {"silu_backward", kFused5, "silu_backward"},
    {"channel_deviation_square_sums", kFused5, "channel_deviation_square_sums"},
    {"channel_normalize_small_planes", kFused5, "channel_normalize channel_normalize_backward"},
    {"channel_norm_activation", kFused6, "channel_normalize channel_norm_backward_sums"},
    {"hardtanh", kFused7, "hardtanh"},
    {"hardtanh_backward", kFused7, "hardtanh_backward"},
};

// The row of a case, or null.
inline const CaseCoverage* FindCaseCoverage(const char* name) {
  for (const CaseCoverage& c : kCaseCoverage) {
    if (strcmp(c.name, name) == 0) return &c;
  }
  return nullptr;
}

// Whether a row's entries include `entry` (a whole word of the list).
inline bool CoversEntry(const CaseCoverage& c, const char* entry) {
  const size_t length = strlen(entry);
  for (const char* p = c.entries; *p != '\0';) {
    while (*p == ' ') ++p;
    const char* end = p;
    while (*end != '\0' && *end != ' ') ++end;
    if (static_cast<size_t>(end - p) == length && length != 0 && strncmp(p, entry, length) == 0) return true;
    p = end;
  }
  return false;
}

}  // namespace battery
}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_BATTERY_BATTERY_COVERAGE_H_
