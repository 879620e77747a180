// Tall-skinny QR by a reduction tree (Demmel, Grigori, Hoemmen & Langou, "Communication-optimal
// parallel and sequential QR and LU factorizations", 2012): Householder QR of row blocks, the
// stacked R factors factored again up the tree, Q formed by products back down it.
#pragma once

#include <string>

#include "randnla/backend.hpp"
#include "randnla/tsqr/tsqr_arithmetic.hpp"

namespace randnla {

/// Options of the tall-skinny QR, tsqr(); every field has a default.
struct TsqrOptions {
  bool form_q = true;     ///< false: R only (no Q is formed, at a fraction of the work)
  /// The blocks' arithmetic. FP32: Householder QR in FP32 (LAPACK's blocks, or the CUDA backend's
  /// on chip). The Tensor Core variants (Ootomo & Yokota, "TSQR on TensorCores"): each reflector
  /// H = I - tau v v^T formed explicitly and applied as a product, to R and to Q, and the products
  /// Q_i S_i down the tree, with operands rounded as the Tensor Cores take them (TsqrDot); each block
  /// first scaled by a power of two so its largest column norm is below 1 (exact; FP16 neither
  /// overflows nor loses more than entries far below the block's largest). fp16-refined keeps FP32
  /// accuracy; tf32 and fp16 lose to their unit roundoff (about 5e-4). The CUDA backend runs them
  /// on the Tensor Cores (wmma), one warp per block of up to 32 rows and 16 columns (wider A in
  /// panels of 16); the portable backend emulates them element by element; a backend without
  /// them throws UnsupportedConfiguration. Panels are made orthogonal to each other in FP32.
  TsqrArithmetic arithmetic = TsqrArithmetic::FP32;
  /// Rows per leaf block: 0 picks the backend's best (max(4 n, 512) rows with LAPACK blocks; on
  /// the CUDA backend 128 rows up to 32 columns, one warp's registers, else min(8 n, the most its
  /// shared memory holds), at least 2 n).
  /// Otherwise in [w, the most rows the backend factors in one block of w columns], w the block's
  /// columns (n, or the panel width) (InvalidArgument outside), and raised to 2 w, so that each
  /// level shrinks the stack at least by half.
  index_t leaf_rows = 0;
  /// Columns per panel where A is factored panel by panel (BCGS2 between panels, the tree on each):
  /// 0 takes panels only where A is wider than the backend's blocks (128 columns on the CUDA
  /// backend, no limit elsewhere); otherwise at most that width.
  index_t panel_columns = 0;
  /// Where Q is written (m x n, FP32, LayoutLeft, the backend's memory); empty: a new matrix from
  /// the allocator. A itself may be passed, to save its memory: A is then overwritten by Q.
  MatrixView<float> q_buffer;
};

/// How the TSQR ran: the tree's shape and how its blocks were factored.
struct TsqrReport {
  std::string backend;  ///< the backend that ran, e.g. the GPU's name or "host"
  int levels = 0;     ///< levels of the tree (1: a single Householder QR)
  index_t leaves = 0; ///< row blocks at the bottom level
  index_t panels = 1;  ///< column panels (more than 1 where A is wider than the backend's blocks)
  /// Panels whose second BCGS2 factorisation was FP64 CholeskyQR2 (the others after the first: the tree)
  index_t cholesky_qr2_panels = 0;
  std::string blocks; ///< how the blocks were factored, e.g. "batched on chip" or "one Householder QR per block"
  std::string arithmetic;  ///< to_string(TsqrOptions::arithmetic)
};

/// A = Q R as matrices in the backend's memory (FP32, column-major).
struct TsqrResult {
  Matrix<float> Q;  ///< m x n, orthonormal columns (empty with form_q = false, or a view of q_buffer)
  Matrix<float> R;  ///< n x n, upper triangular (zeros below the diagonal); LAPACK's signs, A = Q R
  TsqrReport report;  ///< the tree's shape and the blocks' method
};

/// A = Q R for A (m x n, m >= n >= 1, FP32, LayoutLeft, the backend's memory; not modified unless
/// it is q_buffer). A is split into row blocks of at most leaf_rows rows (sizes differing by one at
/// most); each is factored by Householder QR, the blocks' R factors are stacked and factored the
/// same way, level by level, until one block remains; Q = diag(Q_blocks) Q_stack, applied back
/// down in place. The CUDA backend factors all blocks of a level in one kernel, each block in
/// shared memory in FP32; elsewhere each block is one LAPACK (or vendor) geqrf + orgqr. A wider
/// than the CUDA blocks (n > 128) is factored in panels of 128 columns, each orthogonalised
/// against the ones before it by BCGS2 (Barlow & Smoktunowicz 2013, Algorithm 2: project, factor
/// by the tree, project the factor's Q, factor again). The second factorisation, of a panel of
/// condition number about 1, is CholeskyQR2 with FP64 Gram sums (16 MiB of rows in FP64 at a time),
/// checked orthonormal to 2^-20 sqrt(w) (w: its columns), else the tree (report.cholesky_qr2_panels counts the
/// first kind).
/// Backward stable like Householder QR: ||A - Q R|| and ||Q^T Q - I|| are O(u) times a small
/// factor of the tree's depth (with panels, while cond(A) u stays below 1; FP32 rounding of A
/// keeps it there in practice: the tests hold 1e-5 up to cond 1e15).
/// Memory besides A and the outputs: the stacked R factors, m n / leaf_rows x n at the first level
/// (FP32), less above; with panels, 32 MiB for CholeskyQR2, and with form_q = false an m x n matrix
/// for them. Throws InvalidArgument for m < n, n = 0, leaf_rows out of range, a q_buffer
/// of another shape or memory space.
TsqrResult tsqr(Backend& backend, MatrixView<const float> a, const TsqrOptions& options = {},
                const MatrixAllocator& outputs = nullptr);

/// The same for a row-major A (m x n), given as A^T column-major (Transposed: a LayoutRight view's
/// memory, n x m), without a copy of A: with form_q, A is transposed into Q's memory (q_buffer, or
/// the allocator's Q) and factored there, so the call needs no memory beyond the column-major
/// call's; R only (form_q = false), A's rows are transposed 8 MiB at a time (at least 2 n rows)
/// into one buffer, each chunk's R found by tsqr and the stacked R factors factored again (the
/// report counts the chunks' leaves and the extra level). Throws as tsqr on a column-major A.
TsqrResult tsqr(Backend& backend, Transposed<const float> a, const TsqrOptions& options = {},
                const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
