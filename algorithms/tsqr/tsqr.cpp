// Tall-skinny QR by a reduction tree (tsqr.hpp).
#include "randnla/tsqr/tsqr.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "randnla/tsqr/blockwise_tsqr_ops.hpp"
#include "randnla/tsqr/tensor_core_tsqr_ops.hpp"

namespace randnla {
namespace {

struct Tree {
  Backend& b;
  TsqrOps& ops;
  index_t leaf;
  bool form_q;
  TsqrReport& report;
};

/// One level: A's row blocks factored (their thin Q written to q, which may be A), their R factors
/// stacked and the stack factored by the next level in place; then Q_i := Q_i S_i, S_i the stack's
/// Q block. `level` counts from the bottom.
void tree_qr(Tree& t, MatrixView<const float> a, MatrixView<float> q, MatrixView<float> r, int level) {
  const index_t m = a.rows(), n = a.cols(), blocks = (m + t.leaf - 1) / t.leaf;
  t.report.levels = std::max(t.report.levels, level + 1);
  if (level == 0) t.report.leaves = blocks;
  if (blocks == 1) return t.ops.factor_blocks(a, 1, q, r);
  Matrix<float> stack(t.b, blocks * n, n, "stacked R");
  t.ops.factor_blocks(a, blocks, q, stack.view());
  tree_qr(t, stack, t.form_q ? stack.view() : MatrixView<float>(), r, level + 1);
  if (t.form_q) t.ops.multiply_blocks(q, blocks, stack);
}

/// r (n x n) := 0, through the host, since r is small.
void zero(Backend& b, MatrixView<float> r) {
  std::vector<float> h(static_cast<std::size_t>(r.size()), 0.0f);
  b.copy(MatrixView<const float>(h.data(), r.rows(), r.cols(), r.rows(), MemorySpace::Host), r);
}

/// One block Gram-Schmidt pass: c := before^T panel, panel -= before c (FP32 products).
void project_out(Tree& t, MatrixView<const float> before, MatrixView<float> panel, MatrixView<float> c) {
  t.b.product(Op::T, Op::N, 1.0f, before, panel, 0.0f, c, ProductPrecision::fp32());
  t.b.product(Op::N, Op::N, -1.0f, before, c, 1.0f, panel, ProductPrecision::fp32());
}

/// A panel's rows in FP64 at a time, 16 MiB of them in each of two buffers, so that its FP64
/// arithmetic adds little to the tree's small working memory.
class Fp64Rows {
 public:
  Fp64Rows(Backend& b, index_t m, index_t w)
      : b_(b), rows_(std::min(m, std::max<index_t>(1, (16 << 20) / (8 * std::max<index_t>(w, 1))))),
        rows_in_fp64_(b, rows_, w, "panel rows in FP64"), divided_(b, rows_, w, "panel rows R^-1") {}
  /// G := P^T P with FP64 sums.
  void gram(MatrixView<const float> p, MatrixView<double> g) {
    for_rows(p.rows(), [&](index_t i0, MatrixView<double> c, MatrixView<double>) {
      b_.convert(p.block(i0, 0, c.rows(), p.cols()), c);
      b_.product(Op::T, Op::N, 1.0, MatrixView<const double>(c), c, i0 == 0 ? 0.0 : 1.0, g);
    });
  }
  /// P := P R^{-1} (rinv: R^{-1}, upper triangular) and G := (P R^{-1})^T (P R^{-1}) with FP64 sums
  /// before P's rounding: one sweep over P, GEMMs rather than triangular solves (cuBLAS' DTRSM on
  /// 8 MiB chunks was a sixth of a 65536 x 512 TSQR on the H100).
  void divide_and_gram(MatrixView<float> p, MatrixView<const double> rinv, MatrixView<double> g) {
    for_rows(p.rows(), [&](index_t i0, MatrixView<double> c, MatrixView<double> d) {
      const MatrixView<float> rows = p.block(i0, 0, c.rows(), p.cols());
      b_.convert(MatrixView<const float>(rows), c);
      b_.product(Op::N, Op::N, 1.0, MatrixView<const double>(c), rinv, 0.0, d);
      b_.product(Op::T, Op::N, 1.0, MatrixView<const double>(d), d, i0 == 0 ? 0.0 : 1.0, g);
      b_.convert(MatrixView<const double>(d), rows);
    });
  }

