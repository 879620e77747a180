// The product family: C := alpha op(A) op(B) + beta C in a precision that one descriptor names,
// its strided batches and its summed batches. Its fallbacks (an FP16 operand widened, FP16 that
// would overflow run as TF32, summed batches by parts) use the conversion, element-wise and
// reduction families, which it therefore includes.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "randnla/matrix.hpp"
#include "randnla/ops/conversions.hpp"
#include "randnla/ops/elementwise.hpp"
#include "randnla/ops/product_types.hpp"
#include "randnla/ops/reductions.hpp"

namespace randnla {

/// Products of matrices in the context's memory. Each public member checks its arguments once
/// (shapes, memory spaces; InvalidArgument naming the parameter and value), handles the empty cases
/// and k = 0 (C := beta C, as in BLAS), resolves Auto, then calls the backend's unchecked hook
/// with a resolved precision (no Auto).
class ProductOps : public virtual ConversionOps, public virtual ElementwiseOps, public virtual ReductionOps {
 public:
  /// FP32 operands in the precision `precision` names (ProductMode). k = 0 gives C := beta C, as
  /// in BLAS. Auto runs Split where capabilities().tensor_cores, else FP32; FP16 runs as TF32
  /// when an operand has an entry with |x| >= 2^15. `report`, when given, says what ran and why.
  void product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
               MatrixView<float> c, ProductPrecision precision = {}, ProductReport* report = nullptr);
  /// A FP32, B FP16 (e.g. an FP16 sketch Omega). Split is SHGEMM (A split, B taken as it is); every
  /// other mode multiplies the exact FP32 widening of B.
  void product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
               MatrixView<float> c, ProductPrecision precision = {}, ProductReport* report = nullptr);
  /// A and B FP16, sums and C FP32: FP16 Tensor Cores (cuBLAS GemmEx) on the GPU, BLAS on the
  /// exact FP32 widening elsewhere. For an operand rounded to FP16 once and used by several
  /// products (the "16|32" products of a low-rank approximation). k = 0 gives C := beta C.
  void product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
               MatrixView<float> c) {
    product_checks(ta, tb, a, b, c);
    if (c.empty()) return;
    if (op_cols(ta, a.rows(), a.cols()) == 0) return scale(beta, c);
    do_product(ta, tb, alpha, a, b, beta, c);
  }
  /// A, B, the sums and C all FP16 (the "16|16" products of a low-rank approximation): cuBLAS with FP16 compute on the
  /// GPU; elsewhere each partial sum is rounded to FP16 in order of k (a reference that costs
  /// m n k element operations; Tensor Cores round in another order, so results differ by rounding).
  /// A partial sum beyond FP16's range gives +-Inf: callers keep the operands' scale in range.
  void product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
               MatrixView<fp16> c) {
    product_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product(ta, tb, alpha, a, b, beta, c);
  }
  /// FP64: DGEMM.
  void product(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
               MatrixView<double> c) {
    product_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product(ta, tb, alpha, a, b, beta, c);
  }
  /// C_i := alpha op(A_i) op(B_i) + beta C_i for i < C.count (BLAS's strided-batched GEMM; a
  /// stride of 0 reuses one matrix for every i). A.count and B.count must equal C.count.
  void product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b,
                               float beta, StridedBatch<float> c, ProductPrecision precision = {}) {
    batch_checks(ta, tb, a, b, c);
    if (c.count > 0 && !c.first.empty()) do_product_strided_batched(ta, tb, alpha, a, b, beta, c, resolve(precision));
  }
  /// A FP32, B FP16 (e.g. blocks of an FP16 sketch Omega): SHGEMM per matrix where `precision`
  /// resolves to Split, else the product of the exact FP32 widening of each B_i.
  void product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b,
                               float beta, StridedBatch<float> c, ProductPrecision precision = {}) {
    batch_checks(ta, tb, a, b, c);
    if (c.count == 0 || c.first.empty()) return;
    precision = resolve(precision);
    if (precision.mode == ProductMode::Split)
      return do_product_split_strided_batched(ta, tb, alpha, a, b, beta, c, precision.split);
    for (index_t i = 0; i < c.count; ++i) product(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i), precision);
  }
  void product_strided_batched(Op ta, Op tb, double alpha, StridedBatch<const double> a, StridedBatch<const double> b,
                               double beta, StridedBatch<double> c) {
    batch_checks(ta, tb, a, b, c);
    if (c.count > 0 && !c.first.empty()) do_product_strided_batched(ta, tb, alpha, a, b, beta, c);
  }

  /// C := alpha sum_i op(A_i) op(B_i) + beta C over i < C's batch count: one product whose K runs
  /// over the batches' matrices in turn (a tensor's middle-mode unfolding times a sketch: A_i its
  /// slices). A backend with a kernel for it runs one product (the CUDA backend: split products
  /// whose op(A_i) have a K of a multiple of 64 and whose B_i follow one another in B's rows);
  /// otherwise batches of products into partial sums, at most |A| / 16 elements of them, added up
  /// by one FP32 product with a vector of ones. count = A.count = B.count >= 1.
  void product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b, float beta,
                      MatrixView<float> c, ProductPrecision precision = {}) {
    summed_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product_summed(ta, tb, alpha, a, b, beta, c, resolve(precision));
  }
  void product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b, float beta,
                      MatrixView<float> c, ProductPrecision precision = {}) {
    summed_checks(ta, tb, a, b, c);
    if (!c.empty()) do_product_summed(ta, tb, alpha, a, b, beta, c, resolve(precision));
  }

  /// The one place Auto is decided: Split where capabilities().tensor_cores, FP32 without (the split
  /// products are only emulated there), with the reason in report->why. Algorithms ask it before
  /// they choose their operands' storage (an FP16 Omega for SHGEMM), so that what they store and
  /// what the products run agree. Throws InvalidArgument for fp16_sums, which only the
  /// FP16 x FP16 -> FP16 product takes.
  ProductPrecision resolve(ProductPrecision p, ProductReport* report = nullptr) const {
    require(!p.fp16_sums, "precision", "fp16-all", "FP16 sums are taken only by the FP16 x FP16 -> FP16 product");
    if (p.mode != ProductMode::Auto) return p;
    if (capabilities().tensor_cores) return ProductPrecision::split_in(p.split);
    if (report) report->why = "auto: " + description() + " has no Tensor Cores";
    return ProductPrecision::fp32();
  }

 protected:
  /// precision.mode is FP32, TF32, FP16 (operands known to fit) or Split.
  virtual void do_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                          MatrixView<float> c, const ProductPrecision& precision, ProductReport* report) = 0;
  /// SHGEMM: A split in the format `format`, B FP16.
  virtual void do_product_split(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b,
                                float beta, MatrixView<float> c, TensorCore format, ProductReport* report) = 0;
  virtual void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                          MatrixView<float> c) = 0;
  virtual void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                          MatrixView<fp16> c) = 0;
  virtual void do_product(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b,
                          double beta, MatrixView<double> c) = 0;
  /// One do_product per matrix of the batch; backends with a batched library call override these.
  virtual void do_product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a,
                                          StridedBatch<const float> b, float beta, StridedBatch<float> c,
                                          const ProductPrecision& precision) {
    for (index_t i = 0; i < c.count; ++i) do_product(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i), precision, nullptr);
  }
  /// SHGEMM per matrix of the batch; backends with a batched kernel override it.
  virtual void do_product_split_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a,
                                                StridedBatch<const fp16> b, float beta, StridedBatch<float> c,
                                                TensorCore format) {
    for (index_t i = 0; i < c.count; ++i) do_product_split(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i), format, nullptr);
  }
  virtual void do_product_strided_batched(Op ta, Op tb, double alpha, StridedBatch<const double> a,
                                          StridedBatch<const double> b, double beta, StridedBatch<double> c) {
    for (index_t i = 0; i < c.count; ++i) do_product(ta, tb, alpha, a.at(i), b.at(i), beta, c.at(i));
  }
  /// Partial sums (summed_by_parts); backends with a kernel for it override these.
  virtual void do_product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b,
                                 float beta, MatrixView<float> c, const ProductPrecision& precision) {
    summed_by_parts(ta, tb, alpha, a, b, beta, c, precision);
  }
  virtual void do_product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b,
                                 float beta, MatrixView<float> c, const ProductPrecision& precision) {
    summed_by_parts(ta, tb, alpha, a, b, beta, c, precision);
  }
  /// Batches of products into `parts` partial sums (part j takes matrices j, j + parts, ...),
  /// then C := alpha (partial sums) 1 + beta C in FP32.
  template <class B>
  void summed_by_parts(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const B> b, float beta,
                       MatrixView<float> c, const ProductPrecision& precision);

 private:
  template <class A, class B, class C>
  void product_checks(Op ta, Op tb, const MatrixView<A>& a, const MatrixView<B>& b, const MatrixView<C>& c) const {
    mine(a, "A"), mine(b, "B"), mine(c, "C");
    require_product_shapes(ta, tb, a, b, c);
  }
  /// What every FP32 product does first: the checks, the empty C, k = 0 (C := beta C), a fresh
  /// report and Auto resolved. False when nothing is left to compute.
  template <class B>
  bool product_prologue(Op ta, Op tb, const MatrixView<const float>& a, const MatrixView<B>& b, float beta,
                        MatrixView<float> c, ProductPrecision& precision, ProductReport* report) {
    product_checks(ta, tb, a, b, c);
    if (c.empty()) return false;
    if (report) {
      const bool later = report->settle_later;
      *report = ProductReport{};
      report->settle_later = later;
    }
    if (op_cols(ta, a.rows(), a.cols()) == 0) return scale(beta, c), false;
    precision = resolve(precision, report);
    return true;
  }
  template <class B>
  void summed_checks(Op ta, Op tb, const StridedBatch<const float>& a, const StridedBatch<const B>& b,
                     const MatrixView<float>& c) const {
    require_batch(a, "A", false), require_batch(b, "B", false);
    require(a.count >= 1, "A.count", a.count, "must be >= 1");
    require(b.count == a.count, "B.count", b.count, "must equal A.count = " + std::to_string(a.count));
    product_checks(ta, tb, a.first, b.first, c);
  }
  template <class A, class B, class C>
  void batch_checks(Op ta, Op tb, const StridedBatch<A>& a, const StridedBatch<B>& b, const StridedBatch<C>& c) const {
    require_batch(a, "A", false), require_batch(b, "B", false), require_batch(c, "C", true);
    require(a.count == c.count, "A.count", a.count, "must equal C.count = " + std::to_string(c.count));
    require(b.count == c.count, "B.count", b.count, "must equal C.count = " + std::to_string(c.count));
    product_checks(ta, tb, a.first, b.first, c.first);
  }
};

