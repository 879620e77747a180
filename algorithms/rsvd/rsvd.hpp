// Randomized SVD with a low-precision (FP16) Gaussian sketch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "randnla/common/options.hpp"
#include "randnla/common/precision_policy.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/backend.hpp"
#include "randnla/report.hpp"

namespace randnla {

/// The SVD of the small matrix B = Q^T A (l x n).
enum class SmallSvd {
  Gram,    ///< through B's FP64 Gram matrix: symmetric_eig, then CholeskyQR of B^T V (svd_through_gram)
  Gesvd,   ///< Backend::svd with SvdMethod::Gesvd, after a QR of B^T; likewise the next three
  Gesdd,   ///< Backend::svd with SvdMethod::Gesdd (divide and conquer), after a QR of B^T
  Jacobi,  ///< Backend::svd with SvdMethod::Jacobi, after a QR of B^T
  Polar,   ///< Backend::svd with SvdMethod::Polar (cuSOLVER's polar SVD on CUDA), after a QR of B^T
  Auto     ///< Gram
};

/// The names of SmallSvd's values as the command-line tool spells them ("gram", "gesvd", ...).
inline const EnumNames<SmallSvd>& names_of(SmallSvd) {
  static const EnumNames<SmallSvd> names{{SmallSvd::Gram, "gram"},     {SmallSvd::Gesvd, "gesvd"},
                                         {SmallSvd::Gesdd, "gesdd"},   {SmallSvd::Jacobi, "jacobi"},
                                         {SmallSvd::Polar, "polar"},   {SmallSvd::Auto, "auto"}};
  return names;
}

/// The sketch Omega of the fixed-rank RSVD.
enum class SketchOperator {
  Gaussian,   ///< dense Gaussian, in the precision `sketch` names
  SparseSign  ///< dense A: very sparse sign, p = 1/sqrt(n), never stored (sparse_sign_projection): O(m n l / sqrt(n))
              ///< work for the sketch, in FP32 sums; `sketch` then governs the power iterations' products.
              ///< CSR A: min(8, l) non-zeros a row of Omega, never stored (SparseSignSketch): O(8 nnz)
};

/// The names of SketchOperator's values as the command-line tool spells them ("gaussian", "sparse-sign").
inline const EnumNames<SketchOperator>& names_of(SketchOperator) {
  static const EnumNames<SketchOperator> names{{SketchOperator::Gaussian, "gaussian"},
                                               {SketchOperator::SparseSign, "sparse-sign"}};
  return names;
}

/// Options of the fixed-rank randomized SVD, rsvd(); every field has a default (oversampling 10;
/// seed, products and progress as CommonOptions documents them).
struct RsvdOptions : FixedRankOptions {
  RsvdOptions() : FixedRankOptions(10) {}
  /// q: Y = (A A^T)^q A Omega, re-orthonormalised between products. The default 2 gives singular
  /// values of real data (scikit-learn's digits, Fashion-MNIST) to about 0.1%, where q = 0 is off by up to 16%
  /// on the digits; torch.svd_lowrank also defaults to 2, scikit-learn to 4 or 7.
  int power_iterations = 2;
  SketchOperator sketch_operator = SketchOperator::Gaussian;  ///< Omega: dense Gaussian or very sparse sign
  /// Every basis; with Auto, the bases between two products of a power iteration get one
  /// CholeskyQR pass (they only carry the span to the next product) and the basis Q of B = Q^T A
  /// is made orthonormal to FP32 precision (Orthonormalizer::Auto).
  Orthonormalizer orthonormalizer = Orthonormalizer::Auto;
  SmallSvd small_svd = SmallSvd::Auto;  ///< the SVD of B = Q^T A (l x n)
  int error_probes = 16;            ///< Gaussian probes of the residual estimate; 0 skips it
};

/// What ran and how long each phase took (milliseconds, wall clock with the device synchronised).
/// Phases: "projection" (the sketch and the power iterations' products), "input check" (the
/// non-finite check, done on the sketch Y: A is scanned only when Y is not finite),
/// "orthonormalisation", "Q^T A", "small SVD", "U = Q Uhat", "error estimate".
struct RsvdReport {
  std::string backend;                         ///< the backend that ran, e.g. the GPU's name or "host"
  std::string sketch_kernel;                   ///< e.g. "shgemm fp16-TC (A scaled by 2^3)"
  std::vector<std::string> orthonormalizers;   ///< the method each orthonormalisation actually used
  PhaseReport phases;                          ///< milliseconds per phase, in the order they ran
  double relative_error_estimate = -1;         ///< ~ ||A - U S V^T||_F / ||A||_F; -1 when not estimated
  double total_ms() const { return phases.total_ms(); }  ///< the phases' sum, milliseconds
};

/// The randomized SVD A ~ U diag(S) V^T as matrices in the backend's memory (column-major; FP32,
/// or FP64 for FP64 data).
template <class T>
struct RsvdResultOf {
  Matrix<T> U;  ///< m x k, orthonormal columns
  Matrix<T> S;  ///< k x 1, descending
  Matrix<T> V;  ///< n x k, orthonormal columns; A ~ U diag(S) V^T
  RsvdReport report;  ///< what ran, the phases' times and the error estimate
};
/// The randomized SVD of FP32 data (every entry but rsvd() of FP64 data returns it).
using RsvdResult = RsvdResultOf<float>;

/// Rank-k randomized SVD of A (m x n, FP32, LayoutLeft, in the backend's memory; A is not modified).
/// Halko, Martinsson & Tropp (2011), Algorithms 4.4 and 5.1, with Omega in FP16 as in Ootomo &
/// Yokota, "Mixed-Precision Random Projection for RandNLA on Tensor Cores" (Algorithm 1).
/// U, S and V come from `outputs` (by default new matrices of the backend).
/// Throws InvalidArgument for k <= 0, p < 0, q < 0, k + p > min(m, n), non-finite entries in A,
/// or entries so large that A * Omega overflows FP32 (both found from the sketch, not by a pass
/// over A).
RsvdResult rsvd(Backend& backend, MatrixView<const float> a, index_t k, const RsvdOptions& options = {},
                const MatrixAllocator& outputs = nullptr);

/// Rank-k randomized SVD of FP64 data A (m x n, FP64, LayoutLeft, in the backend's memory; not
/// modified) to FP64 accuracy, its sketches in low precision: Omega and the sketch's products need
/// only the span, the products that form the factors the working precision (Ootomo & Yokota's
/// mixed-precision projection carried one precision up; cf. randomized_lra's subspace refinement).
///  1. A32 = 2^e A rounded once to FP32 (one m x n FP32 copy; e = 0 unless ||A||_F lies beyond
///     2^+-60, so that nothing overflows or underflows FP32 that matters to the sketch);
///  2. Q0 (m x l, l = k + p): rsvd()'s range finder on A32, Omega and the q power iterations in
///     options.products' precision (Auto: the FP16 sketch through SHGEMM on the Tensor Cores);
///  3. one step of subspace iteration in FP64 (Halko, Martinsson & Tropp 2011, Alg. 4.4):
///     Z = orth(A^T Q0), Q = orth(A Z), DGEMMs and orthonormalize(Backend&, MatrixView<double>, ...)
///     (Q by options.orthonormalizer). It maps what Q0 missed of range(A) by FP32 rounding back
///     into range(A): an exactly rank-k A is recovered to FP64 rounding, and a decaying spectrum
///     meets an FP64 RSVD's error with q + 1 power iterations;
///  4. B^T = A^T Q (DGEMM), its SVD through its FP64 Gram matrix (svd_through_gram), U = Q Uhat.
/// U (m x k), S (k x 1) and V (n x k) are FP64 from `outputs`. relative_error_estimate is
/// sqrt(||A||_F^2 - sum S_i^2) / ||A||_F (exact for U diag(S) V^T = U U^T A; it cancels below
/// about 1e-8). Phases: "input check and A in FP32", the range finder's, "FP64 refinement",
/// "Q^T A", "small SVD", "U = Q Uhat". Working memory: A32, and about 4 (m + n) l FP64 elements.
/// Throws InvalidArgument as rsvd() for k, p, q, for a sketch_operator other than Gaussian, and for
/// non-finite entries in A.
RsvdResultOf<double> rsvd(Backend& backend, MatrixView<const double> a, index_t k, const RsvdOptions& options = {},
                          const MatrixAllocatorOf<double>& outputs = nullptr);

/// Options of the fixed-accuracy randomized SVD, rsvd_fixed_accuracy(); every field has a default
/// (seed, products and progress as CommonOptions documents them).
struct FixedAccuracyOptions : CommonOptions {
  double tolerance = 1e-2;          ///< stop when ||A - Q Q^T A||_F <= tolerance * ||A||_F, in (0, 1)
  index_t block_size = 32;          ///< columns added to Q per step
  index_t max_rank = -1;            ///< -1: min(m, n)
  int power_iterations = 0;         ///< per block; the blocks' own growth already refines the basis
  SmallSvd small_svd = SmallSvd::Auto;  ///< the SVD of B = Q^T A, as RsvdOptions::small_svd
};

/// Fixed-accuracy randomized SVD: a blocked range finder grows Q block by block until the
/// residual bound holds (Martinsson & Voronin 2016, randQB_b; error indicator of Yu, Gu & Li 2018,
/// randQB_EI: ||A - Q B||_F^2 = ||A||_F^2 - ||B||_F^2), then returns the rank found (S.rows).
/// The indicator cancels below ~3e-4 relative (FP32 data), so tolerances under 1e-3 may run to
/// max_rank. Throws InvalidArgument for a tolerance outside (0, 1) or block_size <= 0;
/// UnsupportedConfiguration never; reaching max_rank without meeting the tolerance is reported in
/// relative_error_estimate, not thrown.
RsvdResult rsvd_fixed_accuracy(Backend& backend, MatrixView<const float> a, const FixedAccuracyOptions& options,
                               const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
