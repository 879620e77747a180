// The portable product family: Kokkos Kernels GEMM (vendor BLAS where it has a TPL for the space), and the split
// Tensor Core products emulated with the CUDA kernels' splits and terms, for validation.
#pragma once

#include "portable/elementwise/portable_elementwise.hpp"
#include "portable/context/portable_context.hpp"
#include "randnla/ops/products.hpp"

namespace randnla {
namespace portable {

/// C := alpha op(A) op(B) + beta C with each partial sum rounded to FP16, in order of k: the
/// reference for an FP16-accumulating product (FP16 x FP16 products are exact in FP32).
template <class Exec>
void half_sum_product(const Exec& exec, Op ta, Op tb, float alpha, MatrixView<const fp16> a,
                      MatrixView<const fp16> b, float beta, MatrixView<fp16> c) {
  const index_t k = op_cols(ta, a.rows(), a.cols());
  const bool at = ta == Op::T, bt = tb == Op::T;
  for_each_element(exec, c.rows(), c.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    float sum = 0.0f;
    for (index_t t = 0; t < k; ++t)
      sum = to_float(to_fp16(sum + to_float(at ? a(t, i) : a(i, t)) * to_float(bt ? b(j, t) : b(t, j))));
    c(i, j) = to_fp16(alpha * sum + (beta == 0.0f ? 0.0f : beta * to_float(c(i, j))));
  });
}

/// hi and lo of each element of X as exact FP32 values (FP16 or TF32 numbers); X scaled by 2^s for FP16.
template <class Exec>
void split(const Exec& exec, MatrixView<const float> x, OperandPlan plan, MatrixView<float> hi, MatrixView<float> lo) {
  for_each_element(exec, x.rows(), x.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    if (plan.use_fp16) {
      fp16 h, l;
      split_halfhalf(x(i, j), plan.scale_exponent, h, l);
      hi(i, j) = to_float(h);
      lo(i, j) = to_float(l);
    } else {
      split_tf32(x(i, j), hi(i, j), lo(i, j));
    }
  });
}

/// C := unscale * (main + corr * 2^-11) + beta * C: the split products' terms summed as the
/// mma.sync kernel sums them.
template <class Exec>
void combine_split_terms(const Exec& exec, MatrixView<const float> main, MatrixView<const float> corr, float unscale,
                         float beta, MatrixView<float> c) {
  for_each_element(exec, c.rows(), c.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    const float sum = main(i, j) + corr(i, j) * kSplitShiftInverse;
    c(i, j) = beta == 0.0f ? unscale * sum : unscale * sum + beta * c(i, j);
  });
}

inline const char* blas_op(Op op) { return op == Op::N ? "N" : "T"; }

template <class Exec>
class PortableProducts : public virtual ProductOps, public virtual PortableContext<Exec> {
 public:
  using PortableContext<Exec>::exec_;

