// Matrix products on the contract's GEMM (simd/gemm.h): each output sums its K products in
// increasing k. Weight gradients, whose K runs over the batch, use GemmBatchGrouped.
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/trace/trace.h"
#include "core/ops_internal.h"
#include "core/parallel/batch_reduce.h"

namespace lockstep {

void GemmBatchGrouped(const simd::GemmArgs& args, int64_t k_per_group) {
  if (const parallel::ActiveBatch* batch = parallel::CurrentBatch()) {
    parallel::GemmOverRanks(*batch, args, k_per_group);  // the same groups and tree, over ranks
    return;
  }
  Kernels().GemmBatchGrouped(args, static_cast<size_t>(k_per_group));
}

namespace {

// C[m, n] = A[m, k] B[k, n] on contiguous row-major blocks.
void PlainGemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  simd::GemmArgs g;
  g.m = m; g.n = n; g.k = k;
  g.a = a; g.lda = k; g.b = b; g.ldb = n; g.c = c; g.ldc = n;
  Kernels().Gemm(g);
}

}  // namespace

namespace {

// A 2-D operand that is the transpose of a contiguous matrix (e.g. weight.Transpose(0, 1) in
// Linear) is read in place with the GEMM's transpose flag instead of being copied.
bool IsTransposedMatrix(const Tensor& t) {
  return t.defined() && t.dtype() == DType::kFloat32 && t.dim() == 2 && t.size(0) > 1 && t.size(1) > 1 &&
         t.strides()[0] == 1 && t.strides()[1] == t.size(0);
}

}  // namespace

Tensor Matmul(const Tensor& a_in, const Tensor& b_in) {
  return trace::Op("matmul", [&]() -> Tensor {
    const bool b_transposed = IsTransposedMatrix(b_in);
    const Tensor a = ContiguousData(a_in, "matmul"), b = b_transposed ? b_in : ContiguousData(b_in, "matmul");
    LOCKSTEP_REQUIRE(a.dim() >= 2 && b.dim() >= 2,
                     "matmul: expected operands of rank >= 2, got " << ShapeString(a.shape()) << " and "
                                                                    << ShapeString(b.shape()));
    const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
    LOCKSTEP_REQUIRE(b.size(-2) == k, "matmul: inner dimensions differ: " << ShapeString(a.shape()) << " x "
                                                                         << ShapeString(b.shape()));
    Shape batch(a.shape().begin(), a.shape().end() - 2);
    const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
    LOCKSTEP_REQUIRE(b.dim() == 2 || b_batch == batch,
                     "matmul: batch dimensions differ: " << ShapeString(a.shape()) << " x "
                                                         << ShapeString(b.shape())
                                                         << " (expected equal batch dimensions or a 2-D right operand)");
    Shape out_shape = batch;
    out_shape.push_back(m);
    out_shape.push_back(n);
    Tensor out = Tensor::Empty(out_shape);
    const int64_t batches = NumElements(batch);
    if (b_transposed) {
      simd::GemmArgs g;  // B stored as [n, k]
      g.trans_b = true;
      g.m = batches * m; g.n = n; g.k = k;
      g.a = a.data_f32(); g.lda = k; g.b = b.data_f32(); g.ldb = k; g.c = out.data_f32(); g.ldc = n;
      Kernels().Gemm(g);
    } else if (b.dim() == 2) {
      PlainGemm(a.data_f32(), b.data_f32(), out.data_f32(), batches * m, n, k);
    } else {
      for (int64_t i = 0; i < batches; ++i) {
        PlainGemm(a.data_f32() + i * m * k, b.data_f32() + i * k * n, out.data_f32() + i * m * n, m, n, k);
      }
    }
    if (NeedsGrad({a_in, b_in})) RecordNode(out, OpKind::kMatmul, {a_in, b_in});
    return out;
  });
}

Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return trace::Op("linear", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(weight.defined() && weight.dim() == 2,
                     "linear: weight must be 2-D [out, in], got " << (weight.defined() ? ShapeString(weight.shape()) : "none"));
    LOCKSTEP_REQUIRE(x.dim() >= 1 && x.size(-1) == weight.size(1),
                     "linear: input " << ShapeString(x.shape()) << " does not match weight "
                                      << ShapeString(weight.shape()) << " (expected last dimension "
                                      << weight.size(1) << ")");
    Tensor y = Matmul(x, weight.Transpose(0, 1));
    if (bias.defined()) {
      LOCKSTEP_REQUIRE(bias.shape() == Shape{weight.size(0)},
                       "linear: bias shape " << ShapeString(bias.shape()) << " does not match "
                                             << weight.size(0) << " outputs");
      y = Add(y, bias);  // bias after the sum (docs/numerics.md, rule 4)
    }
    return y;
  });
}

Tensor Concat(const std::vector<Tensor>& tensors, int64_t dim) {
  return trace::Op("cat", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(!tensors.empty(), "concat: no tensors given");
    const Tensor& first = tensors[0];
    const int64_t d = NormalizeDim(dim, first.dim(), "concat");
    Shape out_shape = first.shape();
    out_shape[d] = 0;
    for (const Tensor& t : tensors) {
      LOCKSTEP_REQUIRE(t.dim() == first.dim() && t.dtype() == first.dtype(),
                       "concat: all tensors need the same rank and dtype; got " << ShapeString(t.shape())
                                                                                 << " and " << ShapeString(first.shape()));
      for (int64_t i = 0; i < t.dim(); ++i) {
        LOCKSTEP_REQUIRE(i == d || t.shape()[i] == first.shape()[i],
                         "concat: shapes " << ShapeString(first.shape()) << " and " << ShapeString(t.shape())
                                           << " differ outside dimension " << d);
      }
      out_shape[d] += t.shape()[d];
    }
    Tensor out = Tensor::Empty(out_shape, first.dtype());
    int64_t at = 0;
    std::vector<int64_t> extents;
    for (const Tensor& t : tensors) {
      out.Slice(d, at, at + t.shape()[d]).CopyFrom(t);
      at += t.shape()[d];
      extents.push_back(t.shape()[d]);
    }
    if (NeedsGrad(tensors)) {
      Node& node = RecordNode(out, OpKind::kConcat, tensors);
      node.ints = {d};
      node.ints.insert(node.ints.end(), extents.begin(), extents.end());
    }
    return out;
  });
}

}  // namespace lockstep