 private:
  template <class Step>
  void for_rows(index_t m, Step step) {
    for (index_t i0 = 0; i0 < m; i0 += rows_) {
      const index_t r = std::min(rows_, m - i0), w = rows_in_fp64_.cols();
      step(i0, rows_in_fp64_.view().block(0, 0, r, w), divided_.view().block(0, 0, r, w));
    }
  }
  Backend& b_;
  index_t rows_;
  Matrix<double> rows_in_fp64_, divided_;
};

/// The w x w identity in FP64.
Matrix<double> identity(Backend& b, index_t w, const char* name) {
  Matrix<double> e(b, w, w, name);
  b.scale(0.0, e.view());
  b.add_to_diagonal(e.view(), 1.0);
  return e;
}

/// BCGS2's second factorisation by CholeskyQR2 with FP64 Gram sums, panel := panel R^{-1} in place,
/// R^{-1} accumulated into `rinv` (w x w, FP64, the identity on entry): the panel there is Q1 less
/// its rounding-level part in the earlier columns' span, condition number about 1, where two passes
/// reach FP32 orthogonality at a small part of a tree's work (one tree per panel was 42% of a
/// 65536 x 512 TSQR on the H100). False where a Cholesky factorisation breaks down or the panel is
/// not orthonormal to 2^-20 sqrt(w) after the two passes (Q1 lay mostly in that span): the panel is
/// then the original panel times rinv, for the tree to finish.
bool cholesky_qr2_in_place(Backend& b, MatrixView<float> panel, MatrixView<double> rinv) {
  const index_t w = panel.cols();
  Fp64Rows rows(b, panel.rows(), w);
  Matrix<double> g(b, w, w, "G");
  rows.gram(panel, g.view());
  for (int pass = 0; pass < 2; ++pass) {
    if (b.cholesky(g.view()) != 0) return false;
    Matrix<double> pass_rinv = identity(b, w, "R^-1 of the pass");
    b.triangular_solve(Side::Left, Op::N, 1.0, g, pass_rinv.view());
    b.triangular_solve(Side::Right, Op::N, 1.0, g, rinv);
    rows.divide_and_gram(panel, pass_rinv, g.view());  // g: the next pass's Gram matrix
  }
  b.add_to_diagonal(g.view(), -1.0);
  return b.frobenius_norm(MatrixView<const double>(g.view())) <= 0x1p-20 * std::sqrt(static_cast<double>(w));
}

/// Q2 R2 = panel (in place; R2 w x w FP32): cholesky_qr2_in_place, else the tree on what it left.
void second_factorisation(Tree& t, MatrixView<float> panel, MatrixView<float> r2) {
  const index_t w = panel.cols();
  Matrix<double> rinv = identity(t.b, w, "R2^-1"), r = identity(t.b, w, "R2");
  const bool orthonormal = cholesky_qr2_in_place(t.b, panel, rinv.view());
  t.b.triangular_solve(Side::Left, Op::N, 1.0, rinv, r.view());  // R = (R^-1)^-1, both upper triangular
  if (orthonormal) {
    ++t.report.cholesky_qr2_panels;
    t.b.convert(MatrixView<const double>(r.view()), r2);
    return;
  }
  Matrix<float> by_tree(t.b, w, w, "R2 of the tree"), applied(t.b, w, w, "R2 of CholeskyQR");
  tree_qr(t, panel, panel, by_tree.view(), 0);
  t.b.convert(MatrixView<const double>(r.view()), applied.view());
  t.b.product(Op::N, Op::N, 1.0f, MatrixView<const float>(by_tree.view()), applied.view(), 0.0f, r2,
              ProductPrecision::fp32());
}

/// A wider than the blocks: panels of `width` columns, in Q's memory (which holds A), each made
/// orthogonal to the panels before it by BCGS2 (Barlow & Smoktunowicz 2013, Algorithm 2): project
/// the panel out of the Q before it (S1) and factor it by the tree (Q1 R1), then project Q1 out again
/// (S2) and factor it once more (Q2 R2: second_factorisation). The panel's R is
/// R2 R1 and its coefficients S1 + S2 R1. The second factorisation acts on the orthonormal Q1, not
/// on the projected panel, whose norm may be at rounding level: that is what keeps Q orthonormal at
/// condition numbers up to 1/u (two projections before one factorisation lose it from cond 1e8 in
/// FP32).
void panel_qr(Tree& t, MatrixView<float> q, MatrixView<float> r, index_t width) {
  const index_t m = q.rows(), n = q.cols();
  zero(t.b, r);
  for (index_t c0 = 0; c0 < n; c0 += width) {
    const index_t w = std::min(width, n - c0);
    const MatrixView<float> panel = q.block(0, c0, m, w), s = r.block(0, c0, c0, w), rr = r.block(c0, c0, w, w);
    if (c0 == 0) {
      tree_qr(t, panel, panel, rr, 0);
      continue;
    }
    const MatrixView<const float> before = q.block(0, 0, m, c0);
    Matrix<float> r1(t.b, w, w, "R1"), s2(t.b, c0, w, "S2"), r2(t.b, w, w, "R2");
    project_out(t, before, panel, s);
    tree_qr(t, panel, panel, r1.view(), 0);
    project_out(t, before, panel, s2.view());
    second_factorisation(t, panel, r2.view());
    t.b.product(Op::N, Op::N, 1.0f, MatrixView<const float>(r2.view()), r1.view(), 0.0f, rr, ProductPrecision::fp32());
    t.b.product(Op::N, Op::N, 1.0f, MatrixView<const float>(s2.view()), r1.view(), 1.0f, s, ProductPrecision::fp32());
  }
}

/// The block operations that run `arithmetic` here: FP32 on the backend's own blocks, else on the
/// generic ones; a Tensor Core arithmetic on the backend's TensorCoreTsqrOps (made into `variant`).
/// Sets report.blocks. Throws UnsupportedConfiguration where the backend has none that runs it.
TsqrOps& blocks_for(Backend& b, TsqrArithmetic arithmetic, TsqrOps& generic, std::unique_ptr<TsqrOps>& variant,
                    TsqrReport& report) {
  report.arithmetic = to_string(arithmetic);
  if (arithmetic == TsqrArithmetic::FP32) {
    TsqrOps* own = b.find_ops<TsqrOps>();
    report.blocks = own != nullptr ? "batched on chip" : "one Householder QR per block";
    return own != nullptr ? *own : generic;
  }
  TensorCoreTsqrOps* tc = b.find_ops<TensorCoreTsqrOps>();
  if (tc == nullptr || !tc->runs(arithmetic))
    throw UnsupportedConfiguration(std::string("TSQR arithmetic ") + to_string(arithmetic) + " is not implemented on " +
                                   b.description());
  variant = tc->blocks_in(arithmetic);
  report.blocks = tc->description(arithmetic);
  return *variant;
}

/// The R of A (m x n) stored as A^T, R only: A's rows in chunks of 8 MiB (at least 2 n rows, sizes
/// differing by one at most, so each has at least n) transposed into one buffer and factored by
/// tsqr in turn, their R factors stacked and factored by tsqr again: a tree whose first level
/// streams A through a buffer of one chunk.
TsqrResult r_of_row_chunks(Backend& b, MatrixView<const float> at, const TsqrOptions& o, const MatrixAllocator& out) {
  const index_t m = at.cols(), n = at.rows();
  const index_t most = std::max<index_t>(2 * n, (8 << 20) / (4 * n));
  const index_t chunks = (m + most - 1) / most, rows = (m + chunks - 1) / chunks;
  Matrix<float> chunk(b, rows, n, "row chunk of A");
  if (chunks == 1) {
    b.transpose(at, chunk.view());
    return tsqr(b, chunk, o, out);
  }
  Matrix<float> stack(b, chunks * n, n, "stacked R");
  index_t levels = 0, leaves = 0;
  for (index_t c = 0, i0 = 0; c < chunks; ++c) {
    const index_t count = m / chunks + (c < m % chunks ? 1 : 0);
    const MatrixView<float> rows_of_a = chunk.view().block(0, 0, count, n);
    b.transpose(at.block(0, i0, n, count), rows_of_a);
    const TsqrResult part = tsqr(b, rows_of_a, o);
    b.copy(MatrixView<const float>(part.R.view()), stack.view().block(c * n, 0, n, n));
    levels = std::max(levels, static_cast<index_t>(part.report.levels)), leaves += part.report.leaves;
    i0 += count;
  }
  TsqrResult res = tsqr(b, stack, o, out);
  res.report.levels += static_cast<int>(levels);
  res.report.leaves = leaves;
  return res;
}

}  // namespace

TsqrResult tsqr(Backend& b, Transposed<const float> a, const TsqrOptions& o, const MatrixAllocator& out) {
  const MatrixView<const float> at = a.stored;
  const index_t m = at.cols(), n = at.rows();
  require(n >= 1, "A.cols", n, "must be >= 1");
  require(m >= n, "A.rows", m, "must be >= A.cols = " + std::to_string(n));
  require_space(at, b.memory_space(), "A");
  if (!o.form_q) return r_of_row_chunks(b, at, o, out);
  if (!o.q_buffer.empty()) require_shape(o.q_buffer, m, n, "q_buffer");
  Matrix<float> q = o.q_buffer.empty() ? (out ? out : backend_matrices(b))(m, n, "Q") : Matrix<float>(nullptr, o.q_buffer);
  b.transpose(at, q.view());
  TsqrOptions in_q = o;
  in_q.q_buffer = q.view();
  TsqrResult res = tsqr(b, q.view(), in_q, out);
  res.Q = std::move(q);
  return res;
}

TsqrResult tsqr(Backend& b, MatrixView<const float> a, const TsqrOptions& o, const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols();
  require(n >= 1, "A.cols", n, "must be >= 1");
  require(m >= n, "A.rows", m, "must be >= A.cols = " + std::to_string(n));
  require_space(a, b.memory_space(), "A");
  TsqrResult res;
  BlockwiseTsqrOps generic(b);
  std::unique_ptr<TsqrOps> variant;
  TsqrOps& ops = blocks_for(b, o.arithmetic, generic, variant, res.report);
  require(o.panel_columns >= 0 && o.panel_columns <= ops.max_columns(), "panel_columns", o.panel_columns,
          "must be in [0, " + std::to_string(ops.max_columns()) + "], the widest block this backend factors");
  const index_t width = std::min(n, o.panel_columns > 0 ? o.panel_columns : ops.max_columns());
  require(o.leaf_rows == 0 || (o.leaf_rows >= width && o.leaf_rows <= ops.max_block_rows(width)), "leaf_rows",
          o.leaf_rows,
          "must be 0 or in [" + std::to_string(width) + ", " + std::to_string(ops.max_block_rows(width)) +
              "]: from the block's columns to the most rows this backend factors in one block");
  if (!o.q_buffer.empty()) {
    require_shape(o.q_buffer, m, n, "q_buffer");
    require_space(o.q_buffer, b.memory_space(), "q_buffer");
  }
  res.report.backend = b.description();
  res.report.panels = (n + width - 1) / width;
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  // Blocks of at least 2 width rows, so that each level shrinks the stack at least by half.
  const index_t leaf = std::min(std::max(o.leaf_rows > 0 ? o.leaf_rows : ops.preferred_block_rows(width), 2 * width),
                                ops.max_block_rows(width));
  Tree t{b, ops, leaf, o.form_q || width < n, res.report};
  res.R = outputs(n, n, "R");
  MatrixView<float> q;
  Matrix<float> own_q;
  if (o.form_q) {
    if (o.q_buffer.empty()) own_q = outputs(m, n, "Q"), q = own_q.view();
    else q = o.q_buffer;
  } else if (width < n) {
    own_q = Matrix<float>(b, m, n, "panels"), q = own_q.view();
  }
  if (width == n) {
    tree_qr(t, a, q, res.R.view(), 0);
  } else {
    if (q.data() != a.data()) b.copy(a, q);
    panel_qr(t, q, res.R.view(), width);
  }
  if (o.form_q) res.Q = o.q_buffer.empty() ? std::move(own_q) : Matrix<float>(nullptr, o.q_buffer);
  return res;
}

}  // namespace randnla
