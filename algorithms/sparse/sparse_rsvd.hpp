// The randomized SVD and PCA of a CSR sparse matrix and of a user's operator (matrix-free), on the
// one range finder of the dense algorithms.
#pragma once

#include <functional>
#include <memory>

#include "randnla/pca/pca.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "randnla/sparse/csr_view.hpp"

namespace randnla {

/// A linear operator A (rows x cols) known only by its products with blocks of columns (matrix-free
/// use). Both callbacks are called on the calling thread, with views in the backend's memory
/// (FP32, column-major, ld = rows); they must leave the result in Y before returning, or queue
/// their work on the backend's queue (on CUDA, its stream; on the portable backend, its execution
/// space instance), and must not keep the views.
struct OperatorCallbacks {
  index_t rows = 0;  ///< m, A's rows
  index_t cols = 0;  ///< n, A's columns
  /// Y (rows x l) := A X, X cols x l.
  std::function<void(MatrixView<const float> x, MatrixView<float> y)> apply;
  /// Z (cols x l) := A^T Y, Y rows x l.
  std::function<void(MatrixView<const float> y, MatrixView<float> z)> apply_transpose;
  /// ||A||_F where the caller knows it (>= 0; negative: unknown). rsvd_fixed_accuracy and pca of an
  /// operator need it (their tolerance and variances are relative to it); rsvd's error estimate
  /// uses it where given and an estimate from its probes otherwise.
  double frobenius_norm = -1.0;
};

/// A CSR matrix whose arrays are in a backend's memory, owned here (as Matrix owns a dense one's):
/// `view` describes them.
struct CsrArrays {
  std::shared_ptr<void> row_ptr;  ///< rows + 1 offsets (int32), in the backend's memory
  std::shared_ptr<void> col_idx;  ///< nnz column indices (int32), in the backend's memory
  std::shared_ptr<void> values;   ///< nnz values (FP32), in the backend's memory
  CsrView view;                   ///< the three arrays, described
};

/// The arrays of `a` (anywhere) copied into `backend`'s memory, unchanged and unchecked (the
/// algorithms check them). Throws InvalidArgument for negative extents (A.rows, A.nnz) or a null
/// array where entries exist.
CsrArrays copy_csr(Backend& backend, const CsrView& a);

/// ||A - U diag(S) V^T||_F / ||A||_F for the CSR matrix A (m x n, validated as rsvd(Backend&, const
/// CsrView&, ...) validates it), U (m x k), S (k x 1) and V (n x k) FP32 in the backend's memory,
/// without an m x n buffer: ||A||_F^2 - 2 tr(S U^T A V) + tr((S U^T U S)(V^T V)), which holds for
/// any U and V (orthonormal or not). A V is one CSR product in FP32; the k x k products U^T U,
/// U^T (A V) and V^T V are FP64 sums over blocks of rows converted to FP64, and ||A||_F^2 the FP64
/// sum of the squared values, so the result is exact to about 2^-24 (from A V) relative, down to
/// errors of about 1e-4. Costs 2 nnz k + 2 (m + n) k^2 flops and (m + n) k extra FP32 words.
/// Throws InvalidArgument for the CSR defects rsvd names, and for U, S, V whose shapes disagree
/// with A's or k's (U, S, V) or that are in another memory space.
double relative_error(Backend& backend, const CsrView& a, MatrixView<const float> u, MatrixView<const float> s,
                      MatrixView<const float> v);

/// Rank-k randomized SVD A ~ U diag(S) V^T of the CSR matrix A (in the backend's memory; see
/// CsrView), by Halko, Martinsson & Tropp (2011), Algorithms 4.4 and 5.1, as rsvd(Backend&,
/// MatrixView, ...): Omega (n x l, l = k + p) is drawn in FP32 from the counter-based generator
/// (the same seed gives the same Omega as the dense rsvd with FP32 products) and stored, and every
/// product with A is a CSR times dense block product in FP32 (SparseOps::spmm: cuSPARSE SpMM on
/// CUDA, Kokkos Kernels' spmv on rank-2 views on the portable backend; report.sketch_kernel names
/// it). With options.sketch_operator = SparseSign, Omega is the sparse sign test matrix instead
/// (SparseSignSketch: min(8, l) non-zeros +-1/sqrt(min(8, l)) a row, never stored), and the sketch
/// A Omega costs min(8, l) additions per non-zero of A, in FP32 sums; the power iterations are as
/// with the Gaussian Omega (docs/algorithms/sparse.md compares their accuracy and time).
/// options.products governs only U = Q Uhat; options.error_probes uses the exact ||A||_F.
/// A is validated first, on the backend (two passes over row_ptr, col_idx and values, and a few
/// entries copied back for the message). U (m x k), S (k x 1) and V (n x k), FP32, come from
/// `outputs` (by default new matrices of the backend).
/// Throws InvalidArgument naming the parameter and its value for: A in another memory space
/// (A.space); negative or too large rows, cols or nnz (A.rows, A.cols, A.nnz: 32-bit offsets);
/// a null array where entries exist; row_ptr[0] != 0 (A.row_ptr[0]), a decreasing row_ptr or one
/// outside 0 .. nnz (A.row_ptr[i + 1]), row_ptr[rows] != nnz (A.row_ptr[rows]); a column index out of
/// range or not above the previous one of its row (A.col_idx[j]); a non-finite value (A.values[j]);
/// a sketch that overflows FP32; and k, p, q as rsvd(Backend&, MatrixView, ...). Throws
/// UnsupportedConfiguration for the sparse sign sketch where a row of Y (l floats) exceeds a CUDA
/// device's shared memory per block (l above about 58000 on an H100).
RsvdResult rsvd(Backend& backend, const CsrView& a, index_t k, const RsvdOptions& options = {},
                const MatrixAllocator& outputs = nullptr);

/// Fixed-accuracy randomized SVD of the CSR matrix A (randQB_EI as rsvd_fixed_accuracy(Backend&,
/// MatrixView, ...) documents it: Martinsson & Voronin 2016; Yu, Gu & Li 2018), on the same range
/// finder with CSR products as rsvd(Backend&, const CsrView&, ...): each block's Omega_i drawn in
/// FP32 and stored, B_i = (A^T Y_i)^T by SpMM, ||A||_F from the values in FP64. The rank found is
/// S.rows. Throws InvalidArgument for the CSR defects rsvd(Backend&, const CsrView&, ...) names and
/// for the options rsvd_fixed_accuracy(Backend&, MatrixView, ...) refuses.
RsvdResult rsvd_fixed_accuracy(Backend& backend, const CsrView& a, const FixedAccuracyOptions& options,
                               const MatrixAllocator& outputs = nullptr);

/// Rank-k randomized SVD of the user's operator `a` (see OperatorCallbacks), as rsvd(Backend&,
/// const CsrView&, ...): Omega drawn in FP32 and stored, then a.apply(Omega, Y); the power
/// iterations call a.apply_transpose and a.apply. With options.error_probes > 0 the relative error
/// estimate divides by the estimate ||A G||_F / sqrt(probes) of ||A||_F (G the probes).
/// Throws InvalidArgument for a.rows or a.cols <= 0, a missing callback (apply, apply_transpose),
/// options.sketch_operator = SparseSign, a non-finite sketch (the operator returned Inf or NaN,
/// parameter "apply"), and k, p, q as rsvd(Backend&, MatrixView, ...); whatever the callbacks
/// throw passes through.
RsvdResult rsvd(Backend& backend, const OperatorCallbacks& a, index_t k, const RsvdOptions& options = {},
                const MatrixAllocator& outputs = nullptr);

/// Fixed-accuracy randomized SVD of the user's operator `a` (randQB_EI, as rsvd_fixed_accuracy(Backend&,
/// const CsrView&, ...) with a's products in place of SpMM): B_i = (A^T Y_i)^T by a.apply_transpose,
/// the stopping test relative to a.frobenius_norm. Throws InvalidArgument for a.frobenius_norm < 0
/// (unknown), the operator defects rsvd(Backend&, const OperatorCallbacks&, ...) names, and the
/// options rsvd_fixed_accuracy(Backend&, MatrixView, ...) refuses; what the callbacks throw passes through.
RsvdResult rsvd_fixed_accuracy(Backend& backend, const OperatorCallbacks& a, const FixedAccuracyOptions& options,
                               const MatrixAllocator& outputs = nullptr);

/// Principal component analysis of the user's operator X (m samples x n features), centred implicitly
/// as pca(Backend&, const CsrView&, ...): mu = X^T 1 / m by one x.apply_transpose, then the rank-k
/// RSVD of X - 1 mu^T through x's products; total_variance = (x.frobenius_norm^2 - m ||mu||^2) / (m - 1).
/// Throws InvalidArgument for x.frobenius_norm < 0 (unknown), m < 2 (a.rows), the operator defects
/// rsvd(Backend&, const OperatorCallbacks&, ...) names, a total variance that is zero or within FP32
/// rounding of the mean, and k, p, q as pca(Backend&, MatrixView, ...).
PcaResult pca(Backend& backend, const OperatorCallbacks& x, index_t k, const PcaOptions& options = {},
              const MatrixAllocator& outputs = nullptr);

/// Principal component analysis of the CSR matrix X (m samples x n features; see CsrView) by the
/// rank-k randomized SVD of Xc = X - 1 mu^T, which is never formed (as torch.pca_lowrank centres
/// a sparse input): Xc Z = X Z - 1 (mu^T Z), Xc^T Y = X^T Y - mu (1^T Y), with X's products CSR
/// products in FP32 (Halko, Martinsson & Tropp 2011, Sec. 1.4 and Algorithms 4.4 and 5.1). Omega
/// is drawn in FP32 as in rsvd(Backend&, const CsrView&, ...). mu = X^T 1 / m is one CSR product
/// in FP32 (each column's sum accumulates its non-zeros in FP32: about nnz_j roundings of 2^-24
/// at worst); total_variance = (||values||^2 - m ||mu||^2) / (m - 1) in FP64 sums. The results
/// are shaped and signed as pca(Backend&, MatrixView, ...)'s (PcaResult), from `outputs`.
/// Throws InvalidArgument for m < 2 (X.rows), the CSR defects rsvd(Backend&, const CsrView&, ...)
/// names (with X for A), a zero total variance or one within FP32 rounding of the mean (as
/// pca(Backend&, MatrixView, ...)), and k, p, q as there.
PcaResult pca(Backend& backend, const CsrView& x, index_t k, const PcaOptions& options = {},
              const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
