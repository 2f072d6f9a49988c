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

void GemmBatchGrouped(const backend::GemmCall& args, int64_t k_per_group) {
  if (const parallel::ActiveBatch* batch = parallel::CurrentBatch()) {
    parallel::GemmOverRanks(*batch, args, k_per_group);  // the same groups and tree, over ranks
    return;
  }
  Kernels().GemmBatchGrouped(&args, static_cast<size_t>(k_per_group));
}

namespace {

// A GEMM operand read in place: the last two dimensions of a float32 tensor on the current device
// whose rows (stride 1 along the last dimension) or columns (stride 1 along the second last) are
// contiguous, as attention's heads and transposed views are. Anything else is copied.
bool IsMatrixView(const Tensor& t) {
  if (!t.defined() || t.dtype() != DType::kFloat32 || t.device() != CurrentDevice() || t.dim() < 2) return false;
  const int64_t rows = t.size(-2), cols = t.size(-1), row_stride = t.strides()[t.dim() - 2],
                col_stride = t.strides()[t.dim() - 1];
  if (rows < 2 || cols < 2) return t.is_contiguous();
  return (col_stride == 1 && row_stride >= cols) || (row_stride == 1 && col_stride >= rows);
}

Tensor MatrixOperand(const Tensor& t) { return IsMatrixView(t) ? t : ContiguousData(t, "matmul"); }

// The GEMM layout of a matrix view: transposed (columns contiguous) or not, and the leading
// dimension.
void Layout(const Tensor& t, int32_t* transposed, size_t* ld) {
  const int64_t rows = t.size(-2), cols = t.size(-1), row_stride = t.strides()[t.dim() - 2],
                col_stride = t.strides()[t.dim() - 1];
  *transposed = !(col_stride == 1 && (rows < 2 || row_stride >= cols)) ? 1 : 0;
  *ld = static_cast<size_t>(*transposed ? col_stride : (rows < 2 ? cols : row_stride));
}

// The element offset of batch index `batch` (row-major over t's leading dimensions).
int64_t BatchOffset(const Tensor& t, int64_t batch) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 3; d >= 0; --d) {
    const int64_t size = t.size(d);
    offset += (batch % size) * t.strides()[d];
    batch /= size;
  }
  return offset;
}

// The product, without a graph node. bias (null, or n floats) is added in the GEMM's store; it
// needs the one product over every row (a 2-D right operand, a contiguous left one).
Tensor MatmulValues(const Tensor& a_in, const Tensor& b_in, const float* bias) {
  const Tensor a = MatrixOperand(a_in), b = MatrixOperand(b_in);
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
  backend::GemmCall g;
  Layout(a, &g.trans_a, &g.lda);
  Layout(b, &g.trans_b, &g.ldb);
  g.n = static_cast<size_t>(n);
  g.k = static_cast<size_t>(k);
  g.ldc = static_cast<size_t>(n);
  if (b.dim() == 2 && a.is_contiguous()) {
    // One product over every row of every batch.
    g.m = static_cast<size_t>(batches * m);
    g.a = a.data_f32(); g.b = b.data_f32(); g.c = out.data_f32();
    g.bias = bias;
    Kernels().Gemm(&g);
  } else {
    LOCKSTEP_ASSERT(bias == nullptr);
    g.m = static_cast<size_t>(m);
    for (int64_t i = 0; i < batches; ++i) {
      g.a = a.data_f32() + BatchOffset(a, i);
      g.b = b.data_f32() + (b.dim() == 2 ? 0 : BatchOffset(b, i));
      g.c = out.data_f32() + i * m * n;
      const bool last = i + 1 == batches;  // the next product's operands, loaded while this one runs
      g.next_a = last ? nullptr : a.data_f32() + BatchOffset(a, i + 1);
      g.next_b = last || b.dim() == 2 ? nullptr : b.data_f32() + BatchOffset(b, i + 1);
      Kernels().Gemm(&g);
    }
  }
  return out;
}

}  // namespace

Tensor Matmul(const Tensor& a_in, const Tensor& b_in) {
  return trace::Op("matmul", [&]() -> Tensor {
    Tensor out = MatmulValues(a_in, b_in, nullptr);
    if (NeedsGrad({a_in, b_in})) RecordNode(out, OpKind::kMatmul, {a_in, b_in});
    return out;
  });
}

namespace {

// x W^T + bias as one GEMM that adds the bias as it stores each output: the same operations (the
// sum, then one addition) and the same graph (a matmul node, then an add node) as Add(Matmul(x,
// W^T), bias), without a pass over the output. The matmul's own output is never read by a
// backward rule, so the matmul node gets a stand-in of its shape instead.
Tensor MatmulAddBias(const Tensor& x_in, const Tensor& wt_in, const Tensor& bias) {
  const Tensor bias_data = ContiguousData(bias, "linear");
  Tensor out = MatmulValues(x_in, wt_in, bias_data.data_f32());
  Tensor product = Tensor::Empty(Shape(out.shape().size(), 1)).Expand(out.shape());
  if (NeedsGrad({x_in, wt_in})) RecordNode(product, OpKind::kMatmul, {x_in, wt_in});
  if (NeedsGrad({product, bias})) RecordNode(out, OpKind::kAdd, {product, bias});
  return out;
}

}  // namespace

Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return trace::Op("linear", [&]() -> Tensor {
    LOCKSTEP_REQUIRE(weight.defined() && weight.dim() == 2,
                     "linear: weight must be 2-D [out, in], got " << (weight.defined() ? ShapeString(weight.shape()) : "none"));
    LOCKSTEP_REQUIRE(x.dim() >= 1 && x.size(-1) == weight.size(1),
                     "linear: input " << ShapeString(x.shape()) << " does not match weight "
                                      << ShapeString(weight.shape()) << " (expected last dimension "
                                      << weight.size(1) << ")");
    const Tensor wt = weight.Transpose(0, 1);
    if (!bias.defined()) return Matmul(x, wt);
    LOCKSTEP_REQUIRE(bias.shape() == Shape{weight.size(0)},
                     "linear: bias shape " << ShapeString(bias.shape()) << " does not match "
                                           << weight.size(0) << " outputs");
    // The bias after the sum (docs/numerics.md, rule 4), in the GEMM's store where the input is
    // one contiguous product; a trace records the matmul's own output, so it gets the two ops.
    if (x.dim() >= 2 && x.is_contiguous() && !trace::Active()) return MatmulAddBias(x, wt, bias);
    return Add(Matmul(x, wt), bias);
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