  void do_product(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
                  MatrixView<double> c) override {
    blas_gemm(ta, tb, alpha, a, b, beta, c);
  }
  void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                  MatrixView<float> c) override {
    Matrix<float> aw(*this, a.rows(), a.cols(), "A"), bw(*this, b.rows(), b.cols(), "B");  // exact widening
    portable::map(exec_, a, aw.view(), ToFloat{});
    portable::map(exec_, b, bw.view(), ToFloat{});
    blas_gemm<float>(ta, tb, alpha, aw, bw, beta, c);
  }
  void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                  MatrixView<fp16> c) override {
    portable::half_sum_product(exec_, ta, tb, alpha, a, b, beta, c);
  }
  void do_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                  MatrixView<float> c, const ProductPrecision& precision, ProductReport* report) override {
    if (precision.mode == ProductMode::FP32) return blas_gemm(ta, tb, alpha, a, b, beta, c);
    if (precision.mode == ProductMode::Split) return split_product(ta, tb, alpha, a, b, beta, c, precision.split, true, true, report);
    Matrix<float> ar(*this, a.rows(), a.cols(), "A"), br(*this, b.rows(), b.cols(), "B");
    if (precision.mode == ProductMode::TF32) {
      portable::map(exec_, a, ar.view(), RoundToTf32{});
      portable::map(exec_, b, br.view(), RoundToTf32{});
    } else {
      portable::map(exec_, a, ar.view(), RoundToHalf{});
      portable::map(exec_, b, br.view(), RoundToHalf{});
    }
    blas_gemm<float>(ta, tb, alpha, ar, br, beta, c);
  }
  void do_product_split(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
                        MatrixView<float> c, TensorCore format, ProductReport* report) override {
    Matrix<float> bf(*this, b.rows(), b.cols(), "B");
    portable::map(exec_, b, bf.view(), ToFloat{});
    split_product(ta, tb, alpha, a, bf, beta, c, format, /*split_a=*/true, /*split_b=*/false, report);
  }

 private:
  template <class T>
  void blas_gemm(Op ta, Op tb, T alpha, MatrixView<const T> a, MatrixView<const T> b, T beta, MatrixView<T> c) {
    if (op_cols(ta, a.rows(), a.cols()) == 0) return portable::scale_all(exec_, beta, c);
    compat::gemm(exec_, blas_op(ta), blas_op(tb), alpha, kokkos_view<Exec>(a), kokkos_view<Exec>(b), beta,
                 kokkos_view<Exec>(c));
  }

  /// C := alpha * op(A) op(B) + beta * C with A and/or B split, the split parts' products summed
  /// as the mma.sync kernel does: hi*hi + (lo*hi + hi*lo) * 2^-11, then unscaled by 2^-(sA + sB).
  /// The wgmma kernel splits the same numbers (its lo is not shifted and its scale is per row and
  /// K slice, so hi and lo differ from these only where an element falls into FP16's subnormals).
  void split_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                     MatrixView<float> c, TensorCore tc, bool split_a, bool split_b, ProductReport* report) {
    OperandPlan pa = split_a ? plan_operand(exponent_histogram(a), tc) : OperandPlan{true, 0};
    OperandPlan pb = split_b ? plan_operand(exponent_histogram(b), tc) : OperandPlan{true, 0};
    if (!pa.use_fp16 || !pb.use_fp16) pa = pb = OperandPlan{};  // one Tensor Core format per product
    if (report) {
      report->a_format = pa.use_fp16 ? TensorCore::FP16 : TensorCore::TF32;
      report->b_format = pb.use_fp16 ? TensorCore::FP16 : TensorCore::TF32;
      report->a_scale_exponent = pa.scale_exponent, report->b_scale_exponent = pb.scale_exponent;
    }
    Matrix<float> ahi, alo, bhi, blo;
    if (split_a) split_parts(a, pa, ahi, alo);
    if (split_b) split_parts(b, pb, bhi, blo);
    MatrixView<const float> a_hi = split_a ? MatrixView<const float>(ahi) : a;
    MatrixView<const float> b_hi = split_b ? MatrixView<const float>(bhi) : b;
    Matrix<float> main(*this, c.rows(), c.cols(), "main"), corr(*this, c.rows(), c.cols(), "corr");
    blas_gemm<float>(ta, tb, 1.0f, a_hi, b_hi, 0.0f, main);
    blas_gemm<float>(ta, tb, 1.0f, split_a ? MatrixView<const float>(alo) : a_hi,
                     split_a ? b_hi : MatrixView<const float>(blo), 0.0f, corr);
    if (split_a && split_b) blas_gemm<float>(ta, tb, 1.0f, a_hi, blo, 1.0f, corr);
    const float unscale = alpha * exp2i(-pa.scale_exponent) * exp2i(-pb.scale_exponent);
    portable::combine_split_terms(exec_, MatrixView<const float>(main), MatrixView<const float>(corr), unscale, beta, c);
  }
  void split_parts(MatrixView<const float> x, const OperandPlan& plan, Matrix<float>& hi, Matrix<float>& lo) {
    hi = Matrix<float>(*this, x.rows(), x.cols(), "hi");
    lo = Matrix<float>(*this, x.rows(), x.cols(), "lo");
    portable::split(exec_, x, plan, hi.view(), lo.view());
  }
};

}  // namespace portable
}  // namespace randnla
