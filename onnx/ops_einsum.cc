// Einsum. The equation is parsed at load; at run time the labels of each operand (an ellipsis
// standing for its leading dimensions, aligned from the right as NumPy broadcasts) are resolved
// against the ranks. float32 operands are computed with lockstep's ops, so the result trains:
// repeated labels become diagonals (a gather), labels no one else needs are summed first, then the
// operands are contracted left to right, each pair as one batched Matmul over
// [shared kept labels, left labels, contracted labels] x [.., contracted, right labels].
// Integer and float64 operands are computed on the host: each output element is the sum, over the
// summed labels in row-major order, of the operands' product in operand order (float64: one
// rounding per operation, the first product not added to 0; integers wrapped into their type).
#include <stdint.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "onnx/float64.h"
#include "onnx/op_helpers.h"
#include "onnx/op_registry.h"

namespace lockstep {
namespace onnx {

namespace {

// Labels: letters as their character codes; the dimensions an ellipsis stands for as
// kEllipsisLabel + k, k counted from the leftmost of the widest ellipsis.
constexpr int kEllipsisLabel = 1000;

struct Term {
  std::vector<int> letters;  // in order, with kEllipsisLabel - 1 where the ellipsis stands
  bool has_ellipsis = false;
};

struct Equation {
  std::vector<Term> inputs;
  Term output;
  bool explicit_output = false;
};

Term ParseTerm(const std::string& text, const std::string& where) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      LOCKSTEP_REQUIRE_FORMAT(text.compare(i, 3, "...") == 0 && !term.has_ellipsis,
                              where << ": malformed ellipsis in einsum term '" << text << "'");
      term.has_ellipsis = true;
      term.letters.push_back(kEllipsisLabel - 1);
      i += 2;
    } else {
      LOCKSTEP_REQUIRE_FORMAT((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'),
                              where << ": einsum label '" << c << "' in '" << text << "' is not a letter");
      term.letters.push_back(c);
    }
  }
  return term;
}

Equation ParseEquation(const std::string& raw, size_t operands, const std::string& where) {
  std::string text;
  for (char c : raw) {
    if (c != ' ') text.push_back(c);
  }
  Equation eq;
  const size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    eq.inputs.push_back(
        ParseTerm(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start), where));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  LOCKSTEP_REQUIRE_FORMAT(eq.inputs.size() == operands, where << ": the equation '" << raw << "' names "
                                                              << eq.inputs.size() << " operands, the node has "
                                                              << operands);
  std::map<int, int> count;
  for (const Term& t : eq.inputs) {
    for (int l : t.letters) ++count[l];
  }
  if (arrow != std::string::npos) {
    eq.explicit_output = true;
    eq.output = ParseTerm(text.substr(arrow + 2), where);
    std::set<int> seen;
    for (int l : eq.output.letters) {
      LOCKSTEP_REQUIRE_FORMAT(seen.insert(l).second, where << ": einsum output label repeated in '" << raw << "'");
      LOCKSTEP_REQUIRE_FORMAT(l == kEllipsisLabel - 1 || count.count(l),
                              where << ": einsum output label '" << static_cast<char>(l) << "' is in no input");
    }
  } else {  // NumPy's implicit output: the ellipsis, then the letters used once, alphabetically
    eq.output.has_ellipsis = count.count(kEllipsisLabel - 1) > 0;
    if (eq.output.has_ellipsis) eq.output.letters.push_back(kEllipsisLabel - 1);
    for (const auto& [l, n] : count) {
      if (l != kEllipsisLabel - 1 && n == 1) eq.output.letters.push_back(l);
    }
  }
  return eq;
}

