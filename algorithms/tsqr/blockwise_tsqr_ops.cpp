// One Householder QR and one product per block (blockwise_tsqr_ops.hpp).
#include "randnla/tsqr/blockwise_tsqr_ops.hpp"

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

}  // namespace

void BlockwiseTsqrOps::do_factor_blocks(MatrixView<const float> a, index_t blocks, MatrixView<float> q,
                                        MatrixView<float> r_stack) {
  const index_t m = a.rows(), n = a.cols();
  for (index_t i = 0; i < blocks; ++i) {
    const index_t r0 = tsqr_block_start(i, m, blocks), rows = tsqr_block_start(i + 1, m, blocks) - r0;
    Matrix<float> work(b_, rows, n, "block"), tau(b_, n, 1, "tau");
    b_.copy(a.block(r0, 0, rows, n), work.view());
    b_.qr(work.view(), tau.view());
    upper_triangle(b_, work.view(), r_stack.block(i * n, 0, n, n));
    if (q.empty()) continue;
    b_.form_q(work.view(), tau.view());
    b_.copy(MatrixView<const float>(work.view()), q.block(r0, 0, rows, n));
  }
}

void BlockwiseTsqrOps::do_multiply_blocks(MatrixView<float> q, index_t blocks, MatrixView<const float> s_stack) {
  const index_t m = q.rows(), n = q.cols();
  for (index_t i = 0; i < blocks; ++i) {
    const index_t r0 = tsqr_block_start(i, m, blocks), rows = tsqr_block_start(i + 1, m, blocks) - r0;
    Matrix<float> qi(b_, rows, n, "block Q");
    b_.copy(MatrixView<const float>(q.block(r0, 0, rows, n)), qi.view());
    b_.product(Op::N, Op::N, 1.0f, MatrixView<const float>(qi.view()), s_stack.block(i * n, 0, n, n), 0.0f,
               q.block(r0, 0, rows, n), ProductPrecision::fp32());
  }
}

}  // namespace randnla
