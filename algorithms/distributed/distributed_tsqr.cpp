#include <algorithm>
#include <vector>

#include "distributed.hpp"
#include "randnla/report.hpp"

namespace randnla {
namespace {

/// A merge of the tree: this rank stacked its R over `child`'s and kept the stack's Q (2n x n).
struct Merge {
  int child;
  Matrix<float> q;
};

/// The R factors up the tree: at level s, rank r (a multiple of 2s) takes r + s's R, factors
/// [R_r; R_{r+s}] = Q_stack R and keeps Q_stack; rank r + s sends and leaves the tree. Returns the
/// rank this one sent its R to (-1 for rank 0, which ends with the whole R).
int up_the_tree(Backend& b, Communicator& comm, Matrix<float>& r, std::vector<Merge>& merges, DistributedReport& rep) {
  const index_t n = r.rows();
  const int me = comm.rank(), ranks = comm.size();
  for (int s = 1; s < ranks; s *= 2) {
    if (me % (2 * s) == s) {
      comm.send(b, r, me - s);
      rep.words_sent += static_cast<double>(n * n);
      return me - s;
    }
    if (me + s >= ranks) continue;
    Matrix<float> stack(b, 2 * n, n, "stacked R");
    b.copy(MatrixView<const float>(r), stack.view().block(0, 0, n, n));
    comm.receive(b, stack.view().block(n, 0, n, n), me + s);
    TsqrResult f = tsqr(b, stack);
    merges.push_back({me + s, std::move(f.Q)});
    r = std::move(f.R);
  }
  return -1;
}

/// C (n x n): the block of the tree's Q that multiplies this rank's local Q: I at rank 0, else
/// received from the parent; each merge, newest first, splits [C_top; C_child] = Q_stack C and
/// sends C_child down.
Matrix<float> down_the_tree(Backend& b, Communicator& comm, int parent, index_t n, std::vector<Merge>& merges,
                            DistributedReport& rep) {
  Matrix<float> c(b, n, n, "C");
  if (parent < 0) {
    std::vector<float> eye(static_cast<std::size_t>(n * n), 0.0f);
    for (index_t i = 0; i < n; ++i) eye[static_cast<std::size_t>(i * n + i)] = 1.0f;
    b.copy(MatrixView<const float>(eye.data(), n, n, n, MemorySpace::Host), c.view());
  } else {
    comm.receive(b, c.view(), parent);
  }
  for (auto m = merges.rbegin(); m != merges.rend(); ++m) {
    Matrix<float> both(b, 2 * n, n, "Q_stack C");
    b.product(Op::N, Op::N, 1.0f, m->q, c, 0.0f, both, ProductPrecision::fp32());
    comm.send(b, MatrixView<const float>(both.view()).block(n, 0, n, n), m->child);
    rep.words_sent += static_cast<double>(n * n);
    b.copy(MatrixView<const float>(both.view()).block(0, 0, n, n), c.view());
  }
  return c;
}

}  // namespace

DistributedQrResult distributed_tsqr(Backend& b, Communicator& comm, MatrixView<const float> a,
                                       const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols();
  require_distributed_qr_arguments(comm, a);
  require_space(a, b.memory_space(), "A");

  DistributedQrResult res;
  res.report.transport = comm.transport();
  res.report.ranks = comm.size();
  for (int s = 1; s < comm.size(); s *= 2) ++res.report.tree_levels;
  // This rank's rows, padded with zero rows to at least n (its R is then that of its rows).
  const index_t rows = std::max(m, n);
  Matrix<float> padded(b, rows, n, "A_i");
  b.scale(0.0f, padded.view());
  b.copy(a, padded.view().block(0, 0, m, n));
  Stopwatch clock(b, &res.report.phases);
  TsqrResult local = tsqr(b, padded);
  clock.lap("local tsqr");
  std::vector<Merge> merges;
  const int parent = up_the_tree(b, comm, local.R, merges, res.report);
  clock.lap("up the tree");
  const Matrix<float> c = down_the_tree(b, comm, parent, n, merges, res.report);
  clock.lap("down the tree");
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  res.Q = outputs(m, n, "Q");
  b.product(Op::N, Op::N, 1.0f, MatrixView<const float>(local.Q.view()).block(0, 0, m, n), c, 0.0f, res.Q,
            ProductPrecision::fp32());
  res.R = outputs(n, n, "R");
  b.copy(local.R.view(), res.R.view());
  comm.broadcast(b, res.R.view(), 0);
  res.report.words_sent += static_cast<double>(n * n);
  clock.lap("Q_i = Q_local C, R broadcast");
  return res;
}

}  // namespace randnla
