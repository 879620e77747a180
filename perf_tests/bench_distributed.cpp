// The distributed algorithms under mpirun, A distributed by rows (each rank draws its own rows of
// one Gaussian A from the counter-based generator, so every rank count factors the same matrix):
//   weak:  distributed TSQR (262144 x 32 rows per rank) and RSVD (32768 x 512 per rank, k = 32,
//          p = 8, q = 1) on the host backend, time = the slowest rank's, median of 5;
//   gpu:   distributed RSVD of one 16384 x 16384 A (k = 256, p = 10, q = 1) on the CUDA backend,
//          split over the ranks (all on one GPU when the machine has one), device buffers through
//          NCCL where every rank has a GPU of its own.
// Every run prints sigma_1 and sigma_k, which equal the one-rank run's to rounding.
// Usage: mpirun -np P bench_distributed weak|gpu
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "randnla/backends.hpp"
#include "distributed/distributed.hpp"
#include "mpi/mpi_communicator.hpp"
#ifdef RANDNLA_BENCH_NCCL
#include "nccl/nccl_transport.hpp"
#endif

using namespace randnla;

namespace {

/// This rank's rows [r0, r0 + rows) of the Gaussian M x n matrix A (seed 11), in b's memory.
Matrix<float> my_rows(Backend& b, const Communicator& comm, index_t total, index_t n) {
  const index_t r0 = total * comm.rank() / comm.size(), rows = total * (comm.rank() + 1) / comm.size() - r0;
  Matrix<float> a(b, rows, n, "A_i");
  b.fill_random(RandomSpec{Distribution::Gaussian, 11, 0}, a.view(), RandomBlock{r0, 0, total});
  return a;
}

/// The slowest rank's time (ms) of f, median of `runs` after one warm-up.
double slowest_ms(Backend& b, const std::function<void()>& f, int runs = 5) {
  std::vector<double> t;
  for (int i = 0; i <= runs; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = std::chrono::steady_clock::now();
    f();
    b.synchronize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (i > 0) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void rsvd_run(Backend& b, Communicator& comm, index_t total, index_t n, index_t k, index_t p, const char* what) {
  const Matrix<float> a = my_rows(b, comm, total, n);
  RsvdOptions o;
  o.oversampling = p;
  o.power_iterations = 1;
  o.error_probes = 0;
  DistributedRsvdResult r;
  const double ms = slowest_ms(b, [&] { r = distributed_rsvd(b, comm, a, k, o); });
  std::vector<float> s(static_cast<std::size_t>(k));
  b.copy(r.S.view(), MatrixView<float>(s.data(), k, 1, k, MemorySpace::Host));
  if (comm.rank() == 0)
    std::printf("%-5s rsvd %8ld x %-6ld k %-4ld ranks %d  %9.2f ms  sigma_1 %.6e  sigma_k %.6e  %.0f words sent by rank 0\n",
                what, static_cast<long>(total), static_cast<long>(n), static_cast<long>(k), comm.size(), ms, s[0],
                s[static_cast<std::size_t>(k - 1)], r.distribution.words_sent);
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

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    Kokkos::ScopeGuard guard(argc, argv);
    MpiCommunicator comm(MPI_COMM_WORLD);
    const bool gpu = argc > 1 && std::strcmp(argv[1], "gpu") == 0;
    auto b = make_backend(gpu ? BackendKind::Cuda : BackendKind::Host);
#ifdef RANDNLA_BENCH_NCCL
    if (gpu) attach_nccl(comm, *b);  // NCCL where every rank has a GPU of its own; reported either way
#endif
    if (comm.rank() == 0) std::printf("bench_distributed on %s, %s\n", b->description().c_str(), comm.transport().c_str());
    if (gpu) {
      rsvd_run(*b, comm, 16384, 16384, 256, 10, "gpu");
    } else {
      tsqr_run(*b, comm, 262144 * comm.size(), 32);
      rsvd_run(*b, comm, 32768 * comm.size(), 512, 32, 8, "weak");
    }
  }
  MPI_Finalize();
  return 0;
}
