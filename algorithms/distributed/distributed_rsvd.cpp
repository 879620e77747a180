#include <algorithm>

#include "common/checks.hpp"
#include "common/precision_policy.hpp"
#include "distributed.hpp"
#include "rsvd/svd_through_gram.hpp"

namespace randnla {
namespace {

/// The checks every rank makes together, before any other collective.
void require_distributed_rsvd_arguments(Backend& b, Communicator& comm, MatrixView<const float> a, index_t k,
                                        const RsvdOptions& o) {
  require_same_on_every_rank(comm, {{"A.cols", a.cols()},
                                    {"k", k},
                                    {"oversampling", o.oversampling},
                                    {"power_iterations", o.power_iterations},
                                    {"seed", static_cast<std::int64_t>(o.seed)}});
  require_on_every_rank(comm, a.rows() >= 1, "A.rows", a.rows(), "must be >= 1 on every rank (each rank holds its own rows)");
  const std::int64_t bad = a.empty() ? 0 : b.exponent_histogram(a).nonfinite();
  require_on_every_rank(comm, bad == 0, "A (non-finite entries)", bad, "must be finite on every rank");
  std::int64_t total = 0;
  for (std::int64_t rows : comm.allgather({a.rows()})) total += rows;
  require_rank_arguments(total, a.cols(), k, o.oversampling, o.power_iterations);
  require(o.sketch_operator == SketchOperator::Gaussian, "sketch_operator", to_string(o.sketch_operator),
          "must be gaussian for the distributed RSVD");
}

/// Q_i := this rank's rows of the orthonormal basis of Y (distributed_tsqr), written over Y_i.
void orthonormalize_rows(Backend& b, Communicator& comm, Matrix<float>& y, DistributedReport& rep) {
  DistributedQrResult t = distributed_tsqr(b, comm, y);
  rep.words_sent += t.report.words_sent;
  rep.tree_levels = t.report.tree_levels;
  y = std::move(t.Q);
}

/// Z := A^T Q = sum over the ranks of A_i^T Q_i (n x l on every rank).
Matrix<float> transpose_times(Backend& b, Communicator& comm, Products& prod, MatrixView<const float> a,
                              const Matrix<float>& q, DistributedReport& rep) {
  Matrix<float> z(b, a.cols(), q.cols(), "A^T Q");
  prod.gemm(Op::T, Op::N, 1.0f, a, q, 0.0f, z);
  comm.allreduce_sum(b, z.view());
  rep.words_sent += static_cast<double>(z.rows() * z.cols());
  return z;
}

}  // namespace

DistributedRsvdResult distributed_rsvd(Backend& b, Communicator& comm, MatrixView<const float> a, index_t k,
                                       const RsvdOptions& o, const MatrixAllocator& out) {
  require_space(a, b.memory_space(), "A");
  require_distributed_rsvd_arguments(b, comm, a, k, o);
  DistributedRsvdResult res;
  res.distribution.transport = comm.transport();
  res.distribution.ranks = comm.size();
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b, &rep.phases, o.progress);
  const index_t n = a.cols(), l = k + o.oversampling;
  Products prod(b, o.sketch);
  Matrix<float> y(b, a.rows(), l, "Y");
  const RandomOperator omega(RandomDistribution{n, l, Distribution::Gaussian}, RngState{o.seed, 0});
  prod.sketch(a, omega, y, &rep.sketch_kernel);  // the same Omega as rsvd() draws: no communication
  clock.lap("projection");
  for (int it = 0; it < o.power_iterations; ++it) {
    orthonormalize_rows(b, comm, y, res.distribution);
    Matrix<float> z = transpose_times(b, comm, prod, a, y, res.distribution);
    rep.orthonormalizers.push_back(to_string(orthonormalize(b, z.view(), Orthonormalizer::Auto)));
    y = Matrix<float>(b, a.rows(), l, "Y");
    prod.gemm(Op::N, Op::N, 1.0f, a, z, 0.0f, y);
    clock.lap("projection");
  }
  orthonormalize_rows(b, comm, y, res.distribution);
  rep.orthonormalizers.push_back("tsqr (distributed)");
  clock.lap("orthonormalisation");
  const Matrix<float> bt = transpose_times(b, comm, prod, a, y, res.distribution);  // B^T = A^T Q
  clock.lap("Q^T A");
  Matrix<float> uhat(b, l, l, "Uhat"), s(b, l, 1, "S"), v(b, n, l, "V");
  rep.orthonormalizers.push_back(to_string(svd_through_gram(b, bt, v, s, uhat)));
  clock.lap("small SVD");
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  res.U = outputs(a.rows(), k, "U");
  prod.gemm(Op::N, Op::N, 1.0f, y, MatrixView<const float>(uhat.view()).block(0, 0, l, k), 0.0f, res.U);
  res.S = outputs(k, 1, "S");
  b.copy(MatrixView<const float>(s.view()).block(0, 0, k, 1), res.S.view());
  res.V = outputs(n, k, "V");
  b.copy(MatrixView<const float>(v.view()).block(0, 0, n, k), res.V.view());
  clock.lap("U = Q Uhat");
  return res;
}

}  // namespace randnla