// The labels of every operand's dimensions and of the output's, for operands of these ranks.
struct Resolved {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

Resolved Resolve(const Equation& eq, const std::vector<int64_t>& ranks) {
  Resolved r;
  int64_t widest = 0;
  std::vector<int64_t> spans;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const Term& t = eq.inputs[i];
    const int64_t named = static_cast<int64_t>(t.letters.size()) - (t.has_ellipsis ? 1 : 0);
    const int64_t span = ranks[i] - named;
    LOCKSTEP_REQUIRE(t.has_ellipsis ? span >= 0 : span == 0, "Einsum: operand " << i << " has rank " << ranks[i]
                                                                                << ", its term names " << named
                                                                                << " dimensions");
    spans.push_back(span);
    widest = std::max(widest, span);
  }
  const auto expand = [&](const Term& t, int64_t span) {
    std::vector<int> labels;
    for (int l : t.letters) {
      if (l != kEllipsisLabel - 1) {
        labels.push_back(l);
        continue;
      }
      for (int64_t k = widest - span; k < widest; ++k) labels.push_back(kEllipsisLabel + static_cast<int>(k));
    }
    return labels;
  };
  for (size_t i = 0; i < eq.inputs.size(); ++i) r.inputs.push_back(expand(eq.inputs[i], spans[i]));
  r.output = expand(eq.output, widest);
  return r;
}

// Each label's size: equal wherever it appears, except that ellipsis dimensions broadcast from 1.
std::map<int, int64_t> LabelSizes(const Resolved& r, const std::vector<Shape>& shapes) {
  std::map<int, int64_t> sizes;
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    for (size_t d = 0; d < r.inputs[i].size(); ++d) {
      const int l = r.inputs[i][d];
      const int64_t n = shapes[i][d];
      auto it = sizes.find(l);
      if (it == sizes.end()) {
        sizes[l] = n;
      } else if (it->second != n) {
        LOCKSTEP_REQUIRE(l >= kEllipsisLabel && (n == 1 || it->second == 1),
                         "Einsum: label "
                             << (l < kEllipsisLabel ? std::string(1, static_cast<char>(l)) : "of the ellipsis")
                             << " has sizes " << it->second << " and " << n);
        it->second = std::max(n, it->second);
      }
    }
  }
  return sizes;
}

// ---- float32, by lockstep's ops ----

struct Operand {
  Tensor t;
  std::vector<int> labels;
};

int64_t IndexOf(const std::vector<int>& labels, int l) {
  return static_cast<int64_t>(std::find(labels.begin(), labels.end(), l) - labels.begin());
}

// Moves the dimensions of `first` to the front in that order, the rest after them.
Operand Arrange(const Operand& x, const std::vector<int>& first) {
  std::vector<int64_t> perm;
  std::vector<int> labels;
  for (int l : first) {
    perm.push_back(IndexOf(x.labels, l));
    labels.push_back(l);
  }
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (std::find(first.begin(), first.end(), x.labels[d]) == first.end()) {
      perm.push_back(static_cast<int64_t>(d));
      labels.push_back(x.labels[d]);
    }
  }
  return {x.t.Permute(perm), labels};
}

// A label repeated within an operand keeps only its diagonal.
Operand Diagonals(Operand x) {
  for (bool found = true; found;) {
    found = false;
    for (size_t i = 0; i < x.labels.size() && !found; ++i) {
      for (size_t j = i + 1; j < x.labels.size() && !found; ++j) {
        if (x.labels[i] != x.labels[j]) continue;
        found = true;
        std::vector<int> rest;
        std::vector<int64_t> perm;
        for (size_t d = 0; d < x.labels.size(); ++d) {
          if (d != i && d != j) {
            rest.push_back(x.labels[d]);
            perm.push_back(static_cast<int64_t>(d));
          }
        }
        perm.push_back(static_cast<int64_t>(i));
        perm.push_back(static_cast<int64_t>(j));
        const int64_t n = x.t.shape()[i];
        Shape flat(x.t.shape().begin(), x.t.shape().end());
        Shape shape;
        for (int64_t p : perm) shape.push_back(flat[p]);
        shape.pop_back();
        shape.back() = n * n;
        const Tensor square = x.t.Permute(perm).Reshape(shape);
        std::vector<int64_t> diagonal;
        for (int64_t k = 0; k < n; ++k) diagonal.push_back(k * (n + 1));
        x.t = Take(FloatValue(square), static_cast<int64_t>(shape.size()) - 1, diagonal, {n}, "Einsum").tensor;
        rest.push_back(x.labels[i]);
        x.labels = rest;
      }
    }
  }
  return x;
}

