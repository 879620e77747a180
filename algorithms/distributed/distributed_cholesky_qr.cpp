// The sketch-preconditioned CholeskyQR over the ranks (distributed.hpp).
#include <cmath>
#include <vector>

#include "distributed.hpp"
#include "orthonormalize/cholesky_qr_ops.hpp"
#include "orthonormalize/orthonormalize.hpp"
#include "randnla/random_operator.hpp"

namespace randnla {
namespace {

/// The n x n upper triangle of x (FP64, the backend's memory) on the host, zeros below.
std::vector<double> upper_on_host(Backend& b, MatrixView<const double> x) {
  const index_t n = x.cols();
  std::vector<double> h(static_cast<std::size_t>(n * n));
  b.copy(x, MatrixView<double>(h.data(), n, n, n, MemorySpace::Host));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = j + 1; i < n; ++i) h[static_cast<std::size_t>(i + j * n)] = 0.0;
  return h;
}

/// R0: the R of a Householder QR of the sketch Omega^T A = sum over the ranks of Omega_i^T A_i
/// (Omega M x s Gaussian, rows [offset, offset + m_i) on this rank, the single process's Omega),
/// in FP64 with zeros below the diagonal.
Matrix<double> sketch_r(Backend& b, Communicator& comm, MatrixView<const float> a, index_t offset, index_t total,
                        DistributedReport& rep) {
  const index_t m = a.rows(), n = a.cols(), s = std::min(total, 2 * n);
  const RandomOperator omega({total, s, Distribution::Gaussian}, RngState{kPreconditionerSketchSeed, 0});
  Matrix<fp16> omega_i(b, m, s, "Omega_i");
  omega.fill(b, omega_i.view(), offset, 0);
  Matrix<float> sketch_t(b, n, s, "A^T Omega"), sketch(b, s, n, "Omega^T A"), tau(b, n, 1, "tau");
  b.product(Op::T, Op::N, 1.0f, a, omega_i, 0.0f, sketch_t, ProductPrecision::automatic());
  comm.allreduce_sum(b, sketch_t.view());
  rep.words_sent += static_cast<double>(n * s);
  b.transpose(sketch_t, sketch.view());
  b.qr(sketch.view(), tau.view());
  Matrix<double> r0(b, n, n, "R0");
  b.convert(MatrixView<const float>(sketch.view().block(0, 0, n, n)), r0.view());
  const std::vector<double> h = upper_on_host(b, r0);
  b.copy(MatrixView<const double>(h.data(), n, n, n, MemorySpace::Host), r0.view());
  return r0;
}

/// (X Y) for upper triangular n x n X and Y on the host.
std::vector<double> upper_times(const std::vector<double>& x, const std::vector<double>& y, index_t n) {
  std::vector<double> z(static_cast<std::size_t>(n * n), 0.0);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) {
      double sum = 0;
      for (index_t p = i; p <= j; ++p) sum += x[static_cast<std::size_t>(i + p * n)] * y[static_cast<std::size_t>(p + j * n)];
      z[static_cast<std::size_t>(i + j * n)] = sum;
    }
  return z;
}

}  // namespace

DistributedQrResult distributed_rand_cholesky_qr(Backend& b, Communicator& comm, MatrixView<const float> a,
                                                 const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols();
  const std::vector<std::int64_t> rows = require_distributed_qr_arguments(comm, a);
  const std::int64_t bad = b.exponent_histogram(a).nonfinite();
  require_on_every_rank(comm, bad == 0, "A (non-finite entries)", bad, "must be finite on every rank");
  std::int64_t total = 0, offset = 0;
  for (int r = 0; r < comm.size(); ++r) total += rows[r], offset += r < comm.rank() ? rows[r] : 0;
  require_space(a, b.memory_space(), "A");

  DistributedQrResult res;
  res.report.transport = comm.transport();
  res.report.ranks = comm.size();
  const Matrix<double> r0 = sketch_r(b, comm, a, offset, total, res.report);
  // Z_i = A_i R0^{-1}: well conditioned over all ranks (the sketch embeds range(A) with distortion O(1)).
  Matrix<double> z(b, m, n, "Z_i"), g(b, n, n, "G"), d(b, n, 1, "D"), rinv(b, n, n, "R^-1");
  b.convert(a, z.view());
  b.triangular_solve(Side::Right, Op::N, 1.0, r0, z.view());
  b.product(Op::T, Op::N, 1.0, z, z, 0.0, g);
  comm.allreduce_sum(b, g.view());  // the same G on every rank: a breakdown is every rank's
  res.report.words_sent += static_cast<double>(n * n);
  b.ops<CholeskyQrOps>().equilibrate(g.view(), d.view());
  if (b.cholesky(g.view()) != 0)
    throw NumericalBreakdown("distributed_rand_cholesky_qr: the preconditioned Gram matrix is not positive definite "
                             "(A is rank deficient or too ill-conditioned for the sketch); use distributed_tsqr");
  b.scale(0.0, rinv.view());
  b.add_to_diagonal(rinv.view(), 1.0);
  b.triangular_solve(Side::Left, Op::N, 1.0, g, rinv.view());
  b.scale_rows(d, rinv.view());  // R^{-1} = D R'^{-1}, R'^T R' = D G D
  Matrix<double> q(b, m, n, "Q_i");
  b.product(Op::N, Op::N, 1.0, z, rinv, 0.0, q);
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  res.Q = outputs(m, n, "Q");
  b.convert(q, res.Q.view());
  // R = R' D^{-1} R0 (upper triangular): A = Z R0 = Q R' D^{-1} R0.
  std::vector<double> rp = upper_on_host(b, g), dh(static_cast<std::size_t>(n));
  b.copy(MatrixView<const double>(d), MatrixView<double>(dh.data(), n, 1, n, MemorySpace::Host));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) rp[static_cast<std::size_t>(i + j * n)] /= dh[static_cast<std::size_t>(j)];
  const std::vector<double> r = upper_times(rp, upper_on_host(b, r0), n);
  std::vector<float> r32(r.begin(), r.end());
  res.R = outputs(n, n, "R");
  b.copy(MatrixView<const float>(r32.data(), n, n, n, MemorySpace::Host), res.R.view());
  return res;
}

}  // namespace randnla
