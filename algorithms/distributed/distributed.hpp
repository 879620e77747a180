// The distributed algorithms: A distributed by rows over the ranks of a Communicator, each rank
// holding its own rows (any split, chosen by the caller), its results for its rows, and the small
// factors on every rank. No rank ever gathers A. Every argument check that involves another
// rank's values is collective and comes first: on bad input every rank throws the same
// InvalidArgument, none waits for the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "randnla/backend.hpp"
#include "randnla/communicator.hpp"
#include "randnla/report.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "randnla/tsqr/tsqr.hpp"

namespace randnla {

/// Throws InvalidArgument on every rank unless every rank passed the same value of each named
/// parameter; the message names the parameter, a disagreeing rank and both values.
void require_same_on_every_rank(Communicator& comm, const std::vector<std::pair<std::string, std::int64_t>>& values);

/// Throws InvalidArgument on every rank unless `ok` holds on every rank; the message names the
/// parameter, the first failing rank and its value.
void require_on_every_rank(Communicator& comm, bool ok, const std::string& name, std::int64_t value,
                           const std::string& requirement);

/// The checks of the distributed QR factorisations, every rank together: the same n >= 1 on every
/// rank, at least one row on each, at least n rows in all. Returns every rank's row count, rank by rank.
std::vector<std::int64_t> require_distributed_qr_arguments(Communicator& comm, MatrixView<const float> a);

/// How a distributed run communicated: the transport, the ranks and this rank's traffic.
struct DistributedReport {
  std::string transport;   ///< Communicator::transport()
  int ranks = 1;           ///< the communicator's size P
  double words_sent = 0;   ///< FP32 words this rank sent or took part in reducing (the cost model's count)
  PhaseReport phases;      ///< this rank's wall time per phase (the QR factorisations' steps)
};

/// A = Q R for A distributed by rows: this rank's rows of Q and the whole R (FP32, column-major,
/// the backend's memory).
struct DistributedQrResult {
  Matrix<float> Q;  ///< this rank's rows of Q (m_i x n), orthonormal columns over all ranks
  Matrix<float> R;  ///< n x n upper triangular, the same on every rank; A = Q R
  DistributedReport report;  ///< the transport, ranks, words sent and phases
};

/// The signature every distributed QR factorisation below shares (for callers that pick one).
using DistributedQr = DistributedQrResult (*)(Backend&, Communicator&, MatrixView<const float>, const MatrixAllocator&);

/// A = Q R for A distributed by rows (this rank's m_i x n rows, FP32, LayoutLeft, the backend's
/// memory) by the direct TSQR (Benson, Gleich & Demmel 2013, "Direct QR factorizations for
/// tall-and-skinny matrices in MapReduce architectures", Alg. Direct TSQR; the one-level case of
/// Demmel, Grigori, Hoemmen & Langou 2012): each rank's rows by tsqr(), every rank's R stacked
/// ((P n) x n) on every rank by one sum, that stack factored by tsqr() on every rank, and
/// Q_i = Q_local times this rank's n x n block of the stack's Q; R broadcast from rank 0, so it is
/// the same on every rank. Any conditioning (Householder throughout). Communication per rank:
/// P n^2 words in one sum plus n^2 in the broadcast, two steps whatever P. A rank may hold fewer
/// rows than n (its rows are padded with zero rows).
/// Throws InvalidArgument on every rank when n differs between ranks, n < 1, a rank holds no
/// rows or the total rows are fewer than n.
DistributedQrResult distributed_tsqr(Backend& backend, Communicator& comm, MatrixView<const float> a,
                                       const MatrixAllocator& outputs = nullptr);

/// A = Q R for A distributed by rows by CholeskyQR2 (Fukaya, Nakatsukasa, Yanagisawa & Yamamoto
/// 2014; Yamamoto, Nakatsukasa, Yanagisawa & Fukaya 2015, Alg. 2) in FP64: each pass sums
/// G = sum_i Y_i^T Y_i over the ranks (n^2 words), equilibrates it, factors it by Cholesky on every
/// rank and forms Y_i := Y_i R^{-1} locally; two passes, no tree, so its time is nearly
/// independent of the rank count. Orthogonality at FP32 level for cond(A) up to about 1e7 (the
/// FP64 Gram matrix holds cond(A)^2 < 1/u); R = R2 R1, upper triangular, the same on every rank.
/// Q equals the single process's orthonormalize(CholeskyQR2) on the whole A to rounding.
/// Throws InvalidArgument on every rank when n differs between ranks, n < 1, a rank holds no rows
/// or non-finite entries, or the total rows are fewer than n; NumericalBreakdown on every rank when
/// a Gram matrix is not positive definite (A rank deficient or too ill-conditioned:
/// distributed_rand_cholesky_qr or distributed_tsqr factor it).
DistributedQrResult distributed_cholesky_qr2(Backend& backend, Communicator& comm, MatrixView<const float> a,
                                             const MatrixAllocator& outputs = nullptr);

/// A = Q R for A distributed by rows by the sketch-preconditioned CholeskyQR (Higgins, Szyld, Boman
/// & Yamazaki, arXiv 2309.05868, Alg. 2; Garrison, Chen & Ipsen, arXiv 2606.18411): the sketch
/// Omega^T A (Omega M x 2n Gaussian in FP16, M the total rows; each rank draws its rows of the
/// single process's Omega and multiplies them through SHGEMM) summed over the ranks (2 n^2 words),
/// R0 from its Householder QR on every rank, Z_i = A_i R0^{-1} in FP64, one CholeskyQR pass on Z
/// with G = sum_i Z_i^T Z_i summed in FP64 (n^2 words) and equilibrated. Orthogonality at FP32
/// level up to cond(A) near 1/u (FP32); Q equals orthonormalize(RandCholeskyQR) on the whole A to
/// rounding. R = R' D^{-1} R0, upper triangular, the same on every rank. Communication per rank:
/// 3 n^2 words in two sums, no tree. Throws InvalidArgument on every rank when n differs between
/// ranks, n < 1, a rank holds no rows or non-finite entries, or the total rows are fewer than n;
/// NumericalBreakdown on every rank when the preconditioned Gram matrix is not positive definite
/// (A rank deficient: distributed_tsqr factors it).
DistributedQrResult distributed_rand_cholesky_qr(Backend& backend, Communicator& comm, MatrixView<const float> a,
                                                 const MatrixAllocator& outputs = nullptr);

/// The three factorisations above for a row-major block A_i (m_i x n), given as A_i^T column-major
/// (Transposed: a LayoutRight view's memory, n x m_i): A_i is transposed into the memory of this
/// rank's Q, which the factorisation reads as A (in full, before Q is written), so the call needs
/// no memory beyond the column-major call's. Results, checks and errors as the column-major call's.
DistributedQrResult distributed_tsqr(Backend& backend, Communicator& comm, Transposed<const float> a,
                                     const MatrixAllocator& outputs = nullptr);
/// distributed_cholesky_qr2 of a row-major block A_i, given as A_i^T: as distributed_tsqr's overload above.
DistributedQrResult distributed_cholesky_qr2(Backend& backend, Communicator& comm, Transposed<const float> a,
                                             const MatrixAllocator& outputs = nullptr);
/// distributed_rand_cholesky_qr of a row-major block A_i, given as A_i^T: as distributed_tsqr's overload above.
DistributedQrResult distributed_rand_cholesky_qr(Backend& backend, Communicator& comm, Transposed<const float> a,
                                                 const MatrixAllocator& outputs = nullptr);

/// The randomized SVD A ~ U diag(S) V^T of A distributed by rows: this rank's rows of U, S and V
/// whole (FP32, column-major, the backend's memory).
struct DistributedRsvdResult {
  Matrix<float> U;  ///< this rank's rows of U (m_i x k)
  Matrix<float> S;  ///< k x 1, descending, the same on every rank
  Matrix<float> V;  ///< n x k, the same on every rank
  RsvdReport report;                ///< what ran and the phases' times, as rsvd() reports them
  DistributedReport distribution;   ///< the transport, ranks and words sent
};

/// Rank-k randomized SVD of A distributed by rows (Halko, Martinsson & Tropp 2011, Alg. 4.4 and
/// 5.1, as rsvd()): Omega (n x l, l = k + p) drawn on every rank from the seed with no
/// communication (the same Omega as rsvd() draws), Y_i = A_i Omega local, Y orthonormalised by
/// distributed_cholesky_qr2 (by distributed_tsqr where Y is too ill-conditioned for it, every rank
/// together), A^T Q = sum_i A_i^T Q_i summed over the ranks (n l words), its small SVD on
/// every rank, U_i = Q_i Uhat local; q power iterations the same way. Results equal rsvd() on
/// the whole A to rounding (columns up to sign). Communication per rank: (q + 1) n l words for
/// the sums plus 2 l^2 per orthonormalisation of Y (q + 1 of them), O(l n) per rank, no tree.
/// Throws InvalidArgument on every rank when ranks disagree on n, k, p, q or the seed, a rank
/// holds no rows or non-finite entries, or k + p exceeds min(total rows, n).
DistributedRsvdResult distributed_rsvd(Backend& backend, Communicator& comm, MatrixView<const float> a, index_t k,
                                       const RsvdOptions& options = {}, const MatrixAllocator& outputs = nullptr);
/// The same for a row-major block A_i, given as A_i^T column-major (Transposed: a LayoutRight view's
/// memory), read in place: every product A_i's with the operands' roles swapped, the results those
/// of A itself (U_i m_i x k). Throws as distributed_rsvd above.
DistributedRsvdResult distributed_rsvd(Backend& backend, Communicator& comm, Transposed<const float> a, index_t k,
                                       const RsvdOptions& options = {}, const MatrixAllocator& outputs = nullptr);

/// Fixed-accuracy randomized SVD of A distributed by rows (as rsvd_fixed_accuracy: Martinsson &
/// Voronin 2016, randQB_b, with Yu, Gu & Li's 2018 error indicator ||A - Q B||_F^2 = ||A||_F^2 -
/// ||B||_F^2): every block's Omega_i drawn on every rank from the seed (rsvd_fixed_accuracy's),
/// Y_i = A_i Omega_i local, each block orthogonalised against Q by two passes of block Gram-Schmidt
/// (Q^T Y summed over the ranks) and distributed_tsqr, B_i^T = A^T Q_new summed (n b words), the
/// indicator and the stop the same on every rank; the rank found is S.rows on every rank.
/// Communication per rank: per block b (rank + n) words plus two distributed TSQRs of b columns.
/// Throws InvalidArgument on every rank when ranks disagree on n, the tolerance, block_size,
/// max_rank, power_iterations or the seed, a rank holds no rows or non-finite entries, or an
/// option is out of range (as rsvd_fixed_accuracy, max_rank against min(total rows, n)).
DistributedRsvdResult distributed_rsvd_fixed_accuracy(Backend& backend, Communicator& comm, MatrixView<const float> a,
                                                      const FixedAccuracyOptions& options,
                                                      const MatrixAllocator& outputs = nullptr);
/// The same for a row-major block A_i given as A_i^T column-major (Transposed), read in place.
DistributedRsvdResult distributed_rsvd_fixed_accuracy(Backend& backend, Communicator& comm, Transposed<const float> a,
                                                      const FixedAccuracyOptions& options,
                                                      const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
