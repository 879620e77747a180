// The CholeskyQR factorisations over the ranks (distributed.hpp): CholeskyQR2 and the
// sketch-preconditioned CholeskyQR, both one FP64 CholeskyQR pass at a time.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "distributed.hpp"
#include "randnla/distributed/cholesky_qr2_rows.hpp"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/random_operator.hpp"
#include "randnla/report.hpp"

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

/// A pass's factor, in the backend's memory: R' upper triangular (the Cholesky factor of D G D)
/// and the equilibration D, so that the pass's R = R' D^{-1}.
struct PassFactor {
  Matrix<double> r, d;
};

/// One CholeskyQR pass over the ranks, in FP64: G = sum_i Y_i^T Y_i summed (n^2 words; the same G
/// on every rank, so a breakdown is every rank's), equilibrated, D G D = R'^T R', and Y_i :=
/// Y_i D R'^{-1}. Throws NumericalBreakdown, naming `who`, on every rank when G is not positive
/// definite. One wait for the device (the Cholesky factorisation's status).
PassFactor cholesky_pass(Backend& b, Communicator& comm, Matrix<double>& y, DistributedReport& rep,
                         const std::string& who) {
  const index_t n = y.cols();
  PassFactor f{Matrix<double>(b, n, n, "G"), Matrix<double>(b, n, 1, "D")};
  b.product(Op::T, Op::N, 1.0, y, y, 0.0, f.r);
  comm.allreduce_sum(b, f.r.view());
  rep.words_sent += static_cast<double>(n * n);
  b.ops<CholeskyQrOps>().equilibrate(f.r.view(), f.d.view());
  if (b.cholesky(f.r.view()) != 0)
    throw NumericalBreakdown(who + ": the Gram matrix summed over the ranks is not positive definite (A is rank "
                                   "deficient or too ill-conditioned); distributed_tsqr factors it");
  Matrix<double> rinv(b, n, n, "R^-1");
  b.scale(0.0, rinv.view());
  b.add_to_diagonal(rinv.view(), 1.0);
  b.triangular_solve(Side::Left, Op::N, 1.0, f.r, rinv.view());
  b.scale_rows(f.d, rinv.view());  // R^{-1} = D R'^{-1}
  Matrix<double> q(b, y.rows(), n, "Q_i");
  b.product(Op::N, Op::N, 1.0, y, rinv, 0.0, q);
  y = std::move(q);
  return f;
}

/// A pass's R = R' D^{-1} on the host (upper triangular, Y_before = Y_after R).
std::vector<double> r_of(Backend& b, const PassFactor& f) {
  const index_t n = f.d.rows();
  std::vector<double> r = upper_on_host(b, f.r), d(static_cast<std::size_t>(n));
  b.copy(MatrixView<const double>(f.d), MatrixView<double>(d.data(), n, 1, n, MemorySpace::Host));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) r[static_cast<std::size_t>(i + j * n)] /= d[static_cast<std::size_t>(j)];
  return r;
}

/// CholeskyQR2's two passes on Y (FP64, this rank's rows), then the check orthonormalize()'s
/// CholeskyQR makes: an orthonormal Q has ||Q||_F^2 = n, and a Cholesky factorisation that passed
/// on a numerically singular G leaves a far larger one. Throws NumericalBreakdown on every rank.
std::pair<PassFactor, PassFactor> cholesky_qr2_passes(Backend& b, Communicator& comm, Matrix<double>& y,
                                                      DistributedReport& rep) {
  const std::string who = "distributed_cholesky_qr2";
  PassFactor first = cholesky_pass(b, comm, y, rep, who);
  PassFactor second = cholesky_pass(b, comm, y, rep, who);
  const double norm = b.frobenius_norm(y);
  double squares = norm * norm;
  comm.allreduce_sum(b, MatrixView<double>(&squares, 1, 1, 1, MemorySpace::Host));
  if (!(squares <= 4.0 * static_cast<double>(y.cols())))
    throw NumericalBreakdown(who + ": ||Q||_F^2 = " + std::to_string(squares) + " for " + std::to_string(y.cols()) +
                             " columns (A too ill-conditioned); distributed_tsqr factors it");
  return {std::move(first), std::move(second)};
}

