// The operations the TSQR tree alone needs, behind their own small interface: a backend that
// factors row blocks on chip implements it beside its other code (backends/cuda/tsqr) and registers
// it on its device context; any other backend gets the generic one (blockwise_tsqr_ops.hpp), built
// on Backend's Householder QR and products.
#pragma once

#include <string>

#include "randnla/backend.hpp"

namespace randnla {

/// First row of block i when m rows are split into `blocks` row blocks whose sizes differ by one
/// at most (each has at least floor(m / blocks) rows).
RANDNLA_HD index_t tsqr_block_start(index_t i, index_t m, index_t blocks) { return i * m / blocks; }

class TsqrOps {
 public:
  static constexpr const char* kName = "TsqrOps";
  explicit TsqrOps(MemorySpace space) : space_(space) {}
  virtual ~TsqrOps() = default;

  /// Most columns a block may have; wider A is factored in panels of this width (tsqr.hpp).
  virtual index_t max_columns() const = 0;
  /// Most rows a block of n columns may have (0: n is beyond this implementation, n > max_columns()).
  virtual index_t max_block_rows(index_t n) const = 0;
  /// The block height this implementation runs fastest with for n columns (<= max_block_rows(n)).
  virtual index_t preferred_block_rows(index_t n) const = 0;

  /// Householder QR of A's row blocks (A m x n, `blocks` blocks split as tsqr_block_start, each of
  /// at least n and at most max_block_rows(n) rows): R_i (n x n, LAPACK's signs, zeros below the
  /// diagonal) into rows [i n, (i + 1) n) of r_stack (blocks n x n); with q non-empty (m x n), the
  /// thin Q_i into Q's rows of block i. q may be A: each block is read before its Q is written.
  void factor_blocks(MatrixView<const float> a, index_t blocks, MatrixView<float> q, MatrixView<float> r_stack) {
    require_blocks(a.rows(), a.cols(), blocks, "A");
    require_space(a, space_, "A"), require_space(r_stack, space_, "r_stack");
    require_shape(r_stack, blocks * a.cols(), a.cols(), "r_stack");
    if (!q.empty()) require_space(q, space_, "Q"), require_shape(q, a.rows(), a.cols(), "Q");
    do_factor_blocks(a, blocks, q, r_stack);
  }
  /// Q's block i := Q_i S_i in place, S_i (n x n) rows [i n, (i + 1) n) of s_stack (blocks n x n).
  void multiply_blocks(MatrixView<float> q, index_t blocks, MatrixView<const float> s_stack) {
    require_blocks(q.rows(), q.cols(), blocks, "Q");
    require_space(q, space_, "Q"), require_space(s_stack, space_, "s_stack");
    require_shape(s_stack, blocks * q.cols(), q.cols(), "s_stack");
    do_multiply_blocks(q, blocks, s_stack);
  }

 protected:
  virtual void do_factor_blocks(MatrixView<const float> a, index_t blocks, MatrixView<float> q,
                                MatrixView<float> r_stack) = 0;
  virtual void do_multiply_blocks(MatrixView<float> q, index_t blocks, MatrixView<const float> s_stack) = 0;

 private:
  void require_blocks(index_t m, index_t n, index_t blocks, const char* what) const {
    require(n >= 1 && max_block_rows(n) > 0, std::string(what) + ".cols", n,
            "is beyond the blocks this backend factors on chip");
    require(blocks >= 1 && m / blocks >= n && (m + blocks - 1) / blocks <= max_block_rows(n), "blocks", blocks,
            std::string("must split ") + what + "'s " + std::to_string(m) + " rows into blocks of " +
                std::to_string(n) + " to " + std::to_string(max_block_rows(n)) + " rows");
  }
  MemorySpace space_;
};

}  // namespace randnla
