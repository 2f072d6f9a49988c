// Object detection: NonMaxSuppression. Its result is a list of indices (no gradient), chosen by
// comparisons of float32 IoUs that the host computes with IEEE operations in a fixed order (the
// build forbids contraction into FMAs), so the choice is the same everywhere.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

struct Box {
  float y1, x1, y2, x2;  // corners, y1 <= y2 and x1 <= x2
};

Box ReadBox(const float* b, bool center) {
  if (center) {  // [x_center, y_center, width, height]
    const float half_w = b[2] / 2.0f, half_h = b[3] / 2.0f;
    return {b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// Intersection over union, each step one float32 operation in this order.
float Iou(const Box& a, const Box& b) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0.0f || iw <= 0.0f) return 0.0f;
  const float inter = ih * iw;
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  const float uni = area_a + area_b - inter;
  return uni > 0.0f ? inter / uni : 0.0f;
}

// Per batch and class: candidates above score_threshold by decreasing score (ties to the lower
// index), each kept unless its IoU with a kept box exceeds iou_threshold, at most max_output.
Kernel NonMaxSuppressionKernel(const NodeView& node) {
  node.RequireInputs(2, 5);
  const bool center = node.Int("center_point_box", 0) != 0;
  return [center](const Values& in, RunContext&) -> Values {
    const Tensor boxes_t = FloatInput(Input(in, 0, "NonMaxSuppression"), "NonMaxSuppression");
    const Tensor scores_t = FloatInput(Input(in, 1, "NonMaxSuppression"), "NonMaxSuppression");
    LOCKSTEP_REQUIRE(boxes_t.dim() == 3 && boxes_t.size(2) == 4 && scores_t.dim() == 3 &&
                         scores_t.size(0) == boxes_t.size(0) && scores_t.size(2) == boxes_t.size(1),
                     "NonMaxSuppression: boxes [B, N, 4] and scores [B, C, N], got " << ShapeString(boxes_t.shape())
                                                                                     << " and "
                                                                                     << ShapeString(scores_t.shape()));
    const auto scalar_int = [&](size_t i, int64_t fallback) {
      return in.size() > i && in[i].defined() && in[i].tensor.numel() > 0 ? IntValues(in[i])[0] : fallback;
    };
    const auto scalar_float = [&](size_t i, float fallback, bool* given) {
      *given = in.size() > i && in[i].defined() && in[i].tensor.numel() > 0;
      return *given ? FloatInput(in[i], "NonMaxSuppression").ToVector()[0] : fallback;
    };
    const int64_t max_output = scalar_int(2, 0);
    bool has_iou = false, has_score = false;
    const float iou_threshold = scalar_float(3, 0.0f, &has_iou);
    const float score_threshold = scalar_float(4, 0.0f, &has_score);
    const int64_t batches = boxes_t.size(0), n = boxes_t.size(1), classes = scores_t.size(1);
    const std::vector<float> boxes = boxes_t.Contiguous().ToVector(), scores = scores_t.Contiguous().ToVector();
    std::vector<int64_t> selected;
    int64_t count = 0;
    for (int64_t b = 0; b < batches; ++b) {
      std::vector<Box> all(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) all[i] = ReadBox(&boxes[(b * n + i) * 4], center);
      for (int64_t c = 0; c < classes; ++c) {
        const float* s = &scores[(b * classes + c) * n];
        std::vector<int64_t> order;
        for (int64_t i = 0; i < n; ++i) {
          if (!has_score || s[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(), [s](int64_t a, int64_t b2) { return s[a] > s[b2]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_output) break;
          bool suppressed = false;
          for (int64_t k : kept) suppressed = suppressed || Iou(all[i], all[k]) > iou_threshold;
          if (suppressed) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
          ++count;
        }
      }
    }
    return {IntTensor({count, 3}, selected)};
  };
}

}  // namespace

void AddDetectionOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"NonMaxSuppression", 10, NonMaxSuppressionKernel, {2, 3, 4}, {}, true}
                   .Reads({"center_point_box"})
                   .Scope("corner or center boxes; IoU in float32 on the host in a fixed order"));
}

}  // namespace onnx
}  // namespace lockstep