template <class B>
void ProductOps::summed_by_parts(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const B> b,
                              float beta, MatrixView<float> c, const ProductPrecision& precision) {
  const index_t m = c.rows(), n = c.cols(), count = a.count;
  const index_t budget = std::max<index_t>(m * n, a.first.rows() * a.first.cols() * count / 16);
  const index_t parts = std::min(count, std::max<index_t>(1, budget / std::max<index_t>(m * n, 1)));
  Matrix<float> partial(*this, m * n, parts, "partial sums");
  const MatrixView<float> first(partial.data(), m, n, std::max<index_t>(m, 1), memory_space());
  const auto from = [](auto x, index_t i0, index_t count) {
    const auto& f = x.first;
    return decltype(x){decltype(x.first)(f.data() + i0 * x.stride, f.rows(), f.cols(), f.ld(), f.space()), x.stride,
                       count};
  };
  for (index_t i0 = 0; i0 < count; i0 += parts) {
    const index_t batch = std::min(parts, count - i0);
    product_strided_batched(ta, tb, 1.0f, from(a, i0, batch), from(b, i0, batch), i0 == 0 ? 0.0f : 1.0f,
                            StridedBatch<float>{first, m * n, batch}, precision);
  }
  Matrix<float> ones(*this, parts, 1, "ones"), sum(*this, m * n, 1, "sum");
  const std::vector<float> host(static_cast<std::size_t>(parts), 1.0f);
  copy(MatrixView<const float>(host.data(), parts, 1, parts, MemorySpace::Host), ones.view());
  product(Op::N, Op::N, 1.0f, partial, ones, 0.0f, sum, ProductPrecision::fp32());
  add(alpha, MatrixView<const float>(sum.data(), m, n, std::max<index_t>(m, 1), memory_space()), beta, c);
}

