// GridSample: X [N, C, H, W] sampled at grid [N, H_out, W_out, 2] (x, y in [-1, 1]) by nearest,
// bilinear or bicubic interpolation with zeros, border or reflection padding (PyTorch's
// grid_sample, which ONNX follows). The taps and their weights come from the grid's values on the
// host, each weight one float32 expression in a fixed order; the taps are gathered from X with
// lockstep's embedding op and their products added in tap order, so the output has X's gradient
// (the grid gets none: it is refused when it needs one).
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

enum class Sampling { kNearest, kBilinear, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridConfig {
  Sampling mode = Sampling::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

float Unnormalize(float g, int64_t size, bool align_corners) {
  return align_corners ? (g + 1.0f) / 2.0f * static_cast<float>(size - 1)
                       : ((g + 1.0f) * static_cast<float>(size) - 1.0f) / 2.0f;
}

// Reflects x into [low, high] (PyTorch's reflect_coordinates, in twice-scaled units).
float Reflect(float x, float low, float high) {
  if (low == high) return 0.0f;
  const float span = high - low;
  x = static_cast<float>(AbsOf(x - low));
  const int64_t flips = ClampedIndex(FloorOf(x / span));
  const float extra = x - static_cast<float>(flips) * span;  // x mod span (rounded once)
  return flips % 2 == 0 ? extra + low : span - extra + low;
}

// A coordinate after the padding rule (border and reflection clip into the input).
float Padded(float x, int64_t size, const GridConfig& c) {
  const float hi = static_cast<float>(size - 1);
  if (c.padding == Padding::kReflection) {
    x = c.align_corners ? Reflect(x, 0.0f, hi) : Reflect(x, -0.5f, static_cast<float>(size) - 0.5f);
  }
  if (c.padding != Padding::kZeros) x = x < 0.0f ? 0.0f : x > hi ? hi : x;
  return x;
}

std::vector<float> Cubic(float t) {
  const float a = -0.75f;
  const auto near = [a](float s) { return ((a + 2.0f) * s - (a + 3.0f)) * s * s + 1.0f; };
  const auto far = [a](float s) { return ((a * s - 5.0f * a) * s + 8.0f * a) * s - 4.0f * a; };
  return {far(t + 1.0f), near(t), near(1.0f - t), far(2.0f - t)};
}

Kernel GridSampleKernel(const NodeView& node) {
  node.RequireInputs(2, 2);
  GridConfig c;
  const std::string mode = node.String("mode", "bilinear"), padding = node.String("padding_mode", "zeros");
  node.Require(mode == "bilinear" || mode == "nearest" || mode == "bicubic",
               "mode must be bilinear, nearest or bicubic, got '" + mode + "'");
  node.Require(padding == "zeros" || padding == "border" || padding == "reflection",
               "padding_mode must be zeros, border or reflection, got '" + padding + "'");
  c.mode = mode == "nearest" ? Sampling::kNearest : mode == "bicubic" ? Sampling::kBicubic : Sampling::kBilinear;
  c.padding = padding == "zeros" ? Padding::kZeros : padding == "border" ? Padding::kBorder : Padding::kReflection;
  c.align_corners = node.Int("align_corners", 0) != 0;
  return [c](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "GridSample"), "GridSample");
    const Tensor grid_t = FloatInput(Input(in, 1, "GridSample"), "GridSample");
    LOCKSTEP_REQUIRE(x.dim() == 4 && grid_t.dim() == 4 && grid_t.size(0) == x.size(0) && grid_t.size(3) == 2,
                     "GridSample: X [N, C, H, W] and grid [N, H_out, W_out, 2], got " << ShapeString(x.shape())
                                                                                   << " and " << ShapeString(grid_t.shape()));
    RequireNoGrad({grid_t}, "GridSample (the grid)");
    const int64_t n = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3);
    const int64_t ho = grid_t.size(1), wo = grid_t.size(2);
    const int64_t taps = c.mode == Sampling::kNearest ? 1 : c.mode == Sampling::kBilinear ? 4 : 16;
    const std::vector<float> grid = grid_t.Contiguous().ToVector();
    // Per output pixel and tap: the position in one plane (or -1: a zero) and the weight.
    std::vector<int64_t> where(static_cast<size_t>(n * ho * wo * taps));
    std::vector<float> weight(where.size());
    const auto tap = [&](size_t at, int64_t yi, int64_t xi, float wt) {
      if (c.mode == Sampling::kBicubic && c.padding != Padding::kZeros) {  // the tap index padded
        yi = ClampedIndex(Padded(static_cast<float>(yi), h, c));
        xi = ClampedIndex(Padded(static_cast<float>(xi), w, c));
      }
      const bool inside = yi >= 0 && yi < h && xi >= 0 && xi < w;
      where[at] = inside ? yi * w + xi : -1;
      weight[at] = inside ? wt : 0.0f;
    };
    for (int64_t p = 0; p < n * ho * wo; ++p) {
      float sx = Unnormalize(grid[2 * p], w, c.align_corners), sy = Unnormalize(grid[2 * p + 1], h, c.align_corners);
      if (c.mode != Sampling::kBicubic) {
        sx = Padded(sx, w, c);
        sy = Padded(sy, h, c);
      }
      const size_t at = static_cast<size_t>(p * taps);
      if (c.mode == Sampling::kNearest) {
        tap(at, ClampedIndex(RoundHalfEvenOf(sy)), ClampedIndex(RoundHalfEvenOf(sx)), 1.0f);
        continue;
      }
      const float fx = static_cast<float>(FloorOf(sx)), fy = static_cast<float>(FloorOf(sy)), tx = sx - fx, ty = sy - fy;
      const int64_t x0 = ClampedIndex(fx), y0 = ClampedIndex(fy);
      if (c.mode == Sampling::kBilinear) {
        tap(at, y0, x0, (1.0f - tx) * (1.0f - ty));
        tap(at + 1, y0, x0 + 1, tx * (1.0f - ty));
        tap(at + 2, y0 + 1, x0, (1.0f - tx) * ty);
        tap(at + 3, y0 + 1, x0 + 1, tx * ty);
        continue;
      }
      const std::vector<float> wx = Cubic(tx), wy = Cubic(ty);
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < 4; ++j) tap(at + i * 4 + j, y0 - 1 + i, x0 - 1 + j, wy[i] * wx[j]);
      }
    }
    // Gather [N, C, H_out * W_out * taps] from the planes, weight, add the taps in order.
    std::vector<int64_t> positions(static_cast<size_t>(n * ch * ho * wo * taps));
    std::vector<float> weights(positions.size());
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t k = 0; k < ch; ++k) {
        for (int64_t q = 0; q < ho * wo * taps; ++q) {
          const size_t src = static_cast<size_t>(b * ho * wo * taps + q);
          const size_t dst = static_cast<size_t>((b * ch + k) * ho * wo * taps + q);
          positions[dst] = (b * ch + k) * h * w + (where[src] < 0 ? 0 : where[src]);
          weights[dst] = weight[src];
        }
      }
    }
    const Shape shape{n, ch, ho, wo, taps};
    const Tensor column = x.Reshape({x.numel(), 1});
    const Tensor picked = Take(FloatValue(column), 0, positions, {static_cast<int64_t>(positions.size())}, "GridSample")
                              .tensor.Reshape(shape);
    const Tensor products = Mul(picked, Tensor::FromVector(shape, weights));
    Tensor y = products.Select(4, 0);
    for (int64_t t = 1; t < taps; ++t) y = Add(y, products.Select(4, t));
    return {FloatValue(y.Contiguous())};
  };
}

}  // namespace

void AddGridSampleOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"GridSample", 16, GridSampleKernel}
                   .Reads({"align_corners", "mode", "padding_mode"})
                   .Scope("nearest, bilinear, bicubic; zeros, border, reflection padding"));
}

}  // namespace onnx
}  // namespace lockstep