/// The checks both CholeskyQR variants make, every rank together; returns this rank's first row
/// and the total rows.
std::pair<std::int64_t, std::int64_t> require_cholesky_qr_arguments(Backend& b, Communicator& comm,
                                                                    MatrixView<const float> a) {
  const std::vector<std::int64_t> rows = require_distributed_qr_arguments(comm, a);
  const std::int64_t bad = b.exponent_histogram(a).nonfinite();
  require_on_every_rank(comm, bad == 0, "A (non-finite entries)", bad, "must be finite on every rank");
  require_space(a, b.memory_space(), "A");
  std::int64_t total = 0, offset = 0;
  for (int r = 0; r < comm.size(); ++r) total += rows[r], offset += r < comm.rank() ? rows[r] : 0;
  return {offset, total};
}

/// Q (made by `out`, FP32) and R (FP32, the same on every rank) from the FP64 Q_i and R. Called once
/// A is read in full: `out` may hand back A's own memory as Q (row_major_qr.cpp).
void write_factors(Backend& b, MatrixView<const double> q, const std::vector<double>& r, const MatrixAllocator& out,
                   DistributedQrResult& res) {
  const index_t n = q.cols();
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  res.Q = outputs(q.rows(), n, "Q");
  b.convert(q, res.Q.view());
  const std::vector<float> r32(r.begin(), r.end());
  res.R = outputs(n, n, "R");
  b.copy(MatrixView<const float>(r32.data(), n, n, n, MemorySpace::Host), res.R.view());
}

}  // namespace

DistributedQrResult distributed_rand_cholesky_qr(Backend& b, Communicator& comm, MatrixView<const float> a,
                                                 const MatrixAllocator& out) {
  const auto [offset, total] = require_cholesky_qr_arguments(b, comm, a);
  DistributedQrResult res;
  res.report.transport = comm.transport();
  res.report.ranks = comm.size();
  Stopwatch clock(b, &res.report.phases);
  const Matrix<double> r0 = sketch_r(b, comm, a, offset, total, res.report);
  clock.lap("sketch and its R0");
  // Z_i = A_i R0^{-1}: well conditioned over all ranks (the sketch embeds range(A) with distortion O(1)).
  Matrix<double> z(b, a.rows(), a.cols(), "Z_i");
  b.convert(a, z.view());
  b.triangular_solve(Side::Right, Op::N, 1.0, r0, z.view());
  clock.lap("Z = A R0^-1");
  const PassFactor pass = cholesky_pass(b, comm, z, res.report, "distributed_rand_cholesky_qr");
  clock.lap("CholeskyQR pass");
  write_factors(b, z, upper_times(r_of(b, pass), upper_on_host(b, r0), a.cols()), out, res);  // A = Z R0 = Q R1 R0
  clock.lap("Q and R");
  clock.finish();
  return res;
}

DistributedQrResult distributed_cholesky_qr2(Backend& b, Communicator& comm, MatrixView<const float> a,
                                             const MatrixAllocator& out) {
  require_cholesky_qr_arguments(b, comm, a);
  DistributedQrResult res;
  res.report.transport = comm.transport();
  res.report.ranks = comm.size();
  Stopwatch clock(b, &res.report.phases);
  Matrix<double> y(b, a.rows(), a.cols(), "Y_i");
  b.convert(a, y.view());
  const auto [first, second] = cholesky_qr2_passes(b, comm, y, res.report);
  clock.lap("CholeskyQR passes");
  write_factors(b, y, upper_times(r_of(b, second), r_of(b, first), a.cols()), out, res);  // A = Q1 R1 = Q R2 R1
  clock.lap("Q and R");
  clock.finish();
  return res;
}

void orthonormalize_rows_by_cholesky_qr2(Backend& b, Communicator& comm, MatrixView<float> y, DistributedReport& rep) {
  Matrix<double> yd(b, y.rows(), y.cols(), "Y_i");
  b.convert(MatrixView<const float>(y), yd.view());
  cholesky_qr2_passes(b, comm, yd, rep);
  b.convert(MatrixView<const double>(yd.view()), y);
}

}  // namespace randnla
