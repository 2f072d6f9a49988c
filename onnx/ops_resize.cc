// Resize (and the older Upsample): nearest, linear and cubic interpolation, one axis at a time.
// Along an axis each output element is sum_t w_t x[i_t] over its taps (1, 2 or 4), the taps
// gathered with lockstep's embedding op and the products added in tap order, so the operator
// trains; the source positions and weights follow ONNX's formulas, computed on the host in double
// and rounded once to float32 (they depend only on the sizes).
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/host_rounding.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeConfig {
  Mode mode = Mode::kNearest;
  std::string transform = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false;
};

// The source coordinate of output position x along an axis (ONNX's coordinate_transformation_mode).
// resized: the output length before rounding (in * scale for scales, out for sizes).
double SourceCoordinate(const ResizeConfig& c, double x, int64_t in, int64_t out, double scale, double resized,
                        double roi_start, double roi_end) {
  const std::string& m = c.transform;
  if (m == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (m == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  // ONNX's reference divides by the unrounded output length in * scale (out itself with sizes).
  if (m == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (resized - 1.0);
  if (m == "asymmetric") return x / scale;
  if (m == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize
  if (out == 1) return 0.5 * (roi_start + roi_end) * static_cast<double>(in - 1);
  return roi_start * static_cast<double>(in - 1) +
         x * (roi_end - roi_start) * static_cast<double>(in - 1) / static_cast<double>(out - 1);
}

int64_t NearestIndex(const std::string& mode, double x) {
  const double f = FloorOf(x);
  if (mode == "floor") return ClampedIndex(f);
  if (mode == "ceil") return ClampedIndex(CeilOf(x));
  if (x - f == 0.5) return ClampedIndex(mode == "round_prefer_ceil" ? f + 1.0 : f);
  return ClampedIndex(FloorOf(x + 0.5));
}

// The cubic convolution weights of the taps at floor(x) - 1 .. floor(x) + 2 for fraction r.
std::vector<double> CubicWeights(double r, double a) {
  const auto near = [a](double t) { return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0; };
  const auto far = [a](double t) { return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a; };
  return {far(r + 1.0), near(r), near(1.0 - r), far(2.0 - r)};
}

struct AxisPlan {
  int64_t taps = 1;
  std::vector<int64_t> index;   // [out, taps], clamped into the input
  std::vector<float> weight;    // [out, taps]
  std::vector<float> outside;   // [out]: 1 where tf_crop_and_resize's position is outside the input
};

AxisPlan PlanAxis(const ResizeConfig& c, int64_t in, int64_t out, double scale, double resized, double roi_start,
                  double roi_end) {
  AxisPlan p;
  p.taps = c.mode == Mode::kNearest ? 1 : c.mode == Mode::kLinear ? 2 : 4;
  p.outside.assign(static_cast<size_t>(out), 0.0f);
  const auto clamp = [in](int64_t i) { return i < 0 ? 0 : i >= in ? in - 1 : i; };
  for (int64_t j = 0; j < out; ++j) {
    double x = SourceCoordinate(c, static_cast<double>(j), in, out, scale, resized, roi_start, roi_end);
    if (c.transform == "tf_crop_and_resize" && (x < 0.0 || x > static_cast<double>(in - 1))) p.outside[j] = 1.0f;
    if (c.mode == Mode::kNearest) {
      p.index.push_back(clamp(NearestIndex(c.nearest, x)));
      p.weight.push_back(1.0f);
      continue;
    }
    if (c.mode == Mode::kLinear) x = x < 0.0 ? 0.0 : x > static_cast<double>(in - 1) ? static_cast<double>(in - 1) : x;
    const double base = FloorOf(x), r = x - base;
    std::vector<double> w = c.mode == Mode::kLinear ? std::vector<double>{1.0 - r, r} : CubicWeights(r, c.cubic_a);
    const int64_t first = ClampedIndex(base) - (c.mode == Mode::kCubic ? 1 : 0);
    if (c.exclude_outside) {  // taps outside the input weigh 0, the rest renormalised
      double total = 0.0;
      for (int64_t t = 0; t < p.taps; ++t) {
        if (first + t < 0 || first + t >= in) w[t] = 0.0;
        total += w[t];
      }
      for (double& v : w) v /= total;
    }
    for (int64_t t = 0; t < p.taps; ++t) {
      p.index.push_back(clamp(first + t));
      p.weight.push_back(static_cast<float>(w[t]));
    }
  }
  return p;
}

// x resized along `axis` by a plan: sum over taps of weight * gathered, in tap order.
Tensor ResizeAxis(const Tensor& x, int64_t axis, const AxisPlan& p, double extrapolation) {
  const int64_t out = static_cast<int64_t>(p.outside.size());
  const int64_t rank = x.dim();
  Shape weight_shape(static_cast<size_t>(rank), 1);
  weight_shape[axis] = out;
  Tensor y;
  for (int64_t t = 0; t < p.taps; ++t) {
    std::vector<int64_t> idx(static_cast<size_t>(out));
    std::vector<float> w(static_cast<size_t>(out));
    for (int64_t j = 0; j < out; ++j) {
      idx[j] = p.index[j * p.taps + t];
      w[j] = p.weight[j * p.taps + t];
    }
    const Tensor picked = Take(FloatValue(x), axis, idx, {out}, "Resize").tensor;
    const Tensor term = p.taps == 1 ? picked : Mul(picked, Tensor::FromVector(weight_shape, w));
    y = t == 0 ? term : Add(y, term);
  }
  bool any_outside = false;
  for (float o : p.outside) any_outside = any_outside || o != 0.0f;
  if (any_outside) y = Where(Tensor::FromVector(weight_shape, p.outside), Tensor::Scalar(static_cast<float>(extrapolation)), y);
  return y;
}

Kernel ResizeKernel(const NodeView& node, bool upsample_op) {
  // Resize-10 is Upsample's successor: (X, scales), asymmetric coordinates, nearest by floor.
  const bool upsample = upsample_op || node.opset() < 11;
  node.RequireInputs(upsample ? 2 : 1, upsample ? 2 : 4);
  ResizeConfig c;
  const std::string mode = node.String("mode", "nearest");
  node.Require(mode == "nearest" || mode == "linear" || mode == "cubic" || (upsample && mode == "bilinear"),
               "mode must be nearest, linear or cubic, got '" + mode + "'");
  c.mode = mode == "nearest" ? Mode::kNearest : mode == "cubic" ? Mode::kCubic : Mode::kLinear;
  if (upsample) {  // Upsample's (and Resize-10's) only geometry
    c.transform = "asymmetric";
    c.nearest = "floor";
  } else {
    c.transform = node.String("coordinate_transformation_mode", "half_pixel");
    c.nearest = node.String("nearest_mode", "round_prefer_floor");
    c.cubic_a = node.Float("cubic_coeff_a", -0.75f);
    c.exclude_outside = node.Int("exclude_outside", 0) != 0;
    c.extrapolation = node.Float("extrapolation_value", 0.0f);
    if (node.Int("antialias", 0) != 0) node.Unsupported("antialias");
    if (node.Has("axes")) node.Unsupported("the axes attribute");
    if (node.String("keep_aspect_ratio_policy", "stretch") != "stretch") node.Unsupported("keep_aspect_ratio_policy");
    static const std::set<std::string> kTransforms{"half_pixel",   "pytorch_half_pixel",   "align_corners",
                                                   "asymmetric",   "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    node.Require(kTransforms.count(c.transform) == 1, "unknown coordinate_transformation_mode '" + c.transform + "'");
  }
  return [c, upsample](const Values& in, RunContext&) -> Values {
    const Value& xv = Input(in, 0, "Resize");
    Tensor x = FloatInput(xv, "Resize");
    const int64_t rank = x.dim();
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    const size_t scales_at = upsample ? 1 : 2;
    if (in.size() > scales_at && in[scales_at].defined() && in[scales_at].tensor.numel() > 0) {
      for (float s : FloatInput(in[scales_at], "Resize").ToVector()) scales.push_back(s);
    }
    if (!upsample && in.size() > 3 && in[3].defined() && in[3].tensor.numel() > 0) sizes = IntValues(in[3]);
    if (!upsample && in.size() > 1 && in[1].defined() && in[1].tensor.numel() > 0) {
      for (float r : FloatInput(in[1], "Resize").ToVector()) roi.push_back(r);
    }
    LOCKSTEP_REQUIRE(scales.empty() != sizes.empty(), "Resize: exactly one of scales and sizes must be given");
    LOCKSTEP_REQUIRE(static_cast<int64_t>(scales.size() + sizes.size()) == rank,
                     "Resize: scales or sizes must have one entry per dimension of " << ShapeString(x.shape()));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t n = x.size(d);
      const int64_t out = sizes.empty() ? ClampedIndex(FloorOf(n * scales[d])) : sizes[d];
      const double scale = sizes.empty() ? scales[d] : static_cast<double>(out) / static_cast<double>(n);
      LOCKSTEP_REQUIRE(out >= 1 && n >= 1 && scale > 0.0, "Resize: dimension " << d << " of " << n << " resized to " << out);
      const double roi_start = roi.size() == static_cast<size_t>(2 * rank) ? roi[d] : 0.0;
      const double roi_end = roi.size() == static_cast<size_t>(2 * rank) ? roi[rank + d] : 1.0;
      if (out == n && scale == 1.0 && c.transform != "tf_crop_and_resize") continue;  // the identity
      const double resized = sizes.empty() ? static_cast<double>(n) * scales[d] : static_cast<double>(out);
      x = ResizeAxis(x, d, PlanAxis(c, n, out, scale, resized, roi_start, roi_end), c.extrapolation);
    }
    return {FloatValue(x)};
  };
}

}  // namespace

void AddResizeOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"Resize", 10, [](const NodeView& node) { return ResizeKernel(node, false); }, {1, 2, 3}}
                   .Reads({"antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a",
                           "exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy", "mode",
                           "nearest_mode"})
                   .Scope("nearest (every nearest_mode), linear, cubic; every coordinate_transformation_mode; scales or sizes"));
  t->push_back(OpSpec{"Upsample", 7, [](const NodeView& node) { return ResizeKernel(node, true); }, {1}}
                   .Reads({"mode"}));
}

}  // namespace onnx
}  // namespace lockstep
