// The PCA's steps on any operator X (dense, CSR, a user's): the implicitly centred operator
// Xc = X - 1 mu^T and what follows the mean, which every PCA entry shares.
#pragma once

#include <string>
#include <vector>

#include "randnla/common/linear_operator.hpp"
#include "randnla/pca/pca.hpp"

namespace randnla {

/// m ones (m x 1) in the backend's memory: mu = X^T 1 / m and the centring's rank-one terms.
Matrix<float> ones_column(Backend& b, index_t m);

/// Xc = X - 1 mu^T (m x n) for an operator X (m x n), never formed: X's products and a rank-one
/// correction in FP32 (torch.pca_lowrank's implicit centring): Xc Z = X Z - 1 (mu^T Z) and
/// Xc^T Y = X^T Y - mu (1^T Y); the sketch Xc Omega = Y - 1 (1^T Y) / m for Y = X Omega (as mu^T =
/// 1^T X / m), so Omega is not read again, however X's sketch applies it. mu (n x 1) and `ones` (m x 1)
/// are in X's backend memory; `norm_x` = ||X||_F names the matrix when the sketch overflows FP32.
class CentredOperator final : public LinearOperator {
 public:
  CentredOperator(LinearOperator& x, MatrixView<const float> mean, MatrixView<const float> ones, double norm_x)
      : LinearOperator(x.backend()), x_(x), mean_(mean), ones_(ones), norm_x_(norm_x) {}

  index_t rows() const override { return x_.rows(); }
  index_t cols() const override { return x_.cols(); }
  void sketch(const RandomOperator& omega, MatrixView<float> y, std::string* kernel) override;
  void apply(MatrixView<const float> z, MatrixView<float> y) override;
  Matrix<float> apply_transpose(MatrixView<const float> y) override;
  /// Throws InvalidArgument where the sketch overflows FP32 (X itself has been checked).
  bool check_sketch(MatrixView<const float> y) override;

 private:
  /// C := C - u (alpha w^T B) for columns u (C.rows x 1) and w (B.rows x 1), in FP32; B may be C
  /// (w^T B is formed first).
  void subtract_outer(MatrixView<const float> u, MatrixView<const float> w, MatrixView<const float> bm,
                      MatrixView<float> c, float alpha = 1.0f);

  LinearOperator& x_;
  MatrixView<const float> mean_, ones_;
  double norm_x_;
};

/// ||X - 1 mu^T||_F^2 = ||X||_F^2 - m ||mu||^2 in FP64 sums (X m x n, `norm_x` = ||X||_F), refused
/// as pca() documents where it does not exceed the rounding of m ||mu||^2, 2^-19 m ||mu||^2 (mu off
/// by about 16 roundings of 2^-24, squared).
double centred_squares(double norm_x, index_t m, const std::vector<float>& mu);

/// The PCA after the mean: the rank-k RSVD of the centred operator `xc` (m x n, Xc = X - 1 mu^T;
/// `mean` is mu, n x 1, from `out`; `squares` = ||Xc||_F^2), then svd_flip's signs, the variances
/// and the exact residual (see PcaResult). `svd` holds the report `clock` laps into; the
/// result takes it over, after the "signs" lap and clock.finish().
PcaResult pca_of_centred(LinearOperator& xc, Products& prod, index_t k, const PcaOptions& o, Matrix<float> mean,
                         double squares, RsvdResult& svd, Stopwatch& clock, const MatrixAllocator& out);

/// The PCA of an operator X (m x n, checked; `norm_x` = ||X||_F) whose mean is one product,
/// mu = X^T 1 / m, in FP32: the mean, then pca_of_centred on X - 1 mu^T. `outputs` as pca()'s
/// (empty: the backend's memory); `svd` and `clock` as pca_of_centred's.
PcaResult pca_of_operator(LinearOperator& x, double norm_x, index_t k, const PcaOptions& o,
                          const MatrixAllocator& outputs, RsvdResult& svd, Stopwatch& clock);

}  // namespace randnla