// Sums the dimensions whose labels are not in `keep`, as one reduction over their row-major
// flattening.
Operand SumExcept(const Operand& x, const std::set<int>& keep) {
  std::vector<int> kept, summed;
  for (int l : x.labels) (keep.count(l) ? kept : summed).push_back(l);
  if (summed.empty()) return x;
  const Operand arranged = Arrange(x, kept);
  Shape shape;
  for (size_t d = 0; d < kept.size(); ++d) shape.push_back(arranged.t.shape()[d]);
  int64_t count = 1;
  for (size_t d = kept.size(); d < arranged.labels.size(); ++d) count *= arranged.t.shape()[d];
  Shape flat = shape;
  flat.push_back(count);
  return {Sum(arranged.t.Reshape(flat), static_cast<int64_t>(shape.size())), kept};
}

Shape SizesOf(const std::vector<int>& labels, const std::map<int, int64_t>& sizes) {
  Shape s;
  for (int l : labels) s.push_back(sizes.at(l));
  return s;
}

int64_t Product(const Shape& s) {
  int64_t p = 1;
  for (int64_t n : s) p *= n;
  return p;
}

Operand Contract(const Operand& a, const Operand& b, const std::set<int>& needed, const std::map<int, int64_t>& sizes) {
  std::vector<int> batch, contracted, a_only, b_only;
  for (int l : a.labels) {
    const bool shared = std::find(b.labels.begin(), b.labels.end(), l) != b.labels.end();
    (shared ? (needed.count(l) ? batch : contracted) : a_only).push_back(l);
  }
  for (int l : b.labels) {
    if (std::find(a.labels.begin(), a.labels.end(), l) == a.labels.end()) b_only.push_back(l);
  }
  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), a_only.begin(), a_only.end());
  a_order.insert(a_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), b_only.begin(), b_only.end());
  const Tensor left = Arrange(a, a_order).t.Expand(SizesOf(a_order, sizes));
  const Tensor right = Arrange(b, b_order).t.Expand(SizesOf(b_order, sizes));
  const int64_t nb = Product(SizesOf(batch, sizes)), m = Product(SizesOf(a_only, sizes)),
                k = Product(SizesOf(contracted, sizes)), n = Product(SizesOf(b_only, sizes));
  const Tensor y = Matmul(left.Reshape({nb, m, k}), right.Reshape({nb, k, n}));
  std::vector<int> labels = batch;
  labels.insert(labels.end(), a_only.begin(), a_only.end());
  labels.insert(labels.end(), b_only.begin(), b_only.end());
  return {y.Reshape(SizesOf(labels, sizes)), labels};
}

Tensor EinsumFloat(const Resolved& r, const std::vector<Tensor>& operands, const std::map<int, int64_t>& sizes) {
  std::vector<Operand> ops;
  for (size_t i = 0; i < operands.size(); ++i) ops.push_back(Diagonals({operands[i], r.inputs[i]}));
  const std::set<int> output(r.output.begin(), r.output.end());
  // The labels needed after operand i: the output's and those of the operands after it.
  const auto needed_after = [&](size_t i) {
    std::set<int> s = output;
    for (size_t j = i + 1; j < ops.size(); ++j) s.insert(ops[j].labels.begin(), ops[j].labels.end());
    return s;
  };
  const auto needed_besides = [&](size_t i) {
    std::set<int> s = needed_after(i);
    for (size_t j = 0; j < i; ++j) s.insert(ops[j].labels.begin(), ops[j].labels.end());
    return s;
  };
  for (size_t i = 0; i < ops.size(); ++i) ops[i] = SumExcept(ops[i], needed_besides(i));
  Operand acc = ops[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    std::set<int> keep = needed_after(i);
    keep.insert(ops[i].labels.begin(), ops[i].labels.end());
    acc = Contract(SumExcept(acc, keep), ops[i], needed_after(i), sizes);
  }
  acc = SumExcept(acc, output);
  // Output labels that no operand still has (all broadcast ellipsis dims of size 1) are added.
  const Operand arranged = Arrange(acc, r.output);
  return arranged.t.Expand(SizesOf(r.output, sizes)).Contiguous();
}

// ---- integers and float64, on the host ----

