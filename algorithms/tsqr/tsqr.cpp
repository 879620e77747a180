// Tall-skinny QR by a reduction tree (tsqr.hpp).
#include "tsqr/tsqr.hpp"

#include <algorithm>
#include <vector>

namespace randnla {
namespace {

/// r (n x n) := the upper triangle of f's top n x n block (geqrf's R), zeros below: the zeroing on
/// the host, since r is small.
void upper_triangle(Backend& b, MatrixView<const float> f, MatrixView<float> r) {
  const index_t n = r.rows();
  std::vector<float> h(static_cast<std::size_t>(n * n));
  const MatrixView<float> hv(h.data(), n, n, n, MemorySpace::Host);
  b.copy(f.block(0, 0, n, n), hv);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = j + 1; i < n; ++i) h[static_cast<std::size_t>(i + j * n)] = 0.0f;
  b.copy(MatrixView<const float>(hv), r);
}

struct Tree {
  Backend& b;
  index_t leaf;
  bool form_q;
  TsqrReport& report;
};

/// Householder QR of a (rows <= leaf): R into r; with form_q, the thin Q into q.
void leaf_qr(Tree& t, MatrixView<const float> a, MatrixView<float> q, MatrixView<float> r) {
  Matrix<float> work(t.b, a.rows(), a.cols(), "leaf"), tau(t.b, a.cols(), 1, "tau");
  t.b.copy(a, work.view());
  t.b.qr(work.view(), tau.view());
  upper_triangle(t.b, work.view(), r);
  if (!t.form_q) return;
  t.b.form_q(work.view(), tau.view());
  t.b.copy(MatrixView<const float>(work.view()), q);
}

/// One level: A's row blocks factored as leaves, their R factors stacked and factored by the next
/// level; Q := diag(Q_i) Q_stack. `level` counts from the bottom.
void tree_qr(Tree& t, MatrixView<const float> a, MatrixView<float> q, MatrixView<float> r, int level) {
  const index_t m = a.rows(), n = a.cols();
  t.report.levels = std::max(t.report.levels, level + 1);
  if (m <= t.leaf) return leaf_qr(t, a, q, r);
  const index_t blocks = (m + t.leaf - 1) / t.leaf;
  if (level == 0) t.report.leaves = blocks;
  Matrix<float> stacked(t.b, blocks * n, n, "stacked R"), leaves;
  if (t.form_q) leaves = Matrix<float>(t.b, m, n, "leaf Q");
  for (index_t i = 0; i < blocks; ++i) {
    const index_t r0 = i * t.leaf, rows = std::min(t.leaf, m - r0);
    leaf_qr(t, a.block(r0, 0, rows, n), t.form_q ? leaves.view().block(r0, 0, rows, n) : MatrixView<float>(),
            stacked.view().block(i * n, 0, n, n));
  }
  Matrix<float> q_stack;
  if (t.form_q) q_stack = Matrix<float>(t.b, blocks * n, n, "stack Q");
  tree_qr(t, stacked, q_stack.view(), r, level + 1);
  if (!t.form_q) return;
  for (index_t i = 0; i < blocks; ++i) {
    const index_t r0 = i * t.leaf, rows = std::min(t.leaf, m - r0);
    t.b.product(Op::N, Op::N, 1.0f, MatrixView<const float>(leaves.view().block(r0, 0, rows, n)),
                MatrixView<const float>(q_stack.view().block(i * n, 0, n, n)), 0.0f, q.block(r0, 0, rows, n),
                ProductPrecision::fp32());
  }
}

}  // namespace

TsqrResult tsqr(Backend& b, MatrixView<const float> a, const TsqrOptions& o, const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols();
  require(n >= 1, "A.cols", n, "must be >= 1");
  require(m >= n, "A.rows", m, "must be >= A.cols = " + std::to_string(n));
  require(o.leaf_rows == 0 || o.leaf_rows >= n, "leaf_rows", o.leaf_rows, "must be 0 or >= A.cols = " + std::to_string(n));
  require_space(a, b.memory_space(), "A");
  if (!o.q_buffer.empty()) {
    require_shape(o.q_buffer, m, n, "q_buffer");
    require_space(o.q_buffer, b.memory_space(), "q_buffer");
  }
  TsqrResult res;
  res.report.backend = b.description();
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  // Leaves of at least 2n rows, so that each level shrinks the stack at least by half.
  Tree t{b, o.leaf_rows > 0 ? std::max(o.leaf_rows, 2 * n) : std::max<index_t>(4 * n, 512), o.form_q, res.report};
  res.R = outputs(n, n, "R");
  MatrixView<float> q;
  Matrix<float> own;
  if (o.form_q) {
    if (o.q_buffer.empty()) own = outputs(m, n, "Q"), q = own.view();
    else q = o.q_buffer;
  }
  // With Q written over A, the leaves read A before any Q block is written: the level's products
  // come after all of its leaves (tree_qr), and a single leaf copies A first.
  tree_qr(t, a, q, res.R.view(), 0);
  if (o.form_q) res.Q = o.q_buffer.empty() ? std::move(own) : Matrix<float>(nullptr, o.q_buffer);
  return res;
}

}  // namespace randnla
