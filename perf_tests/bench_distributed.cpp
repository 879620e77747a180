// The distributed algorithms under mpirun, A distributed by rows (each rank draws its own rows of
// one matrix from the counter-based generator, so every rank count factors the same matrix), time
// = the slowest rank's, median of 5 after a warm-up (gpu-weak: of 11; gpu-strong: of 3):
//   weak:       TSQR (262144 x 32 rows per rank) and RSVD (32768 x 512 per rank, k = 32, p = 8,
//               q = 1) of a Gaussian A on the host backend;
//   gpu:        RSVD of one Gaussian 16384 x 16384 A (k = 256, p = 10, q = 1) on the CUDA backend,
//               split over the ranks (all on one GPU when the machine has one);
//   gpu-weak:   one GPU per rank (scripts/mpirun_gpus.sh): TSQR, CholeskyQR2 and the
//               preconditioned CholeskyQR of TSQR_ROWS x 64 Gaussian rows per rank (default
//               1048576), and RSVD (k = 256, p = 10, q = 1) of RSVD_N x RSVD_N Gaussian rows per
//               rank (default 16384), with rank 0's and the last rank's phases;
//   gpu-strong: one GPU per rank: RSVD (k, p = 10, q = 1) of one M x N A = X diag(sigma) Y^T split
//               over the ranks (sigma_j = exp(-4 j / k), so the best rank-k error is about e^-4 at
//               any size), and its error ||A - U S V^T||_F / ||A||_F, formed in place of A.
// The gpu modes run on the host backend where no GPU is visible (a dry run at small sizes).
// Device buffers go through NCCL where every rank has a GPU of its own. Each gpu-weak and
// gpu-strong line also gives the time spent communicating, from one more run with the collectives
// timed (Communicator::time_collectives). Every run prints sigma_1 and sigma_k or |r_11|, which
// equal the one-rank run's on the same matrix to rounding.
// Usage: mpirun -np P bench_distributed weak|gpu
//        scripts/mpirun_gpus.sh P bench_distributed gpu-weak [TSQR_ROWS [RSVD_N]]
//        scripts/mpirun_gpus.sh P bench_distributed gpu-strong M N k
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/distributed/distributed.hpp"
#include "randnla/mpi/mpi_communicator.hpp"
#ifdef RANDNLA_BENCH_NCCL
#include "randnla/nccl/nccl_transport.hpp"
#endif

using namespace randnla;

