// Principal component analysis through the randomized SVD of the implicitly centred data.
#pragma once

#include <cstdint>

#include "randnla/rsvd/rsvd.hpp"

namespace randnla {

/// Options of pca(); every field has a default (oversampling 10; seed, products and progress as
/// CommonOptions documents them: the products are those with X, the rank-one corrections of the
/// centring run in FP32). The fields shared with RsvdOptions have its names, meanings and
/// defaults (the RSVD's sketch operator and error probes have no PCA counterpart: the sketch reads
/// the centred operator, and the residual is known exactly from the total variance,
/// report.relative_error_estimate).
struct PcaOptions : FixedRankOptions {
  PcaOptions() : FixedRankOptions(RsvdOptions().oversampling) {}
  /// q: Y = (Xc Xc^T)^q Xc Omega, Xc = X - 1 mu^T, re-orthonormalised between products (2, as
  /// RsvdOptions::power_iterations: about 0.1% on the singular values of real data).
  int power_iterations = RsvdOptions().power_iterations;
  /// Every basis, as RsvdOptions::orthonormalizer (Auto).
  Orthonormalizer orthonormalizer = RsvdOptions().orthonormalizer;
  SmallSvd small_svd = RsvdOptions().small_svd;  ///< the SVD of B = Q^T Xc (l x n), as RsvdOptions::small_svd
  /// Also return the scores Xc V = U diag(S) (m x k; scikit-learn's fit_transform), which costs one
  /// more m x l x k product and m x k floats. Default false.
  bool scores = false;
};

/// The leading k principal components of X (m samples x n features) in the backend's memory:
/// FP32, column-major, every vector a column (size x 1), shaped as scikit-learn's PCA attributes.
struct PcaResult {
  Matrix<float> mean;                      ///< n x 1: mu, X's column means (scikit-learn's mean_)
  /// k x n, rows the principal axes, orthonormal (components_), with the sign of svd_flip(...,
  /// u_based_decision=False): the entry of largest magnitude of each row is positive (the first
  /// such entry where several tie).
  Matrix<float> components;
  Matrix<float> singular_values;           ///< k x 1, descending: those of Xc (singular_values_)
  Matrix<float> explained_variance;        ///< k x 1: S_i^2 / (m - 1) (explained_variance_)
  Matrix<float> explained_variance_ratio;  ///< k x 1: explained_variance / total_variance
  Matrix<float> scores;                    ///< m x k: Xc components^T = U diag(S); empty unless options.scores
  /// ||Xc||_F^2 / (m - 1), the sum of all n variances, from ||X||_F^2 - m ||mu||^2 in FP64 sums.
  double total_variance = 0;
  /// What ran: the range finder's phases as rsvd()'s, after "mean" (mu and the input check) and
  /// followed by "signs"; relative_error_estimate = ||Xc - U diag(S) V^T||_F / ||Xc||_F, exact up
  /// to rounding: U diag(S) V^T = U U^T Xc is an orthogonal projection, so the residual's square
  /// is (m - 1) (total_variance - sum_i explained_variance_i).
  RsvdReport report;
};

/// Principal component analysis of X (m x n: m samples, n features; FP32, column-major, in the
/// backend's memory; not modified) by the rank-k randomized SVD of the centred data
/// Xc = X - 1 mu^T (Halko, Martinsson & Tropp 2011, Sec. 1.4 and Algorithms 4.4 and 5.1).
/// The centring is implicit, as in torch.pca_lowrank: X is never copied; the range finder reads
/// the operator Xc, whose products are X's plus a rank-one correction (Xc Z = X Z - 1 (mu^T Z),
/// Xc^T Y = X^T Y - mu (1^T Y)). mu is X^T 1 / m from FP32 partial sums over blocks of 256 rows
/// added in FP64; total_variance is (||X||_F^2 - m ||mu||^2) / (m - 1) with FP64 sums.
/// Accuracy: the products carry FP32 rounding relative to ||X|| rather than ||Xc||, so where the
/// mean dominates the spread (||Xc||_F << ||X||_F) the results lose the ratio's digits; a
/// total variance within the FP32 rounding of the mean is refused (below).
/// The results come from `outputs` (by default new matrices of the backend).
/// Throws InvalidArgument for m < 2 (X.rows), k <= 0, p < 0, q < 0, k + p > min(m, n), non-finite
/// entries in X or entries so large that its column sums or its sketch overflow FP32 (found from
/// mu and the sketch, not by a pass over X), and a total variance of zero or with
/// ||X||_F^2 - m ||mu||^2 at most 2^-19 m ||mu||^2 (the rounding of m ||mu||^2 with an FP32 mu:
/// X's features are constant to FP32 precision, and explained_variance_ratio would be rounding).
PcaResult pca(Backend& backend, MatrixView<const float> x, index_t k, const PcaOptions& options = {},
              const MatrixAllocator& outputs = nullptr);

/// The same for X (m x n) stored row-major, given as x.stored = X^T (n x m, column-major, in the
/// backend's memory; a Kokkos::LayoutRight view's memory, transposed_view_of): read in place, never
/// copied or transposed. Every product with X is the product with x.stored transposed (X Z =
/// stored^T Z, X^T Y = stored Y, the sketch stored^T Omega in the same precision policy), and mu is
/// the row means of x.stored, in the same FP32 partial sums over blocks of 256 samples; the results,
/// their shapes and the errors thrown are those of pca() above.
PcaResult pca(Backend& backend, Transposed<const float> x, index_t k, const PcaOptions& options = {},
              const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