template <typename T, typename Combine>
std::vector<T> EinsumHost(const Resolved& r, const std::vector<std::vector<T>>& data, const std::vector<Shape>& shapes,
                          const std::map<int, int64_t>& sizes, Combine combine) {
  std::vector<int> order = r.output;  // output labels, then the summed ones
  for (const auto& labels : r.inputs) {
    for (int l : labels) {
      if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
    }
  }
  // Each operand's stride per label (summed over repeated labels: a diagonal; 0 where broadcast).
  std::vector<std::vector<int64_t>> strides(data.size(), std::vector<int64_t>(order.size(), 0));
  for (size_t i = 0; i < data.size(); ++i) {
    int64_t stride = 1;
    for (size_t d = r.inputs[i].size(); d-- > 0;) {
      if (shapes[i][d] != 1) strides[i][static_cast<size_t>(IndexOf(order, r.inputs[i][d]))] += stride;
      stride *= shapes[i][d];
    }
  }
  const size_t outputs = static_cast<size_t>(Product(SizesOf(r.output, sizes)));
  const int64_t terms =
      Product(SizesOf(std::vector<int>(order.begin() + static_cast<int64_t>(r.output.size()), order.end()), sizes));
  std::vector<T> out(outputs, T{0});
  std::vector<int64_t> index(order.size(), 0);
  for (size_t o = 0; o < outputs; ++o) {
    T sum{0};
    for (int64_t t = 0; t < terms; ++t) {
      T product{1};
      for (size_t i = 0; i < data.size(); ++i) {
        int64_t at = 0;
        for (size_t k = 0; k < order.size(); ++k) at += index[k] * strides[i][k];
        product = i == 0 ? data[i][static_cast<size_t>(at)] : combine.mul(product, data[i][static_cast<size_t>(at)]);
      }
      sum = t == 0 ? product : combine.add(sum, product);
      // Next index, row-major over all labels (the summed ones vary fastest).
      for (size_t k = order.size(); k-- > 0;) {
        if (++index[k] < sizes.at(order[k])) break;
        index[k] = 0;
      }
    }
    out[o] = sum;
    if (terms == 0) {  // nothing summed over: advance the output index alone
      for (size_t k = r.output.size(); k-- > 0;) {
        if (++index[k] < sizes.at(order[k])) break;
        index[k] = 0;
      }
    }
  }
  return out;
}

struct Float64Arithmetic {
  double mul(double a, double b) const { return a * b; }
  double add(double a, double b) const { return a + b; }
};

struct WrappingArithmetic {  // modulo 2^64, then wrapped into the type by IntTensor
  int64_t mul(int64_t a, int64_t b) const {
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  }
  int64_t add(int64_t a, int64_t b) const {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
};

Kernel EinsumKernel(const NodeView& node) {
  node.Require(node.inputs() >= 1, "expected at least one input");
  node.Require(node.Has("equation"), "attribute 'equation' is required");
  const Equation eq = ParseEquation(node.String("equation", ""), node.inputs(), node.Where());
  return [eq](const Values& in, RunContext&) -> Values {
    std::vector<int64_t> ranks;
    std::vector<Shape> shapes;
    for (size_t i = 0; i < in.size(); ++i) {
      const Value& v = Input(in, i, "Einsum");
      RequireSameElem(v, in[0], "Einsum");
      ranks.push_back(static_cast<int64_t>(v.shape().size()));
      shapes.push_back(v.shape());
    }
    const Resolved r = Resolve(eq, ranks);
    const std::map<int, int64_t> sizes = LabelSizes(r, shapes);
    const Shape out_shape = SizesOf(r.output, sizes);
    if (in[0].is_float64()) {
      std::vector<std::vector<double>> data;
      for (const Value& v : in) data.push_back(Float64Values(v));
      return {Float64Tensor(out_shape, EinsumHost(r, data, shapes, sizes, Float64Arithmetic{}))};
    }
    if (in[0].is_int()) {
      std::vector<std::vector<int64_t>> data;
      for (const Value& v : in) data.push_back(IntValues(v));
      return {IntTensor(out_shape, EinsumHost(r, data, shapes, sizes, WrappingArithmetic{}), in[0].elem)};
    }
    std::vector<Tensor> operands;
    for (const Value& v : in) operands.push_back(FloatInput(v, "Einsum"));
    return {FloatValue(EinsumFloat(r, operands, sizes))};
  };
}

}  // namespace

void AddEinsumOps(std::vector<OpSpec>* t) {
  t->push_back(OpSpec{"Einsum", 12, EinsumKernel}
                   .Reads({"equation"})
                   .Scope("explicit and implicit outputs, ellipses; diagonals"));
}

}  // namespace onnx
}  // namespace lockstep