namespace {

/// This rank's share [first, first + count) of `total` rows, in near-equal blocks.
std::pair<index_t, index_t> row_block(const Communicator& comm, index_t total) {
  const index_t first = total * comm.rank() / comm.size();
  return {first, total * (comm.rank() + 1) / comm.size() - first};
}

/// This rank's rows of the Gaussian total x n matrix A (seed 11), in b's memory.
Matrix<float> my_rows(Backend& b, const Communicator& comm, index_t total, index_t n) {
  const auto [r0, rows] = row_block(comm, total);
  Matrix<float> a(b, rows, n, "A_i");
  b.fill_random(RandomSpec{Distribution::Gaussian, 11, 0}, a.view(), RandomBlock{r0, 0, total});
  return a;
}

/// This rank's rows of A = X diag(sigma) Y^T (total x n): X and Y Gaussian with r = min(4k, total,
/// n) columns, sigma_j = exp(-4 j / k) / sqrt(total n), so that X and Y are nearly orthonormal after
/// the scaling and the tail beyond rank k holds about e^-8 of ||A||_F^2 at every size.
Matrix<float> decaying_rows(Backend& b, const Communicator& comm, index_t total, index_t n, index_t k) {
  const auto [r0, rows] = row_block(comm, total);
  const index_t r = std::min({4 * k, total, n});
  Matrix<float> x(b, rows, r, "X_i"), y(b, n, r, "Y"), sigma(b, r, 1, "sigma");
  b.fill_random(RandomSpec{Distribution::Gaussian, 12, 0}, x.view(), RandomBlock{r0, 0, total});
  b.fill_random(RandomSpec{Distribution::Gaussian, 12, 1}, y.view());
  std::vector<float> s(static_cast<std::size_t>(r));
  for (index_t j = 0; j < r; ++j)
    s[static_cast<std::size_t>(j)] = static_cast<float>(std::exp(-4.0 * j / k) / std::sqrt(double(total) * n));
  b.copy(MatrixView<const float>(s.data(), r, 1, r, MemorySpace::Host), sigma.view());
  b.scale_columns(sigma, x.view());
  Matrix<float> a(b, rows, n, "A_i");
  b.product(Op::N, Op::T, 1.0f, x, y, 0.0f, a, ProductPrecision::fp32());
  return a;
}

double max_over_ranks(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return x;
}

double sum_over_ranks(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return x;
}

/// The slowest rank's time (ms) of one run of f, the ranks starting together.
double one_run_ms(Backend& b, const std::function<void()>& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  f();
  b.synchronize();
  return max_over_ranks(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

/// The slowest rank's time (ms) of f, median of `runs` after one warm-up.
double slowest_ms(Backend& b, const std::function<void()>& f, int runs = 5) {
  f();
  b.synchronize();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) t.push_back(one_run_ms(b, f));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// The slowest rank's time of f (slowest_ms) and, from one more run with the collectives timed,
/// the time the slowest rank spent communicating in it, as "comm x ms of y ms (z%)".
std::pair<double, std::string> timed_with_share(Backend& b, Communicator& comm, const std::function<void()>& f,
                                                int runs = 5) {
  const double ms = slowest_ms(b, f, runs);
  comm.time_collectives(true);
  const double instrumented = one_run_ms(b, f), communicating = max_over_ranks(comm.seconds_communicating() * 1e3);
  comm.time_collectives(false);
  char text[96];
  std::snprintf(text, sizeof text, "comm %.2f ms of %.2f ms (%.1f%%)", communicating, instrumented,
                100 * communicating / instrumented);
  return {ms, text};
}

/// Rank 0's and the last rank's phases of their last run, one line each.
void print_phases(const Communicator& comm, const std::string& what, const PhaseReport& phases) {
  const int last = comm.size() - 1;
  for (int r : {0, last}) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (comm.rank() == r) {
      std::printf("    %s phases on rank %d: %s\n", what.c_str(), r, phases.to_string().c_str());
      std::fflush(stdout);
    }
    if (last == 0) break;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// The RSVD of `a` (this rank's rows of a total x n matrix) at k, p, q = 1; prints its line and
/// returns the result of the last run.
DistributedRsvdResult rsvd_line(Backend& b, Communicator& comm, const Matrix<float>& a, index_t total, index_t k,
                                index_t p, const std::string& what) {
  RsvdOptions o;
  o.oversampling = p;
  o.power_iterations = 1;
  o.error_probes = 0;
  DistributedRsvdResult r;
  const auto run = [&] { r = distributed_rsvd(b, comm, a, k, o); };
  std::string share;
  double ms = 0;
  if (what.rfind("gpu-", 0) == 0) std::tie(ms, share) = timed_with_share(b, comm, run, what == "gpu-strong" ? 3 : 11);
  else ms = slowest_ms(b, run);
  std::vector<float> s(static_cast<std::size_t>(k));
  b.copy(r.S.view(), MatrixView<float>(s.data(), k, 1, k, MemorySpace::Host));
  if (comm.rank() == 0)
    std::printf("%-5s rsvd %8ld x %-6ld k %-4ld ranks %d  %9.2f ms  %s%ssigma_1 %.6e  sigma_k %.6e  %.0f words sent by rank 0\n",
                what.c_str(), static_cast<long>(total), static_cast<long>(a.cols()), static_cast<long>(k), comm.size(),
                ms, share.c_str(), share.empty() ? "" : "  ", s[0], s[static_cast<std::size_t>(k - 1)],
                r.distribution.words_sent);
  if (what.rfind("gpu-", 0) == 0) print_phases(comm, "rsvd", r.report.phases);
  return r;
}

void tsqr_run(Backend& b, Communicator& comm, index_t total, index_t n) {
  const Matrix<float> a = my_rows(b, comm, total, n);
  DistributedQrResult t;
  const double ms = slowest_ms(b, [&] { t = distributed_tsqr(b, comm, a); });
  std::vector<float> r(static_cast<std::size_t>(n * n));
  b.copy(t.R.view(), MatrixView<float>(r.data(), n, n, n, MemorySpace::Host));
  if (comm.rank() == 0)
    std::printf("weak  tsqr %8ld x %-6ld ranks %d  %9.2f ms  |r_11| %.6e  |r_nn| %.6e\n", static_cast<long>(total),
                static_cast<long>(n), comm.size(), ms, std::fabs(r[0]), std::fabs(r.back()));
}

/// One GPU per rank, rows per rank fixed: the direct TSQR, CholeskyQR2 and the preconditioned
/// CholeskyQR of tsqr_rows x 64 per rank, then the RSVD of rsvd_n x rsvd_n per rank.
void gpu_weak_runs(Backend& b, Communicator& comm, index_t tsqr_rows, index_t rsvd_n) {
  const index_t n = 64, total = tsqr_rows * comm.size();
  const Matrix<float> a = my_rows(b, comm, total, n);
  const std::pair<const char*, DistributedQr> factorizations[] = {
      {"tsqr", distributed_tsqr}, {"cholesky-qr2", distributed_cholesky_qr2}, {"rand-cholesky-qr", distributed_rand_cholesky_qr}};
  for (const auto& [name, factor] : factorizations) {
    DistributedQrResult t;
    const auto [ms, share] = timed_with_share(b, comm, [&, factor = factor] { t = factor(b, comm, a, nullptr); }, 11);
    float r11 = 0;
    b.copy(MatrixView<const float>(t.R.view()).block(0, 0, 1, 1), MatrixView<float>(&r11, 1, 1, 1, MemorySpace::Host));
    if (comm.rank() == 0)
      std::printf("gpu-weak %-17s %9ld x %-6ld ranks %d  %9.3f ms  %s  |r_11| %.6e\n", name, static_cast<long>(total),
                  static_cast<long>(n), comm.size(), ms, share.c_str(), std::fabs(r11));
    print_phases(comm, name, t.report.phases);
  }
  rsvd_line(b, comm, my_rows(b, comm, rsvd_n * comm.size(), rsvd_n), rsvd_n * comm.size(), 256, 10, "gpu-weak");
}

/// One GPU per rank, the matrix fixed: the RSVD of the decaying M x n matrix split over the ranks,
/// then its error, formed in place of A_i (A_i := A_i - U_i S V^T).
void gpu_strong_run(Backend& b, Communicator& comm, index_t total, index_t n, index_t k) {
  Matrix<float> a = decaying_rows(b, comm, total, n, k);
  const DistributedRsvdResult r = rsvd_line(b, comm, a, total, k, 10, "gpu-strong");
  const double norm = sum_over_ranks(std::pow(b.frobenius_norm(a), 2));
  b.scale_columns(r.S, r.U.view());
  b.product(Op::N, Op::T, -1.0f, r.U, r.V, 1.0f, a, ProductPrecision::fp32());
  const double error = std::sqrt(sum_over_ranks(std::pow(b.frobenius_norm(a), 2)) / norm);
  if (comm.rank() == 0) std::printf("gpu-strong error ||A - U S V^T||_F / ||A||_F %.6e\n", error);
}

[[noreturn]] void usage() {
  std::fprintf(stderr, "usage: bench_distributed weak | gpu | gpu-weak [TSQR_ROWS [RSVD_N]] | gpu-strong M N k\n");
  std::exit(2);
}

index_t argument(int argc, char** argv, int i, index_t fallback) {
  if (i >= argc) return fallback;
  const long long v = std::atoll(argv[i]);
  if (v < 1) usage();
  return static_cast<index_t>(v);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard guard(argc, argv);
    MpiCommunicator comm(MPI_COMM_WORLD);
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode != "weak" && mode != "gpu" && mode != "gpu-weak" && mode != "gpu-strong") usage();
    if (mode == "gpu-strong" && argc != 5) usage();
    const bool gpu = mode != "weak" && cuda_available();
    auto b = make_backend(gpu ? BackendKind::Cuda : BackendKind::Host);
#ifdef RANDNLA_BENCH_NCCL
    if (gpu) attach_nccl(comm, *b);  // NCCL where every rank has a GPU of its own; reported either way
#endif
    if (comm.rank() == 0)
      std::printf("bench_distributed %s on %s%s, %s\n", mode.c_str(), b->description().c_str(),
                  gpu || mode == "weak" ? "" : " (no GPU visible: a dry run on the host)", comm.transport().c_str());
    if (mode == "gpu") {
      rsvd_line(*b, comm, my_rows(*b, comm, 16384, 16384), 16384, 256, 10, "gpu");
    } else if (mode == "gpu-weak") {
      gpu_weak_runs(*b, comm, argument(argc, argv, 2, 1048576), argument(argc, argv, 3, 16384));
    } else if (mode == "gpu-strong") {
      gpu_strong_run(*b, comm, argument(argc, argv, 2, 0), argument(argc, argv, 3, 0), argument(argc, argv, 4, 0));
    } else {
      tsqr_run(*b, comm, 262144 * comm.size(), 32);
      rsvd_line(*b, comm, my_rows(*b, comm, 32768 * comm.size(), 512), 32768 * comm.size(), 32, 8, "weak");
    }
  }
  MPI_Finalize();
  return 0;
}
