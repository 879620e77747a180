#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "randnla/common/checks.hpp"
#include "randnla/common/precision_policy.hpp"
#include "randnla/common/range_finder.hpp"
#include "distributed.hpp"
#include "randnla/distributed/cholesky_qr2_rows.hpp"
#include "randnla/rsvd/svd_through_gram.hpp"

namespace randnla {
namespace {

/// This rank's rows A_i (m_i x n) as stored: A_i itself (op N) or, row-major, A_i^T column-major
/// (op T), read in place either way.
struct RowBlock {
  MatrixView<const float> stored;
  Op op;
  index_t rows() const { return op == Op::N ? stored.rows() : stored.cols(); }
  index_t cols() const { return op == Op::N ? stored.cols() : stored.rows(); }
};

/// The checks every rank makes together, before any other collective.
void require_distributed_rsvd_arguments(Backend& b, Communicator& comm, const RowBlock& a, index_t k,
                                        const RsvdOptions& o) {
  require_same_on_every_rank(comm, {{"A.cols", a.cols()},
                                    {"k", k},
                                    {"oversampling", o.oversampling},
                                    {"power_iterations", o.power_iterations},
                                    {"seed", static_cast<std::int64_t>(o.seed)}});
  require_on_every_rank(comm, a.rows() >= 1, "A.rows", a.rows(), "must be >= 1 on every rank (each rank holds its own rows)");
  const std::int64_t bad = a.stored.empty() ? 0 : b.exponent_histogram(a.stored).nonfinite();
  require_on_every_rank(comm, bad == 0, "A (non-finite entries)", bad, "must be finite on every rank");
  std::int64_t total = 0;
  for (std::int64_t rows : comm.allgather({a.rows()})) total += rows;
  require_rank_arguments(total, a.cols(), k, o.oversampling, o.power_iterations);
  require(o.sketch_operator == SketchOperator::Gaussian, "sketch_operator", to_string(o.sketch_operator),
          "must be gaussian for the distributed RSVD");
}

/// A distributed by rows: this rank holds A_i, every rank the whole of any n x l block.
class RowDistributedOperator final : public DenseOperator {
 public:
  RowDistributedOperator(Products& prod, Communicator& comm, const RowBlock& a, DistributedReport& rep)
      : DenseOperator(prod, a.stored, a.op, /*checked=*/true), comm_(comm), rep_(rep) {}

  /// Z := A^T Y = sum over the ranks of A_i^T Y_i (n x l on every rank).
  Matrix<float> apply_transpose(MatrixView<const float> y) override {
    Matrix<float> z = DenseOperator::apply_transpose(y);
    comm_.allreduce_sum(b_, z.view());
    rep_.words_sent += static_cast<double>(z.rows() * z.cols());
    return z;
  }
  /// Y_i := this rank's rows of the orthonormal basis of Y: CholeskyQR2 over the ranks (two sums of
  /// l^2 words: rsvd()'s CholeskyQR in FP64), or the direct TSQR where Y is too ill-conditioned
  /// for it (every rank sees the same Gram matrix, so every rank breaks down together and none
  /// waits). `method` is not used: these two are the distributed orthonormalisers.
  std::string orthonormalize_range(MatrixView<float> y, Orthonormalizer) override {
    try {
      orthonormalize_rows_by_cholesky_qr2(b_, comm_, y, rep_);
      return "cholesky-qr2 (distributed)";
    } catch (const NumericalBreakdown&) {
      const DistributedQrResult t = distributed_tsqr(b_, comm_, y);
      rep_.words_sent += t.report.words_sent;
      b_.copy(t.Q.view(), y);
      return "tsqr (distributed)";
    }
  }

