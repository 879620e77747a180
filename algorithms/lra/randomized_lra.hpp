// Mixed-precision randomized low-rank approximation A ~ X Y^T with iterative refinement
// (Baboulin, Donfack, Kaya, Mary & Robeyns, "Mixed precision randomized low-rank approximation
// with GPU tensor cores", 2024): randLRA (their Algorithm 1) with the products in a chosen
// precision and CholeskyQR in FP64 (Algorithm 3), refinement on the residual (Algorithms 4-5),
// and, beyond the paper, recompression of the refined factors to the rank asked for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "orthonormalize/orthonormalize.hpp"
#include "randnla/backend.hpp"
#include "randnla/report.hpp"

namespace randnla {

/// The precision of randLRA's two products B = A Omega and Y = A^T Q (the paper's GEMM variants).
enum class LraProducts {
  FP32,      ///< SGEMM: the paper's fp32 baseline
  TF32,      ///< TF32 Tensor Cores (cuBLAS); operands rounded to TF32 elsewhere
  FP16,      ///< "tgemm 32|32": FP32 operands rounded to FP16 inside each product, FP32 sums and C
             ///< (TF32 instead where an operand exceeds FP16's range: the product family's rule)
  FP16Once,  ///< "16|32": A rounded to FP16 once and used by both products (Omega and Q in FP16
             ///< too), FP16 Tensor Cores with FP32 sums and C; A's FP16 copy costs m n 2 bytes
  Split,     ///< SHGEMM / TCEC: A split into two FP16 (or TF32) terms, FP32 accuracy
  Auto       ///< Split where the backend has Tensor Cores, FP32 elsewhere
};

inline const EnumNames<LraProducts>& names_of(LraProducts) {
  static const EnumNames<LraProducts> names{{LraProducts::FP32, "fp32"}, {LraProducts::TF32, "tf32"},
                                            {LraProducts::FP16, "fp16"}, {LraProducts::FP16Once, "fp16-once"},
                                            {LraProducts::Split, "split"},
                                            {LraProducts::Auto, "auto"}};
  return names;
}

struct LraOptions {
  index_t oversampling = 0;   ///< p: Omega has k + p columns (the paper's runs use p = 0)
  std::uint64_t seed = 42;
  LraProducts products = LraProducts::Auto;
  /// CholeskyQR factors its Gram matrix in FP64 (the paper's dcholQR, Algorithm 3); Auto adds
  /// passes while the basis is not orthonormal to FP32 precision and falls back to Householder.
  Orthonormalizer orthonormalizer = Orthonormalizer::CholeskyQR;
  int refinements = 0;        ///< refinement steps (Algorithm 5), at most; each adds rank 2k
  /// 0: run every refinement step; > 0: stop refining once the refined factors (before any
  /// recompression) meet ||A - X Y^T||_F <= tolerance ||A||_F (each check costs the residual the
  /// next step needs anyway; recompression to rank k adds the rank-k truncation's error).
  double tolerance = 0;
  bool recompress = true;     ///< after refinement, truncate X Y^T back to rank k (QR, QR, SVD)
  Progress progress;          ///< called after each phase with its name and milliseconds
};

/// What ran and how long each phase took (milliseconds, the device synchronised at each phase).
/// Phases: "products", "orthonormalisation", "residual", "recompression".
struct LraReport {
  std::string backend;
  std::string products;                       ///< the products asked for, e.g. "fp16"
  std::vector<std::string> orthonormalizers;  ///< the method each orthonormalisation used
  /// ||A - X Y^T||_F / ||A||_F of the factors before each refinement step (and after the last
  /// one when a tolerance is given)
  std::vector<double> residuals;
  int refinements = 0;                        ///< the steps that ran
  PhaseReport phases;
  double total_ms() const { return phases.total_ms(); }
};

struct LraResult {
  Matrix<float> X;  ///< m x r
  Matrix<float> Y;  ///< n x r; A ~ X Y^T. r = k, or k (1 + 2 s) after s refinements without
                    ///< recompression
  LraReport report;
};

/// Rank-k randomized LRA of A (m x n, FP32, LayoutLeft, in the backend's memory; A is not
/// modified). Omega (n x (k + p)) is Gaussian from the counter-based generator, B = A Omega,
/// Q = orthonormalize(B), Y = A^T Q; X = Q and Y keep their first k columns (Algorithm 1).
/// Each refinement step computes E = A - X Y^T in FP32 (an m x n buffer) and appends randLRA(E)
/// of rank 2k (Algorithm 5), the Omega of each step drawn from the state the last one left; E is
/// scaled by a power of two that puts its largest entry at 2^14, so that the refinement's
/// products see no FP16 underflow or overflow whatever the residual's size; with
/// `recompress`, X Y^T is then truncated to rank k through QR of X and of Y and the SVD of the
/// small core R_X R_Y^T, so that X has orthonormal columns scaled by the singular values and Y
/// orthonormal columns.
/// Memory: X, Y, B (m x (k + p)); with refinement, E (m x n) and the factors of every step.
/// Throws InvalidArgument for k <= 0, p < 0, refinements < 0, tolerance < 0, a step's rank plus
/// p beyond min(m, n), non-finite entries in A, products that overflow FP32, and, with FP16
/// products, a largest entry of A outside FP16's normal range [2^-14, 2^15) (Split and Auto scale).
LraResult randomized_lra(Backend& backend, MatrixView<const float> a, index_t k, const LraOptions& options = {},
                         const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
