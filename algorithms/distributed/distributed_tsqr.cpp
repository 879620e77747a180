// The direct TSQR over the ranks (distributed.hpp).
#include <algorithm>

#include "distributed.hpp"
#include "randnla/report.hpp"

namespace randnla {

DistributedQrResult distributed_tsqr(Backend& b, Communicator& comm, MatrixView<const float> a,
                                     const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols(), ranks = comm.size(), me = comm.rank();
  require_distributed_qr_arguments(comm, a);
  require_space(a, b.memory_space(), "A");

  DistributedQrResult res;
  res.report.transport = comm.transport();
  res.report.ranks = comm.size();
  Stopwatch clock(b, &res.report.phases);
  // This rank's rows, padded with zero rows to at least n (its R is then that of its rows).
  Matrix<float> padded(b, std::max(m, n), n, "A_i");
  b.scale(0.0f, padded.view());
  b.copy(a, padded.view().block(0, 0, m, n));
  const TsqrResult local = tsqr(b, padded);
  clock.lap("local tsqr");
  // Each rank's R in its own n rows of the (P n) x n stack, zeros elsewhere: one sum puts the
  // whole stack on every rank, in a single step whatever P (a tree takes log2 P of them).
  Matrix<float> stack(b, ranks * n, n, "stacked R");
  b.scale(0.0f, stack.view());
  b.copy(MatrixView<const float>(local.R.view()), stack.view().block(me * n, 0, n, n));
  comm.allreduce_sum(b, stack.view());
  res.report.words_sent += static_cast<double>(ranks * n * n);
  clock.lap("R factors to every rank");
  const TsqrResult top = tsqr(b, stack);
  clock.lap("QR of the stacked R");
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  res.Q = outputs(m, n, "Q");  // A is read in full: `out` may hand back A's own memory (row_major_qr.cpp)
  b.product(Op::N, Op::N, 1.0f, MatrixView<const float>(local.Q.view()).block(0, 0, m, n),
            MatrixView<const float>(top.Q.view()).block(me * n, 0, n, n), 0.0f, res.Q, ProductPrecision::fp32());
  res.R = outputs(n, n, "R");
  b.copy(top.R.view(), res.R.view());
  comm.broadcast(b, res.R.view(), 0);  // bitwise the same R on every rank, also on unlike devices
  res.report.words_sent += static_cast<double>(n * n);
  clock.lap("Q_i = Q_local Q_stack,i");
  clock.finish();
  return res;
}

}  // namespace randnla
