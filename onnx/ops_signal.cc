// Signal-processing operators: the generalized cosine windows HannWindow, HammingWindow and
// BlackmanWindow, computed with lockstep's correctly rounded cosine.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"
#include "onnx/window.h"

namespace lockstep {
namespace onnx {

namespace {

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) for n < size, N = size (periodic) or size - 1
// (symmetric), each angle n times the float32 nearest 2 pi / N (or 4 pi / N), then the float32
// operations in that order.
OpSpec CosineWindow(const char* name, double a0, double a1, double a2) {
  return {name, 17, [name, a0, a1, a2](const NodeView& node) -> Kernel {
            node.RequireInputs(1, 1);
            const bool periodic = node.Int("periodic", 1) != 0;
            Elem out = Elem::kFloat;
            const int32_t type = static_cast<int32_t>(node.Int("output_datatype", kFloat));
            if (!ElemFromDataType(type, &out) || out == Elem::kBool) node.Unsupported("output_datatype " + DataTypeName(type));
            return [name, a0, a1, a2, periodic, out](const Values& in, RunContext&) -> Values {
              const Value& size_value = Input(in, 0, name);
              LOCKSTEP_REQUIRE(size_value.is_int() && size_value.tensor.numel() == 1,
                               name << ": size must be one integer, got " << ElemName(size_value.elem));
              const int64_t size = IntValues(size_value)[0];
              LOCKSTEP_REQUIRE(size >= 1 && size <= (int64_t{1} << 24), name << ": size must be in [1, 2^24], got " << size);
              const int64_t n_1 = periodic ? size : size - 1;
              std::vector<float> n(static_cast<size_t>(size));
              for (int64_t i = 0; i < size; ++i) n[i] = static_cast<float>(i);
              const Tensor index = Tensor::FromVector({size}, n);
              const double pi = 3.141592653589793238462643383279502884;
              Tensor w;
              if (n_1 == 0) {  // a symmetric window of one point: its peak
                w = Tensor::Full({size}, static_cast<float>(a0 - a1 + a2));
              } else {
                const Tensor c1 = Cos(MulScalar(index, static_cast<float>(2.0 * pi / n_1)));
                w = AddScalar(MulScalar(c1, static_cast<float>(-a1)), static_cast<float>(a0));
                if (a2 != 0.0) w = Add(w, MulScalar(Cos(MulScalar(index, static_cast<float>(4.0 * pi / n_1))), static_cast<float>(a2)));
              }
              return {CastValue(FloatValue(w), out)};
            };
          }};
}

// The cosines and sines of 2 pi k n / N for n < N (rows) and k < K (columns), with the circle's
// symmetries exact: for q = (k n) mod N, the cosine is that of the float32 nearest 2 pi min(q,
// N - q) / N and the sine +- that of 2 pi min(q, N - q) / N (lockstep's correctly rounded Cos and
// Sin), and at the quarter turns exactly 0 and +-1, so that terms that cancel in exact arithmetic
// cancel here too.
void Twiddles(int64_t n_len, int64_t k_len, Tensor* cos_table, Tensor* sin_table) {
  const double pi = 3.141592653589793238462643383279502884;
  const size_t count = static_cast<size_t>(n_len * k_len);
  std::vector<float> angle(count), sign(count), exact(count, 0.0f), exact_c(count), exact_s(count);
  for (int64_t n = 0; n < n_len; ++n) {
    for (int64_t k = 0; k < k_len; ++k) {
      const int64_t q = (k * n) % n_len, at = n * k_len + k, half = std::min(q, n_len - q);
      angle[at] = static_cast<float>(2.0 * pi * static_cast<double>(half) / static_cast<double>(n_len));
      sign[at] = 2 * q <= n_len ? 1.0f : -1.0f;
      if ((4 * q) % n_len == 0) {  // a quarter turn: cos, sin of 0, pi / 2, pi, 3 pi / 2
        const int64_t quarter = 4 * q / n_len;
        exact[at] = 1.0f;
        exact_c[at] = quarter == 0 ? 1.0f : quarter == 2 ? -1.0f : 0.0f;
        exact_s[at] = quarter == 1 ? 1.0f : quarter == 3 ? -1.0f : 0.0f;
      }
    }
  }
  const Shape shape{n_len, k_len};
  const Tensor a = Tensor::FromVector(shape, angle), m = Tensor::FromVector(shape, exact);
  *cos_table = Where(m, Tensor::FromVector(shape, exact_c), Cos(a));
  *sin_table = Where(m, Tensor::FromVector(shape, exact_s), Mul(Sin(a), Tensor::FromVector(shape, sign)));
}

// The DFT of real or complex frames along the last axis of xr (and xi, or undefined): re and im of
// sum_n x[n] e^(-+2 pi i k n / N) by matrix products with the twiddle tables (two products and one
// addition per part), the inverse divided by N.
void Dft(const Tensor& xr, const Tensor& xi, int64_t k_len, bool inverse, Tensor* re, Tensor* im) {
  const int64_t n_len = xr.size(-1);
  Tensor c, s;
  Twiddles(n_len, k_len, &c, &s);
  const Tensor rc = Matmul(xr, c), rs = Matmul(xr, s);
  if (xi.defined()) {
    const Tensor ic = Matmul(xi, c), is = Matmul(xi, s);
    *re = inverse ? Sub(rc, is) : Add(rc, is);
    *im = inverse ? Add(ic, rs) : Sub(ic, rs);
  } else {
    *re = rc;
    *im = inverse ? rs : Neg(rs);
  }
  if (inverse) {
    *re = Div(*re, Tensor::Scalar(static_cast<float>(n_len)));
    *im = Div(*im, Tensor::Scalar(static_cast<float>(n_len)));
  }
}

// DFT(x [batch, ..., 1 or 2], dft_length?): along `axis`, zero-padded or cut to dft_length; onesided
// keeps k <= N / 2; output [..., 2] (re, im).
Kernel DftKernel(const NodeView& node) {
  node.RequireInputs(1, 2);
  const int64_t axis_attr = node.Int("axis", 1);
  const bool inverse = node.Int("inverse", 0) != 0, onesided = node.Int("onesided", 0) != 0;
  node.Require(!(inverse && onesided), "inverse and onesided together are not defined");
  const std::string where = node.Where();
  return [axis_attr, inverse, onesided, where](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "DFT"), "DFT");
    LOCKSTEP_REQUIRE(x.dim() >= 3 && (x.size(-1) == 1 || x.size(-1) == 2),
                     "DFT: expected [batch, signal..., 1 or 2], got " << ShapeString(x.shape()));
    const int64_t axis = Axis(axis_attr, x.dim() - 1, where);
    LOCKSTEP_REQUIRE(axis >= 1, "DFT: axis 0 is the batch");
    Tensor xr = x.Select(-1, 0).Transpose(axis, x.dim() - 2);  // the transformed axis last
    Tensor xi = x.size(-1) == 2 ? x.Select(-1, 1).Transpose(axis, x.dim() - 2) : Tensor();
    int64_t n_len = xr.size(-1);
    if (in.size() > 1 && in[1].defined()) {
      n_len = IntValues(in[1])[0];
      LOCKSTEP_REQUIRE(n_len >= 1, "DFT: dft_length must be >= 1, got " << n_len);
      const auto fit = [n_len](const Tensor& t) {  // cut, or zero-padded at the end
        if (!t.defined()) return t;
        if (t.size(-1) >= n_len) return t.Slice(-1, 0, n_len);
        return PadWith(t, t.dim() - 1, 0, n_len - t.size(-1), 0.0f);
      };
      xr = fit(xr);
      xi = fit(xi);
    }
    Tensor re, im;
    Dft(xr.Contiguous(), xi.defined() ? xi.Contiguous() : Tensor(), onesided ? n_len / 2 + 1 : n_len, inverse, &re, &im);
    const Tensor y = Concat({re.Unsqueeze(-1), im.Unsqueeze(-1)}, re.dim());
    return {FloatValue(y.Transpose(axis, y.dim() - 2).Contiguous())};
  };
}

