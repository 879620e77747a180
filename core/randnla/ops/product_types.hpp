// The product family's vocabulary: C := alpha op(A) op(B) + beta C, and its strided batches, in a
// precision that one descriptor names (ProductPrecision) and a report says how it actually ran.
#pragma once

#include <functional>
#include <string>
#include <type_traits>

#include "randnla/enum_names.hpp"
#include "randnla/matrix_view.hpp"
#include "randnla/precision.hpp"

namespace randnla {

/// op(X) = X or X^T, as BLAS's transa/transb.
enum class Op { N, T };

/// Rows and columns of op(X) for X stored rows x cols.
inline index_t op_rows(Op op, index_t rows, index_t cols) { return op == Op::N ? rows : cols; }
inline index_t op_cols(Op op, index_t rows, index_t cols) { return op == Op::N ? cols : rows; }

/// Throws InvalidArgument unless C (m x n) = op(A) op(B) is well formed.
template <class A, class B, class C>
void require_product_shapes(Op ta, Op tb, const MatrixView<A>& a, const MatrixView<B>& b, const MatrixView<C>& c) {
  const index_t m = op_rows(ta, a.rows(), a.cols()), k = op_cols(ta, a.rows(), a.cols());
  const index_t kb = op_rows(tb, b.rows(), b.cols()), n = op_cols(tb, b.rows(), b.cols());
  require(kb == k, "B.rows (after op)", kb, "must equal op(A).cols = " + std::to_string(k));
  require(c.rows() == m, "C.rows", c.rows(), "must equal op(A).rows = " + std::to_string(m));
  require(c.cols() == n, "C.cols", c.cols(), "must equal op(B).cols = " + std::to_string(n));
}

/// How an FP32 product is computed.
enum class ProductMode {
  FP32,   ///< SGEMM on FP32 cores (cuBLAS SGEMM, or the BLAS through Kokkos Kernels)
  TF32,   ///< operands rounded to TF32, FP32 accumulation (cuBLAS TF32 Tensor Core mode)
  FP16,   ///< operands rounded to FP16, FP32 accumulation (cuBLAS GemmEx FP16 -> FP32); an operand
          ///< with |x| >= 2^15, which FP16 cannot hold, makes it run as TF32 (reported)
  Split,  ///< error-corrected Tensor Core product: each FP32 operand split hi + lo in the format
          ///< ProductPrecision::split names, an FP16 operand taken as it is. Both FP32: TCEC-SGEMM,
          ///< Ootomo & Yokota, "Recovering single precision accuracy from Tensor Cores while
          ///< surpassing the FP32 theoretical peak performance", Eq. (18)-(20): C = A_hi B_hi +
          ///< (dA B_hi + A_hi dB) / 2^11. B FP16: SHGEMM, Ootomo & Yokota, "Mixed-Precision Random
          ///< Projection for RandNLA on Tensor Cores", Sec. 3: C = A_hi B + (dA B) / 2^11.
          ///< Runs on Tensor Cores where Capabilities::tensor_cores, else emulated element by
          ///< element with the same splits (for validation, several times slower than FP32)
  Auto    ///< Split where the backend has Tensor Cores, FP32 elsewhere: FP32 accuracy either way
};

inline const EnumNames<ProductMode>& names_of(ProductMode) {
  static const EnumNames<ProductMode> names{{ProductMode::FP32, "fp32"},
                                            {ProductMode::TF32, "tf32"},
                                            {ProductMode::FP16, "fp16"},
                                            {ProductMode::Split, "split"},
                                            {ProductMode::Auto, "auto"}};
  return names;
}

/// The one descriptor of a product's precision: the mode and, for Split, the Tensor Core format of
/// the split operands (TensorCore::Auto chooses FP16 or TF32 from the operands' exponents). Every
/// algorithm's options name their products' precision with it; the named presets below are the
/// values the command-line tool and the reports spell (names_of).
struct ProductPrecision {
  ProductMode mode = ProductMode::Auto;
  TensorCore split = TensorCore::Auto;
  /// FP16 only: an operand that an algorithm uses in several products (A in a low-rank
  /// approximation) is rounded to FP16 once and kept (2 bytes an element), not inside each product;
  /// the products' values are the same. The seed's "16|32" GEMM variant (Baboulin et al. 2024).
  bool rounded_once = false;
  /// FP16 rounded once only: the sums and the results in FP16 too (cuBLAS FP16 compute), the
  /// seed's "16|16" variant. Only the FP16 x FP16 -> FP16 product takes it.
  bool fp16_sums = false;

  static ProductPrecision fp32() { return {ProductMode::FP32, TensorCore::Auto}; }
  static ProductPrecision tf32() { return {ProductMode::TF32, TensorCore::Auto}; }
  static ProductPrecision fp16() { return {ProductMode::FP16, TensorCore::Auto}; }
  static ProductPrecision fp16_once() { return {ProductMode::FP16, TensorCore::Auto, true}; }
  static ProductPrecision fp16_all() { return {ProductMode::FP16, TensorCore::Auto, true, true}; }
  /// Split products in `format`; with an FP16 second operand (a sketch Omega stored in FP16), SHGEMM.
  static ProductPrecision split_in(TensorCore format) { return {ProductMode::Split, format}; }
  static ProductPrecision automatic() { return {}; }

