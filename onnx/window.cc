#include "onnx/window.h"

#include <algorithm>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"

namespace lockstep {
namespace onnx {

void RunUnsupported(const std::string& message) { throw Error(message, ErrorKind::kUnavailable); }

Window ReadWindow(const NodeView& node, size_t spatial_hint, bool pooling) {
  Window w;
  w.kernel = node.Ints("kernel_shape", {});
  if (pooling) node.Require(!w.kernel.empty(), "kernel_shape is required");
  const size_t k = w.kernel.empty() ? spatial_hint : w.kernel.size();
  w.strides = node.Ints("strides", std::vector<int64_t>(k, 1));
  w.dilations = node.Ints("dilations", std::vector<int64_t>(k, 1));
  w.pads = node.Ints("pads", {});
  w.auto_pad = node.String("auto_pad", "NOTSET");
  w.ceil_mode = node.Int("ceil_mode", 0) != 0;
  node.Require(w.auto_pad == "NOTSET" || w.auto_pad == "VALID" || w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER",
               "auto_pad '" + w.auto_pad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  if (k != 0) {
    node.Require(w.strides.size() == k && w.dilations.size() == k && (w.pads.empty() || w.pads.size() == 2 * k),
                 "strides, dilations and pads do not match the kernel's " + std::to_string(k) + " dimensions");
  }
  for (int64_t v : w.strides) node.Require(v >= 1, "strides must be >= 1");
  for (int64_t v : w.dilations) node.Require(v >= 1, "dilations must be >= 1");
  for (int64_t v : w.pads) node.Require(v >= 0, "pads must be >= 0");
  for (int64_t v : w.kernel) node.Require(v >= 1, "kernel_shape must be >= 1");
  if (k > 3) node.Unsupported(std::to_string(k) + "-D windows; lockstep computes 1-D, 2-D and 3-D convolution and pooling");
  return w;
}

Tensor PadWith(const Tensor& x, int64_t d, int64_t before, int64_t after, float value) {
  if (before == 0 && after == 0) return x;
  std::vector<Tensor> parts;
  Shape block = x.shape();
  if (before > 0) {
    block[d] = before;
    parts.push_back(Tensor::Full(block, value));
  }
  parts.push_back(x);
  if (after > 0) {
    block[d] = after;
    parts.push_back(Tensor::Full(block, value));
  }
  return Concat(parts, d);
}

Tensor As2d(const Tensor& x) { return x.dim() == 3 ? x.Unsqueeze(2) : x; }

namespace {

// Rows start, start + step, ... of dimension d, count of them.
Tensor Strided(const Tensor& x, int64_t d, int64_t start, int64_t count, int64_t step) {
  return x.Slice(d, start, start + (count - 1) * step + 1, step);
}

}  // namespace

Tensor PoolBySlices(const Tensor& x, const Window& w, bool max, bool count_include_pad) {
  const size_t k = w.kernel.size();
  LOCKSTEP_REQUIRE(x.dim() == static_cast<int64_t>(k) + 2, "pooling: input " << ShapeString(x.shape()) << " for a "
                                                                             << k << "-D window");
  Window plain = w;
  plain.ceil_mode = false;
  Tensor padded = x, counted = Tensor::Ones(x.shape());
  std::vector<int64_t> out(k);
  for (size_t i = 0; i < k; ++i) {
    const int64_t n = x.size(2 + static_cast<int64_t>(i));
    int64_t begin, end, plain_begin, plain_end;
    w.Padding(i, n, &begin, &end);
    plain.Padding(i, n, &plain_begin, &plain_end);
    const int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    LOCKSTEP_REQUIRE(n + begin + end >= span, "pooling: the window does not fit the input " << ShapeString(x.shape()));
    out[i] = (n + begin + end - span) / w.strides[i] + 1;
    const int64_t d = 2 + static_cast<int64_t>(i);
    padded = PadWith(padded, d, begin, end, max ? -__builtin_inff() : 0.0f);
    // What a window's count includes: the input, and with count_include_pad the pads, not the
    // ceil_mode extension.
    counted = PadWith(counted, d, begin, plain_end, count_include_pad ? 1.0f : 0.0f);
    counted = PadWith(counted, d, 0, end - plain_end, 0.0f);
  }
  Tensor acc, count;
  std::vector<int64_t> offset(k, 0);
  for (bool more = true; more;) {
    Tensor s = padded, c = counted;
    for (size_t i = 0; i < k; ++i) {
      const int64_t d = 2 + static_cast<int64_t>(i);
      s = Strided(s, d, offset[i] * w.dilations[i], out[i], w.strides[i]);
      if (!max) c = Strided(c, d, offset[i] * w.dilations[i], out[i], w.strides[i]);
    }
    if (!acc.defined()) {
      acc = s;
      count = c;
    } else {
      acc = max ? Maximum(acc, s) : Add(acc, s);
      if (!max) count = Add(count, c);
    }
    more = false;
    for (size_t i = k; i-- > 0;) {  // the next offset, row-major
      if (++offset[i] < w.kernel[i]) {
        more = true;
        break;
      }
      offset[i] = 0;
    }
  }
  if (max) RequireNoGrad({x}, "MaxPool");
  return max ? acc.Contiguous() : Div(acc, count);
}

namespace {

// Whether a beats b as a maximum under the contract's order.
bool Above(float a, float b) {
  if (b != b) return false;
  if (a != a) return true;
  if (a == b) return !__builtin_signbit(a) && __builtin_signbit(b);
  return a > b;
}

}  // namespace

Value MaxPoolIndices(const Tensor& x, const Window& w, bool column_major) {
  const size_t k = w.kernel.size();
  LOCKSTEP_REQUIRE(x.dim() == static_cast<int64_t>(k) + 2, "MaxPool: input " << ShapeString(x.shape()) << " for a "
                                                                              << k << "-D window");
  std::vector<int64_t> begin(k), out(k), size(k);
  for (size_t i = 0; i < k; ++i) {
    int64_t b, e;
    size[i] = x.size(2 + static_cast<int64_t>(i));
    w.Padding(i, size[i], &b, &e);
    begin[i] = b;
    out[i] = (size[i] + b + e - ((w.kernel[i] - 1) * w.dilations[i] + 1)) / w.strides[i] + 1;
  }
  const std::vector<float> v = x.Contiguous().ToVector();
  const int64_t planes = x.size(0) * x.size(1);
  int64_t plane_size = 1, out_size = 1;
  for (size_t i = 0; i < k; ++i) plane_size *= size[i], out_size *= out[i];
  Shape shape{x.size(0), x.size(1)};
  shape.insert(shape.end(), out.begin(), out.end());
  std::vector<int64_t> result(static_cast<size_t>(planes * out_size));
  std::vector<int64_t> o(k), off(k);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t q = 0; q < out_size; ++q) {
      for (int64_t r = q, i = static_cast<int64_t>(k) - 1; i >= 0; --i) o[i] = r % out[i], r /= out[i];
      int64_t best = -1;
      std::fill(off.begin(), off.end(), 0);
      for (bool more = true; more;) {
        int64_t at = 0;
        bool inside = true;
        for (size_t i = 0; i < k; ++i) {
          const int64_t c = o[i] * w.strides[i] + off[i] * w.dilations[i] - begin[i];
          inside = inside && c >= 0 && c < size[i];
          at = at * size[i] + c;
        }
        if (inside && (best < 0 || Above(v[p * plane_size + at], v[p * plane_size + best]))) best = at;
        more = false;
        for (size_t i = k; i-- > 0;) {
          if (++off[i] < w.kernel[i]) {
            more = true;
            break;
          }
          off[i] = 0;
        }
      }
      LOCKSTEP_REQUIRE(best >= 0, "MaxPool: a window holds padding only");
      if (column_major && k >= 2) {  // the last two spatial coordinates swapped
        const int64_t hh = size[k - 2], ww = size[k - 1], rest = best / (hh * ww), in = best % (hh * ww);
        best = rest * hh * ww + (in % ww) * hh + in / ww;
      }
      result[p * out_size + q] = p * plane_size + best;
    }
  }
  return IntTensor(shape, result);
}

Tensor Conv3dBySlices(const Tensor& x_in, const Tensor& weight, const Tensor& bias, const Window& w, int64_t groups) {
  LOCKSTEP_REQUIRE(x_in.dim() == 5 && weight.dim() == 5, "Conv: 3-D convolution needs [N, C, D, H, W] and a 5-D weight");
  Tensor x = x_in;
  std::vector<int64_t> begin(3), end(3);
  for (size_t i = 0; i < 3; ++i) w.Padding(i, x.size(2 + static_cast<int64_t>(i)), &begin[i], &end[i]);
  x = PadWith(x, 2, begin[0], end[0], 0.0f);  // depth padded here; height and width by Conv2d or here
  Conv2dOptions o{w.strides[1], w.strides[2], 0, 0, w.dilations[1], w.dilations[2], groups};
  for (int a = 1; a < 3; ++a) {
    if (begin[a] == end[a]) {
      (a == 1 ? o.padding_h : o.padding_w) = begin[a];
    } else {
      x = PadWith(x, 2 + a, begin[a], end[a], 0.0f);
    }
  }
  const int64_t n = x.size(0), c = x.size(1), depth = x.size(2), kd = weight.size(2);
  const int64_t span = (kd - 1) * w.dilations[0] + 1;
  LOCKSTEP_REQUIRE(depth >= span, "Conv: the kernel's depth does not fit the input " << ShapeString(x_in.shape()));
  const int64_t d_out = (depth - span) / w.strides[0] + 1;
  Tensor sum;
  for (int64_t j = 0; j < kd; ++j) {
    // [N, C, d_out, H, W] -> [N * d_out, C, H, W], one Conv2d for all samples and output depths.
    const Tensor slices = Strided(x, 2, j * w.dilations[0], d_out, w.strides[0]);
    const Tensor batch = slices.Permute({0, 2, 1, 3, 4}).Reshape({n * d_out, c, x.size(3), x.size(4)});
    const Tensor y = Conv2d(batch, weight.Select(2, j), Tensor(), o);
    const Tensor back = y.Reshape({n, d_out, y.size(1), y.size(2), y.size(3)}).Permute({0, 2, 1, 3, 4});
    sum = j == 0 ? back : Add(sum, back);
  }
  if (bias.defined()) sum = Add(sum, bias.Reshape({bias.numel(), 1, 1, 1}));
  return sum.Contiguous();
}

}  // namespace onnx
}  // namespace lockstep