// STFT(signal [batch, length, 1 or 2], frame_step, window?, frame_length?): frames of
// frame_length every frame_step, times the window, each transformed (onesided by default for a
// real signal): [batch, frames, bins, 2].
Kernel StftKernel(const NodeView& node) {
  node.RequireInputs(2, 4);
  const bool onesided = node.Int("onesided", 1) != 0;
  return [onesided](const Values& in, RunContext&) -> Values {
    const Tensor x = FloatInput(Input(in, 0, "STFT"), "STFT");
    LOCKSTEP_REQUIRE(x.dim() == 3 && (x.size(2) == 1 || x.size(2) == 2),
                     "STFT: expected a signal [batch, length, 1 or 2], got " << ShapeString(x.shape()));
    const int64_t step = IntValues(Input(in, 1, "STFT"))[0];
    const Tensor window = in.size() > 2 && in[2].defined() ? FloatInput(in[2], "STFT") : Tensor();
    int64_t frame = window.defined() ? window.numel() : 0;
    if (in.size() > 3 && in[3].defined()) frame = IntValues(in[3])[0];
    LOCKSTEP_REQUIRE(step >= 1 && frame >= 1 && frame <= x.size(1) && (!window.defined() || window.numel() == frame),
                     "STFT: frame_step " << step << ", frame_length " << frame << " for a signal of " << x.size(1));
    const int64_t frames = (x.size(1) - frame) / step + 1;
    std::vector<Tensor> parts_r, parts_i;
    for (int64_t f = 0; f < frames; ++f) {
      Tensor r = x.Select(2, 0).Slice(1, f * step, f * step + frame).Unsqueeze(1);
      Tensor i = x.size(2) == 2 ? x.Select(2, 1).Slice(1, f * step, f * step + frame).Unsqueeze(1) : Tensor();
      if (window.defined()) {
        r = Mul(r, window);
        if (i.defined()) i = Mul(i, window);
      }
      parts_r.push_back(r);
      if (i.defined()) parts_i.push_back(i);
    }
    const Tensor fr = Concat(parts_r, 1).Contiguous();  // [batch, frames, frame]
    const Tensor fi = parts_i.empty() ? Tensor() : Concat(parts_i, 1).Contiguous();
    Tensor re, im;
    Dft(fr, fi, onesided && !fi.defined() ? frame / 2 + 1 : frame, false, &re, &im);
    return {FloatValue(Concat({re.Unsqueeze(-1), im.Unsqueeze(-1)}, re.dim()))};
  };
}

}  // namespace

void AddSignalOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"DFT", 17, DftKernel, {1}}
                   .Reads({"axis", "inverse", "onesided"})
                   .Scope("real or complex input; dft_length, onesided, inverse"));
  t->push_back(OpSpec{"STFT", 17, StftKernel, {1, 3}}.Reads({"onesided"}));
  t->push_back(CosineWindow("HannWindow", 0.5, 0.5, 0.0).Reads({"output_datatype", "periodic"}));
  t->push_back(CosineWindow("HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0.0)
                   .Reads({"output_datatype", "periodic"}));
  t->push_back(CosineWindow("BlackmanWindow", 0.42, 0.5, 0.08).Reads({"output_datatype", "periodic"}));
}

}  // namespace onnx
}  // namespace lockstep
