// The thin SVD of a tall matrix through its Gram matrix in FP64: the small SVD of the RSVD.
#pragma once

#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/backend.hpp"
#include "randnla/matrix.hpp"

namespace randnla {

/// Thin SVD A = U diag(s) V^T of a tall A (m x n, m >= n, FP32, LayoutLeft, backend memory):
///   A^T A = V diag(s^2) V^T    in FP64 (Backend::symmetric_eig: LAPACK dsyevd / the CUDA backend's own),
///   U := A V diag(s)^{-1}, formed in FP64 into U a block of rows (64 MiB) at a time, its Gram
///   matrix summed in FP64 on the way; then CholeskyQR passes on U in place (the same sweeps) until
///   the equilibrated Gram matrix is I to U's unit roundoff, at most two. A V's columns are
///   orthogonal, so usually none runs (ColumnScaling), else one (CholeskyQR), whose R ~ I is dropped.
/// U is m x n, s is n x 1 (descending), V is n x n, all FP32 in backend memory; A is not modified.
/// Memory: A's FP64 copy and two blocks, no other m x n FP64 matrix (the RSVD of a 14.3M x 14.3M
/// sparse matrix: 60 GB less than orthonormalising a formed A V).
/// Why it is accurate: the eigendecomposition is backward stable, so the columns of A V are
/// orthogonal to within 2^-53 ||A||^2 and R's off-diagonal entries, |r_ij| <= min(2^-53 ||A||^2 / s_i,
/// s_j), stay below sqrt(2^-53) ||A|| ~ 1e-8 ||A||: under FP32's rounding of A. s is accurate to the
/// same absolute level. (Cholesky's accuracy does not depend on the column scaling of A V: van der
/// Sluis; Demmel 1989.) An exactly rank-deficient A makes CholeskyQR break down: A V is then formed
/// in A's FP64 copy and orthonormalised by orthonormalize's chain (Auto), down to Householder QR;
/// U's columns for zero singular values then complete an orthonormal basis.
/// Throws InvalidArgument for m < n or mismatched shapes; NumericalBreakdown from the eigensolver.
/// Returns the orthonormaliser that produced U.
Orthonormalizer svd_through_gram(Backend& b, MatrixView<const float> a, MatrixView<float> u, MatrixView<float> s,
                                 MatrixView<float> v);
/// The same, A given up by the caller (moved in): it is released once its FP64 copy is made, one
/// m x n FP32 matrix off the peak (the RSVD's B^T, whose m is A's n: 15 GB at 14.3M x 266).
Orthonormalizer svd_through_gram(Backend& b, Matrix<float>&& a, MatrixView<float> u, MatrixView<float> s,
                                 MatrixView<float> v);
/// The same for an FP64 A given up by the caller (its memory becomes A V's where the fallback forms
/// it), U, s and V in FP64: U orthonormal to FP64 rounding; s_i accurate to about 2^-53 ||A||^2 / s_i.
Orthonormalizer svd_through_gram(Backend& b, Matrix<double>&& a, MatrixView<double> u, MatrixView<double> s,
                                 MatrixView<double> v);

}  // namespace randnla
