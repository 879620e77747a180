// Tall-skinny QR by a reduction tree (Demmel, Grigori, Hoemmen & Langou, "Communication-optimal
// parallel and sequential QR and LU factorizations", 2012): Householder QR of row blocks, the
// stacked R factors factored again up the tree, Q formed by products back down it.
#pragma once

#include <string>

#include "randnla/backend.hpp"

namespace randnla {

struct TsqrOptions {
  bool form_q = true;     ///< false: R only (no Q is formed, at a fraction of the work)
  index_t leaf_rows = 0;  ///< rows per leaf block (at least 2 n, so each level halves the stack at
                          ///< least); 0: max(4 n, 512). Must be 0 or >= n
  /// Where Q is written (m x n, FP32, LayoutLeft, the backend's memory); empty: a new matrix from
  /// the allocator. A itself may be passed, to save its memory: A is then overwritten by Q.
  MatrixView<float> q_buffer;
};

struct TsqrReport {
  std::string backend;
  int levels = 0;     ///< levels of the tree (1: a single Householder QR)
  index_t leaves = 0; ///< row blocks at the bottom level
};

struct TsqrResult {
  Matrix<float> Q;  ///< m x n, orthonormal columns (empty with form_q = false, or a view of q_buffer)
  Matrix<float> R;  ///< n x n, upper triangular (zeros below the diagonal); LAPACK's signs, A = Q R
  TsqrReport report;
};

/// A = Q R for A (m x n, m >= n >= 1, FP32, LayoutLeft, the backend's memory; not modified unless
/// it is q_buffer). Each leaf block is factored by Householder QR (LAPACK / cuSOLVER geqrf and
/// orgqr), the leaves' R factors are stacked and factored the same way, level by level, until one
/// block remains; Q = diag(Q_leaves) Q_stack, applied back down. Backward stable like Householder
/// QR: ||A - Q R|| and ||Q^T Q - I|| are O(u) times a small factor of the tree's depth.
/// Memory besides A and the outputs: m n (the leaves' Q) and the stacked R factors (about m n / 2 at
/// most) in FP32. Throws InvalidArgument for m < n, n = 0, leaf_rows < n, a q_buffer of another
/// shape or memory space.
TsqrResult tsqr(Backend& backend, MatrixView<const float> a, const TsqrOptions& options = {},
                const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