 private:
  Communicator& comm_;
  DistributedReport& rep_;
};

/// The leading k of the small SVD of B^T (n x l, summed on every rank): U_i = Q_i Uhat(:, 1:k) on
/// this rank, S and V the same on every rank; made by `outputs`.
void assemble(Backend& b, Products& prod, MatrixView<const float> bt, MatrixView<const float> q, index_t k,
              const MatrixAllocator& outputs, DistributedRsvdResult& res) {
  const index_t n = bt.rows(), l = bt.cols();
  Matrix<float> uhat(b, l, l, "Uhat"), s(b, l, 1, "S"), v(b, n, l, "V");
  res.report.orthonormalizers.push_back(to_string(svd_through_gram(b, bt, v, s, uhat)));
  res.U = outputs(q.rows(), k, "U");
  prod.gemm(Op::N, Op::N, 1.0f, q, MatrixView<const float>(uhat.view()).block(0, 0, l, k), 0.0f, res.U);
  res.S = outputs(k, 1, "S");
  b.copy(MatrixView<const float>(s.view()).block(0, 0, k, 1), res.S.view());
  res.V = outputs(n, k, "V");
  b.copy(MatrixView<const float>(v.view()).block(0, 0, n, k), res.V.view());
}

DistributedRsvdResult rsvd_of_rows(Backend& b, Communicator& comm, const RowBlock& a, index_t k, const RsvdOptions& o,
                                   const MatrixAllocator& out) {
  require_space(a.stored, b.memory_space(), "A");
  require_distributed_rsvd_arguments(b, comm, a, k, o);
  DistributedRsvdResult res;
  res.distribution.transport = comm.transport();
  res.distribution.ranks = comm.size();
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b, &rep.phases, o.progress);
  Products prod(b, o.products);
  RowDistributedOperator op(prod, comm, a, res.distribution);
  RangeFinder range(op, &clock, rep.orthonormalizers);
  // The same Omega as rsvd() draws, on every rank: no communication.
  const Matrix<float> y = range.basis(sketch_columns(k, o.oversampling), range_options(o), RngState{o.seed, 0},
                                      &rep.sketch_kernel);
  const Matrix<float> bt = op.apply_transpose(y);  // B^T = A^T Q
  clock.lap("Q^T A");
  assemble(b, prod, bt, y, k, out ? out : backend_matrices(b), res);
  clock.lap("small SVD, U = Q Uhat");
  clock.finish();
  return res;
}

/// The fixed-accuracy checks every rank makes together; returns the total rows.
std::int64_t require_fixed_accuracy_arguments(Backend& b, Communicator& comm, const RowBlock& a,
                                              const FixedAccuracyOptions& o) {
  std::int64_t tolerance_bits = 0;
  static_assert(sizeof(tolerance_bits) == sizeof(o.tolerance), "a double in 64 bits");
  std::memcpy(&tolerance_bits, &o.tolerance, sizeof(o.tolerance));
  require_same_on_every_rank(comm, {{"A.cols", a.cols()},
                                    {"tolerance (its bits)", tolerance_bits},
                                    {"block_size", o.block_size},
                                    {"max_rank", o.max_rank},
                                    {"power_iterations", o.power_iterations},
                                    {"seed", static_cast<std::int64_t>(o.seed)}});
  require_on_every_rank(comm, a.rows() >= 1, "A.rows", a.rows(), "must be >= 1 on every rank (each rank holds its own rows)");
  const std::int64_t bad = b.exponent_histogram(a.stored).nonfinite();
  require_on_every_rank(comm, bad == 0, "A (non-finite entries)", bad, "must be finite on every rank");
  std::int64_t total = 0;
  for (std::int64_t rows : comm.allgather({a.rows()})) total += rows;
  require(o.tolerance > 0.0 && o.tolerance < 1.0, "tolerance", o.tolerance, "must lie in (0, 1)");
  require(o.block_size > 0, "block_size", o.block_size, "must be > 0");
  require(o.power_iterations >= 0, "power_iterations", o.power_iterations, "must be >= 0");
  const index_t limit = std::min<index_t>(total, a.cols());
  require(o.max_rank < 0 || (o.max_rank > 0 && o.max_rank <= limit), "max_rank", o.max_rank,
          "must be -1 or lie in 1..min(total rows, n) = " + std::to_string(limit));
  return total;
}

/// ||A||_F^2 summed over the ranks.
double squared_norm(Backend& b, Communicator& comm, MatrixView<const float> a) {
  const double mine = b.frobenius_norm(a);
  double sum = mine * mine;
  comm.allreduce_sum(b, MatrixView<double>(&sum, 1, 1, 1, MemorySpace::Host));
  return sum;
}

/// Y_i := Y_i - Q_i C, C = Q^T Y summed over the ranks (block Gram-Schmidt, one pass).
void project_out(Backend& b, Communicator& comm, MatrixView<const float> q, Matrix<float>& y, DistributedReport& rep) {
  Matrix<float> c(b, q.cols(), y.cols(), "C");
  b.product(Op::T, Op::N, 1.0f, q, y, 0.0f, c, ProductPrecision::fp32());
  comm.allreduce_sum(b, c.view());
  rep.words_sent += static_cast<double>(c.rows() * c.cols());
  b.product(Op::N, Op::N, -1.0f, q, c, 1.0f, y, ProductPrecision::fp32());
}

DistributedRsvdResult fixed_accuracy_rsvd_of_rows(Backend& b, Communicator& comm, const RowBlock& a,
                                                  const FixedAccuracyOptions& o, const MatrixAllocator& out) {
  require_space(a.stored, b.memory_space(), "A");
  const std::int64_t total = require_fixed_accuracy_arguments(b, comm, a, o);
  const index_t m = a.rows(), n = a.cols();
  const index_t max_rank = o.max_rank < 0 ? std::min<index_t>(total, n) : o.max_rank;
  DistributedRsvdResult res;
  res.distribution.transport = comm.transport();
  res.distribution.ranks = comm.size();
  RsvdReport& rep = res.report;
  rep.backend = b.description();
  Stopwatch clock(b, &rep.phases, o.progress);
  const double norm2 = squared_norm(b, comm, a.stored);
  Products prod(b, o.products);
  RowDistributedOperator op(prod, comm, a, res.distribution);
  RangeFinder range(op, &clock, rep.orthonormalizers);
  Matrix<float> q(b, m, max_rank, "Q_i"), bt(b, n, max_rank, "B^T");
  double remaining = norm2;  // ||A - Q B||_F^2 = ||A||_F^2 - ||B||_F^2, the same on every rank
  index_t rank = 0;
  RngState state{o.seed, 0};  // the blocks' Omega_i of rsvd_fixed_accuracy, drawn on every rank
  for (int step = 0; rank < max_rank && remaining > o.tolerance * o.tolerance * norm2; ++step) {
    const index_t bs = std::min(o.block_size, max_rank - rank);
    Matrix<float> y(b, m, bs, "Y_i");
    state = range.sketch(state, y.view(), step == 0 ? &rep.sketch_kernel : nullptr);
    range.power_iterations(y.view(), o.power_iterations, Orthonormalizer::Auto);
    for (int pass = 0; pass < 2; ++pass) {  // block Gram-Schmidt against Q, twice is enough
      if (rank > 0) project_out(b, comm, MatrixView<const float>(q.view()).block(0, 0, m, rank), y, res.distribution);
      range.orthonormalize_range(y.view(), Orthonormalizer::Auto);
    }
    clock.lap("orthonormalisation");
    const Matrix<float> bi = op.apply_transpose(y);  // B_i^T = A^T Q_new
    b.copy(bi.view(), bt.view().block(0, rank, n, bs));
    b.copy(y.view(), q.view().block(0, rank, m, bs));
    const double nb = b.frobenius_norm(bi);
    remaining -= nb * nb;
    rank += bs;
    clock.lap("Q^T A");
  }
  assemble(b, prod, MatrixView<const float>(bt.view()).block(0, 0, n, rank),
           MatrixView<const float>(q.view()).block(0, 0, m, rank), rank, out ? out : backend_matrices(b), res);
  clock.lap("small SVD, U = Q Uhat");
  rep.relative_error_estimate = std::sqrt(std::max(remaining, 0.0)) / (norm2 > 0 ? std::sqrt(norm2) : 1.0);
  clock.finish();
  return res;
}

}  // namespace

DistributedRsvdResult distributed_rsvd(Backend& b, Communicator& comm, MatrixView<const float> a, index_t k,
                                       const RsvdOptions& o, const MatrixAllocator& out) {
  return rsvd_of_rows(b, comm, {a, Op::N}, k, o, out);
}

DistributedRsvdResult distributed_rsvd(Backend& b, Communicator& comm, Transposed<const float> a, index_t k,
                                       const RsvdOptions& o, const MatrixAllocator& out) {
  return rsvd_of_rows(b, comm, {a.stored, Op::T}, k, o, out);
}

DistributedRsvdResult distributed_rsvd_fixed_accuracy(Backend& b, Communicator& comm, MatrixView<const float> a,
                                                      const FixedAccuracyOptions& o, const MatrixAllocator& out) {
  return fixed_accuracy_rsvd_of_rows(b, comm, {a, Op::N}, o, out);
}

DistributedRsvdResult distributed_rsvd_fixed_accuracy(Backend& b, Communicator& comm, Transposed<const float> a,
                                                      const FixedAccuracyOptions& o, const MatrixAllocator& out) {
  return fixed_accuracy_rsvd_of_rows(b, comm, {a.stored, Op::T}, o, out);
}

}  // namespace randnla