  bool operator==(const ProductPrecision& o) const {
    return mode == o.mode && split == o.split && rounded_once == o.rounded_once && fp16_sums == o.fp16_sums;
  }
  bool operator!=(const ProductPrecision& o) const { return !(*this == o); }
};

/// The presets' names, as the command-line tool's --products and the reports spell them.
inline const EnumNames<ProductPrecision>& names_of(ProductPrecision) {
  static const EnumNames<ProductPrecision> names{{ProductPrecision::fp32(), "fp32"},
                                                 {ProductPrecision::tf32(), "tf32"},
                                                 {ProductPrecision::fp16(), "fp16"},
                                                 {ProductPrecision::fp16_once(), "fp16-once"},
                                                 {ProductPrecision::fp16_all(), "fp16-all"},
                                                 {ProductPrecision::split_in(TensorCore::Auto), "split"},
                                                 {ProductPrecision::split_in(TensorCore::FP16), "split-fp16"},
                                                 {ProductPrecision::split_in(TensorCore::TF32), "split-tf32"},
                                                 {ProductPrecision::automatic(), "auto"}};
  return names;
}

/// How a product actually ran (filled when asked for): the mode after Auto and the fallbacks,
/// the Tensor Core format of each split operand with its power-of-two scaling, and why.
struct ProductReport {
  ProductMode mode = ProductMode::FP32;
  TensorCore a_format = TensorCore::TF32;  ///< Split: the first FP32 operand's split format
  TensorCore b_format = TensorCore::TF32;  ///< Split: the second's (TCEC only)
  int a_scale_exponent = 0;                ///< A was scaled by 2^a_scale_exponent before its FP16 split
  int b_scale_exponent = 0;
  std::string why;                         ///< why Auto or a fallback chose this mode; empty otherwise
  /// Set by the caller: do not wait for the device to fill the formats and scales. A backend that
  /// plans on the device then leaves `settle` instead, which waits for the product's plan and
  /// fills them (call it once, any time after the product is queued); otherwise `settle` is empty.
  bool settle_later = false;
  std::function<void(ProductReport&)> settle;
};

/// "shgemm fp16-TC (A scaled by 2^3)", "tcec tf32-TC", "sgemm fp32", ..., with the reason.
inline std::string describe(const ProductReport& r, bool fp16_b) {
  std::string s;
  if (r.mode != ProductMode::Split) {
    s = r.mode == ProductMode::FP32 ? "sgemm fp32" : std::string("gemm ") + to_string(r.mode) + "-TC";
  } else {
    s = std::string(fp16_b ? "shgemm " : "tcec ") + to_string(r.a_format) + "-TC";
    if (r.a_format == TensorCore::FP16 && (r.a_scale_exponent != 0 || r.b_scale_exponent != 0))
      s += " (A scaled by 2^" + std::to_string(r.a_scale_exponent) +
           (fp16_b ? std::string() : ", B by 2^" + std::to_string(r.b_scale_exponent)) + ")";
  }
  return r.why.empty() ? s : s + " (" + r.why + ")";
}

/// `count` matrices of one shape, the i-th starting `stride` elements after the (i-1)-th (BLAS's
/// strided batch): mode products of a tensor, the nodes of a reduction tree.
template <class T>
struct StridedBatch {
  MatrixView<T> first;
  index_t stride = 0;
  index_t count = 1;

  MatrixView<T> at(index_t i) const {
    return MatrixView<T>(first.data() + i * stride, first.rows(), first.cols(), first.ld(), first.space());
  }
  template <class U = T, class = std::enable_if_t<!std::is_const<U>::value>>
  operator StridedBatch<const U>() const {  // NOLINT: implicit, as MatrixView's
    return {first, stride, count};
  }
};

/// Throws InvalidArgument unless batch `name` has count >= 0 and stride >= 0, and, where it is
/// written (`output`), its matrices do not overlap.
template <class T>
void require_batch(const StridedBatch<T>& x, const std::string& name, bool output) {
  require(x.count >= 0, name + ".count", x.count, "must be >= 0");
  require(x.stride >= 0, name + ".stride", x.stride, "must be >= 0");
  // Apart: one after the other, or row blocks of one matrix (stride >= rows, count x stride <= ld).
  const bool apart = x.stride >= x.first.ld() * (x.first.cols() - 1) + x.first.rows() ||
                     (x.stride >= x.first.rows() && x.count * x.stride <= x.first.ld());
  if (output && x.count > 1 && !x.first.empty())
    require(apart, name + ".stride", x.stride,
            "must keep the outputs apart: >= " + name + ".ld * (cols - 1) + rows = " +
                std::to_string(x.first.ld() * (x.first.cols() - 1) + x.first.rows()) +
                ", or row blocks of one matrix (>= rows, count x stride <= ld)");
}

}  // namespace randnla