inline void ProductOps::product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b,
                             float beta, MatrixView<float> c, ProductPrecision precision, ProductReport* report) {
  if (!product_prologue(ta, tb, a, b, beta, c, precision, report)) return;
  if (precision.mode == ProductMode::FP16 &&
      !(fits_fp16_unscaled(exponent_histogram(a)) && fits_fp16_unscaled(exponent_histogram(b)))) {
    precision = ProductPrecision::tf32();  // never Inf from finite input
    if (report) report->why = "fp16: an operand has entries with |x| >= 2^15, beyond FP16's range";
  }
  if (report) report->mode = precision.mode;
  do_product(ta, tb, alpha, a, b, beta, c, precision, report);
}

inline void ProductOps::product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b,
                             float beta, MatrixView<float> c, ProductPrecision precision, ProductReport* report) {
  if (!product_prologue(ta, tb, a, b, beta, c, precision, report)) return;
  if (precision.mode != ProductMode::Split) {
    const std::string why = report ? report->why : std::string();
    Matrix<float> wide(*this, b.rows(), b.cols(), "B");  // exact: every FP16 value is an FP32 value
    convert(b, wide.view());
    product(ta, tb, alpha, a, wide, beta, c, precision, report);
    if (report && report->why.empty()) report->why = why;
    return;
  }
  if (report) report->mode = ProductMode::Split;
  do_product_split(ta, tb, alpha, a, b, beta, c, precision.split, report);
}

}  // namespace randnla
