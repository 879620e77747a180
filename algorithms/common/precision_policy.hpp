// The precision policy shared by the randomized algorithms: which product forms the sketch
// Y = A Omega and every other product with A, and on what a backend can run it.
#pragma once

#include <functional>
#include <string>

#include "randnla/backend.hpp"
#include "randnla/common/options.hpp"
#include "randnla/random_operator.hpp"

namespace randnla {

/// A random operator stored for the products of one run: FP16 where they are split (SHGEMM), else
/// FP32 (one of the two matrices is empty).
struct StoredOperator {
  Matrix<fp16> half;
  Matrix<float> single;
  bool is_fp16() const { return half.data() != nullptr; }
  index_t rows() const { return is_fp16() ? half.rows() : single.rows(); }
  index_t cols() const { return is_fp16() ? half.cols() : single.cols(); }
};

/// The products of one algorithm run, all in one precision, and the sketch Y = A Omega with Omega
/// stored in FP16 where the products are split (SHGEMM), else in FP32.
class Products {
 public:
  /// Resolves `requested` once (ProductOps::resolve): the products and Omega's storage follow the result.
  Products(Backend& b, ProductPrecision requested);

  /// Rows row0 .. row0 + rows - 1 of Omega (all of it by default), stored for these products.
  StoredOperator store(const RandomOperator& omega, index_t row0 = 0, index_t rows = -1);

  /// C := alpha op(A) omega + beta C, omega stored by store() (the sketch Y = A Omega with alpha = 1,
  /// beta = 0); names the kernel that ran in *kernel when non-null, and why Auto chose it.
  void times(Op ta, float alpha, MatrixView<const float> a, const StoredOperator& omega, float beta,
             MatrixView<float> c, std::string* kernel = nullptr);
  /// The same product, queued without waiting for its report: the kernel's name comes from the
  /// returned function, which waits for the product's plan where the backend made it on the device.
  std::function<std::string()> times_named_later(Op ta, float alpha, MatrixView<const float> a,
                                                 const StoredOperator& omega, float beta, MatrixView<float> c);

  /// C := alpha op(A) op(B) + beta C for two FP32 operands.
  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
            MatrixView<float> c) {
    b_.product(ta, tb, alpha, a, b, beta, c, precision_);
  }
  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
            MatrixView<float> c) {
    b_.product(ta, tb, alpha, a, b, beta, c, precision_);
  }
  /// C_i := alpha op(A_i) op(B_i) + beta C_i for each matrix of the batches.
  void gemm_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b, float beta,
                    StridedBatch<float> c) {
    b_.product_strided_batched(ta, tb, alpha, a, b, beta, c, precision_);
  }
  void gemm_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b, float beta,
                    StridedBatch<float> c) {
    b_.product_strided_batched(ta, tb, alpha, a, b, beta, c, precision_);
  }
  /// C := alpha sum_i op(A_i) op(B_i) + beta C (Backend::product_summed).
  template <class B>
  void gemm_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const B> b, float beta,
                   MatrixView<float> c) {
    b_.product_summed(ta, tb, alpha, a, b, beta, c, precision_);
  }
  const ProductPrecision& precision() const { return precision_; }
  Backend& backend() const { return b_; }

 private:
  void times_reported(Op ta, float alpha, MatrixView<const float> a, const StoredOperator& omega, float beta,
                      MatrixView<float> c, ProductReport* report);
  static std::string kernel_name(const ProductReport& report, bool fp16_omega, TensorCore split, const std::string& why);

  Backend& b_;
  std::string why_;  ///< why Auto resolved as it did; empty when nothing was Auto (before precision_,
                     ///< which the constructor resolves into it)
  ProductPrecision precision_;
  bool fp16_omega_;
};

}  // namespace randnla
