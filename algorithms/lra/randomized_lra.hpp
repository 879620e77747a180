// Mixed-precision randomized low-rank approximation A ~ X Y^T with iterative refinement
// (Baboulin, Donfack, Kaya, Mary & Robeyns, "Mixed precision randomized low-rank approximation
// with GPU tensor cores", 2024): randLRA (their Algorithm 1) with the products in a chosen
// precision and CholeskyQR in FP64 (Algorithm 3), refinement on the residual (Algorithms 4-5),
// and, beyond the paper, recompression of the refined factors to the rank asked for and subspace
// refinement (FP32-accurate half power iterations from a low-precision sketch, rank k).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "randnla/common/options.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/backend.hpp"
#include "randnla/report.hpp"

namespace randnla {

/// How refinement steps improve randLRA's factors.
enum class LraRefinement {
  /// The paper's Algorithm 5: each step appends randLRA(E, 2k) of the residual E = A - X Y^T
  /// (formed in FP32, m x n), so the rank grows by 2k a step; recompression brings it back to k.
  Residual,
  /// Beyond the paper: each step replaces the basis by that of A^T Q (or A V), with FP32-accurate
  /// products and the basis rounded to FP16 as their second operand (SHGEMM on Tensor Cores, FP32
  /// elsewhere), and the last step's factor on the other side comes from an FP32-accurate product
  /// (TCEC) too. A half power iteration (Halko, Martinsson & Tropp 2011, Algorithm 4.4) whose
  /// products meet FP32 accuracy where the sketch's did not: the span that A's rounding to FP16
  /// (or TF32) perturbed by cond(A Omega) u_16 is recomputed from A itself, and A's own range
  /// makes A^T Q well conditioned whatever the sketch's conditioning. The rank stays k; no m x n
  /// buffer.
  Subspace
};

/// The names of LraRefinement's values as the command-line tool spells them ("residual", "subspace").
inline const EnumNames<LraRefinement>& names_of(LraRefinement) {
  static const EnumNames<LraRefinement> names{{LraRefinement::Residual, "residual"},
                                              {LraRefinement::Subspace, "subspace"}};
  return names;
}

/// Options of the randomized LRA, randomized_lra(); every field has a default (oversampling 0;
/// seed and progress as CommonOptions documents them).
/// `products` (the precision of B = A Omega and Y = A^T Q, the paper's GEMM variants): fp32 (SGEMM,
/// the paper's baseline); tf32; fp16 ("tgemm 32|32": operands rounded to FP16 inside each product,
/// FP32 sums; TF32 where an operand exceeds FP16's range); fp16-once ("16|32": A rounded to FP16
/// once for both products, Omega and Q in FP16 too; costs m n 2 bytes); fp16-all ("16|16": with
/// FP16 sums and C too, Omega scaled by a power of two near 1/sqrt(n) so that partial sums stay
/// near A's row norms; InvalidArgument where one still overflows FP16); split (SHGEMM with Omega in
/// FP16 for A Omega, TCEC for A^T Q: FP32 accuracy); auto (split with Tensor Cores, fp32 without;
/// with subspace refinement, tf32 on Tensor Cores). The report says which ran and why.
struct LraOptions : FixedRankOptions {
  LraOptions() : FixedRankOptions(0) {}
  /// CholeskyQR factors its Gram matrix in FP64 (the paper's dcholQR, Algorithm 3); Auto adds
  /// passes while the basis is not orthonormal to FP32 precision and falls back to Householder.
  Orthonormalizer orthonormalizer = Orthonormalizer::CholeskyQR;
  int refinements = 0;        ///< refinement steps, at most (Residual: each adds rank 2k)
  LraRefinement refinement = LraRefinement::Residual;  ///< how refinement steps improve the factors
  /// Residual refinement only (InvalidArgument with Subspace, which forms no residual). 0: run
  /// every refinement step; > 0: stop refining once the refined factors (before any
  /// recompression) meet ||A - X Y^T||_F <= tolerance ||A||_F (each check costs the residual the
  /// next step needs anyway; recompression to rank k adds the rank-k truncation's error).
  double tolerance = 0;
  bool recompress = true;     ///< after residual refinement, truncate X Y^T back to rank k
  /// The residual refinement's m x n FP32 buffer for E (LayoutLeft, in the backend's memory);
  /// empty (the default): allocated per call. A itself may be passed, to save that memory: A is
  /// then overwritten (its contents on return unspecified). Subspace refinement needs none.
  MatrixView<float> residual_buffer;
};

/// What ran and how long each phase took (milliseconds, the device synchronised at each phase).
/// Phases: "products", "orthonormalisation", "residual", "recompression" (subspace refinement's
/// truncation to rank k too).
struct LraReport {
  std::string backend;                        ///< the backend that ran, e.g. the GPU's name or "host"
  std::string products;                       ///< the products that ran, e.g. "fp16", Auto's choice
                                              ///< with its reason, "split (auto: Tensor Cores)"
  std::vector<std::string> orthonormalizers;  ///< the method each orthonormalisation used
  /// ||A - X Y^T||_F / ||A||_F of the factors before each residual refinement step (and after the
  /// last one when a tolerance is given)
  std::vector<double> residuals;
  int refinements = 0;                        ///< the steps that ran
  PhaseReport phases;                         ///< milliseconds per phase, in the order they ran
  double total_ms() const { return phases.total_ms(); }  ///< the phases' sum, milliseconds
};

/// The randomized LRA A ~ X Y^T as matrices in the backend's memory (FP32, column-major).
struct LraResult {
  Matrix<float> X;  ///< m x r
  Matrix<float> Y;  ///< n x r; A ~ X Y^T. r = k, or k (1 + 2 s) after s residual refinement
                    ///< steps without recompression
  LraReport report;  ///< what ran, the residuals and the phases' times
};

/// Rank-k randomized LRA of A (m x n, FP32, LayoutLeft, in the backend's memory; not modified
/// unless it is options.residual_buffer). Omega
/// (n x (k + p)) is Gaussian from the counter-based generator, B = A Omega, Q = orthonormalize(B),
/// Y = A^T Q; X = Q and Y keep their first k columns (Algorithm 1).
/// Refinement (Algorithm 5): E = A - X Y^T with FP32 accuracy (Split products on Tensor Cores,
/// SGEMM elsewhere), then each step appends randLRA(E) of rank 2k, its Omega drawn from the state
/// the last one left, and subtracts it from E when another step or a tolerance check follows. The
/// FP16 products see E scaled by a power of two that puts its largest entry at 2^14 (16|16: its
/// Frobenius norm), so that they meet no FP16 underflow or overflow whatever the residual's size;
/// 16|32 and 16|16 scale it in their conversion to FP16, 32|32 in place. With `recompress`, X Y^T is then
/// truncated to rank k by a randomized SVD of the implicit product (k + 10 columns, one power
/// iteration, all through the thin factors): X has orthonormal columns scaled by the singular
/// values, Y orthonormal columns. (The QR-QR-SVD route needs the SVD of an r x r core that is
/// rank-deficient by construction: cubic in r = 3k, and cuSOLVER's fast polar SVD loses accuracy
/// on exactly such matrices.)
/// Subspace refinement (LraRefinement::Subspace, s >= 1 steps): Q = orth(A Omega) in the products'
/// precision (Auto: TF32 on Tensor Cores), then each step replaces the basis by V = orth(A^T Q) (n x l) or Q = orth(A V), the
/// product FP32-accurate with the basis rounded to FP16 (its largest entry scaled into [1, 2)), and
/// the other factor of the last basis comes from an FP32-accurate product with it: X = A V, Y = V
/// after an odd number of steps, X = Q, Y = A^T Q after an even one (one basis orthonormal, the
/// other factor not). With p > 0 that is truncated to rank k by the SVD of the non-orthonormal
/// factor (through its Gram matrix): X's columns orthogonal, scaled by the singular values, Y
/// orthonormal. "Accurate": Split (SHGEMM, then TCEC) where the backend has Tensor Cores, FP32
/// elsewhere. On the paper's rank-k matrices one step takes the error from the sketch's
/// (cond(A Omega) times the products' rounding) to FP32's, below the FP32 baseline's; on others the
/// step is a half power iteration and the error approaches the rank-k optimum.
/// Device memory besides A and the outputs (4-byte words; l = k + p, r = k (1 + 2 s) after s steps):
/// X and Y (m r + n r), B and A^T Q (m l + n l); 16|32 and 16|16 add A in FP16 (m n / 2); residual
/// refinement adds E (m n) unless residual_buffer is given, and recompression 3 (m + n) (k + 10);
/// subspace refinement needs Q and V (m l + n l; with p = 0 they are X and Y), an FP16 copy of the
/// basis, and with p > 0 the SVD's l (m + 2 l + 1) or l (n + 2 l + 1).
/// Throws InvalidArgument for k <= 0, p < 0, refinements < 0, tolerance < 0 (or > 0 with subspace
/// refinement), a step's rank plus
/// p beyond min(m, n), non-finite entries in A, products that overflow FP32, a residual_buffer of
/// another shape or memory space, with FP16 products a largest entry of A outside FP16's normal range [2^-14, 2^15)
/// (Split and Auto scale), and with 16|16 an FP16 partial sum that overflows. A CholeskyQR
/// breakdown falls back as orthonormalize() documents, and report.orthonormalizers says so.
LraResult randomized_lra(Backend& backend, MatrixView<const float> a, index_t k, const LraOptions& options = {},
                         const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
