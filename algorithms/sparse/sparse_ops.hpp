// The operations the sparse algorithms alone need, behind their own small interface: the backends
// implement them beside their other code (backends/portable/sparse, backends/cuda/sparse) and
// register them on their device context (provide_sparse_ops).
#pragma once

#include <string>

#include "randnla/backend.hpp"
#include "randnla/sparse/csr_view.hpp"
#include "randnla/sparse/sparse_sign_sketch.hpp"

namespace randnla {

/// One stored entry of a CSR matrix and its row's bounds, read back for an error message.
struct CsrEntry {
  std::int32_t row_begin = 0, row_end = 0;  ///< row_ptr[row], row_ptr[row + 1]
  std::int32_t column = 0;                  ///< col_idx[position]
  float value = 0;                          ///< values[position]
};

/// The first defects of a CSR matrix, -1 where there is none. `offset`: the first i in 0 .. rows
/// with row_ptr[0] != 0 (i = 0), row_ptr[i] < row_ptr[i - 1] or row_ptr[i] > nnz, or row_ptr[rows]
/// != nnz. `entry`: the first position j, in a row whose bounds lie in order within 0 .. nnz, whose
/// column index lies outside 0 .. cols - 1 or is not above the one before it in its row, or whose
/// value is not finite (meaningful where offset = -1).
struct CsrDefects {
  index_t offset = -1;
  index_t entry = -1;
};

class SparseOps {
 public:
  static constexpr const char* kName = "SparseOps";
  explicit SparseOps(MemorySpace space) : space_(space) {}
  virtual ~SparseOps() = default;

  /// Y := op(A) X in FP32 (X n x l and Y m x l for Op::N; X m x l and Y n x l for Op::T), A a
  /// valid CSR matrix (checked by the caller). Returns the kernel that ran.
  std::string spmm(const CsrView& a, Op op, MatrixView<const float> x, MatrixView<float> y) {
    require(a.space == space_, "A.space", to_string(a.space), "must be this backend's memory");
    require_space(x, space_, "X"), require_space(y, space_, "Y");
    const index_t in = op == Op::N ? a.cols : a.rows, out = op == Op::N ? a.rows : a.cols;
    require_shape(x, in, y.cols(), "X");
    require_shape(y, out, x.cols(), "Y");
    return do_spmm(a, op, x, y);
  }
  /// Y := A Omega in FP32, A a valid CSR matrix (m x n, checked by the caller), Omega the sparse
  /// sign test matrix (n x l, never stored), Y m x l: Y(i, c) sums +-A(i, j) over the j whose row of
  /// Omega has a non-zero in column c, in the order of row i's entries, and is then multiplied by
  /// 1/sqrt(zeta): the same bits on every backend, for any thread count. Returns the kernel that ran.
  std::string sparse_sign_sketch(const CsrView& a, const SparseSignSketch& omega, MatrixView<float> y) {
    require(a.space == space_, "A.space", to_string(a.space), "must be this backend's memory");
    require_space(y, space_, "Y");
    require(omega.rows == a.cols, "Omega.rows", omega.rows, "must equal A.cols = " + std::to_string(a.cols));
    require_shape(y, a.rows, omega.cols, "Y");
    return do_sparse_sign_sketch(a, omega, y);
  }
  /// A's defects against CsrView's invariants, in one pass over row_ptr, col_idx and values (one
  /// wait on the host): see CsrDefects.
  CsrDefects first_defects(const CsrView& a) { return a.rows == 0 ? CsrDefects{} : do_first_defects(a); }
  /// row_ptr[row], row_ptr[row + 1], and col_idx and values at `position` (where 0 <= position < nnz,
  /// else left 0), copied to the host.
  CsrEntry entry(const CsrView& a, index_t row, index_t position) {
    require(row >= 0 && row < a.rows, "row", row, "must lie in 0 .. rows - 1");
    return do_entry(a, row, position >= 0 && position < a.nnz ? position : -1);
  }

 protected:
  virtual std::string do_spmm(const CsrView& a, Op op, MatrixView<const float> x, MatrixView<float> y) = 0;
  virtual std::string do_sparse_sign_sketch(const CsrView& a, const SparseSignSketch& omega, MatrixView<float> y) = 0;
  virtual CsrDefects do_first_defects(const CsrView& a) = 0;
  /// position -1: only the row's bounds.
  virtual CsrEntry do_entry(const CsrView& a, index_t row, index_t position) = 0;

 private:
  MemorySpace space_;
};

}  // namespace randnla
