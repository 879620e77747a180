// The PCA of pca.cpp with the images distributed by rows over MPI ranks: each rank holds its
// block of rows in a Kokkos view (here every rank reads the file and keeps its block; an
// application already holds its rows), the pixel means are summed over the ranks, and
// randnla::distributed_rsvd finds the components with no rank holding all the rows (device
// buffers staged through host memory for MPI). Rank 0 prints the explained variances.
// Checks, over all ranks: the components are orthonormal (|V^T V - I| < 1e-5) and the variance
// along each, sum over ranks of ||X_c,r v_i||^2, is sigma_i^2 to 0.2 % in sigma_i. Exits 1 otherwise.
// On an error every rank prints the library's message, naming the rank it happened on, and exits
// with status 1: a step that one rank may fail alone (its arguments, its file) is agreed on by all
// ranks before any collective, so none is left waiting.
// Usage: mpirun -np 2 example_distributed_pca [IDX images file, optionally gzip-compressed]
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <randnla/mpi/mpi_communicator.hpp>
#include <randnla/randnla.hpp>
#include "idx_images.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using Space = Kokkos::DefaultExecutionSpace::memory_space;
using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;

namespace {


/// An error every rank has thrown together: the ranks can finalise MPI and exit normally.
struct AgreedError : randnla::Error {
  using randnla::Error::Error;
};

/// Runs `step` on every rank; when it throws on any rank, every rank throws AgreedError with the
/// first failing rank's message (a rank failing alone would otherwise leave the others waiting).
void on_every_rank(const std::function<void()>& step) {
  std::string error;
  try {
    step();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.rfind("randnla: ", 0) == 0) error.erase(0, 9);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int first = error.empty() ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size) return;
  int length = static_cast<int>(error.size());
  MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
  error.resize(static_cast<std::size_t>(length));
  MPI_Bcast(&error[0], length, MPI_CHAR, first, MPI_COMM_WORLD);
  throw AgreedError("rank " + std::to_string(first) + ": " + error);
}

/// This rank's rows [begin, end) of `rows` split as evenly as the ranks allow.
std::pair<int, int> my_rows(int rows, int rank, int size) {
  return {static_cast<int>(static_cast<long long>(rows) * rank / size),
          static_cast<int>(static_cast<long long>(rows) * (rank + 1) / size)};
}

/// The sum over the ranks of x (host memory), in place.
void sum_over_ranks(std::vector<double>& x) {
  MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int run(int argc, char** argv) {
  randnla::MpiCommunicator comm(MPI_COMM_WORLD);
  const std::string path = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
  const int k = 10;
  const Kokkos::DefaultExecutionSpace exec;
  Kokkos::Timer timer;
  Pixels all;
  on_every_rank([&] {
    if (argc > 2)
      throw randnla::InvalidArgument("argument", std::string("'") + argv[2] + "'",
                                     "is surplus (usage: example_distributed_pca [IDX images file])");
    all = read_idx_images(path);
  });
  // Each rank read the file itself: the shapes must agree before the means are summed over the ranks.
  randnla::require_same_on_every_rank(comm, {{"input rows", static_cast<std::int64_t>(all.extent(0))},
                                             {"input columns", static_cast<std::int64_t>(all.extent(1))}});
  const int m = static_cast<int>(all.extent(0)), n = static_cast<int>(all.extent(1));
  const auto [begin, end] = my_rows(m, comm.rank(), comm.size());
  const int rows = end - begin;
  const auto pixels = Kokkos::create_mirror_view_and_copy(Space(), Kokkos::subview(all, std::make_pair(begin, end), Kokkos::ALL()));
  // The pixel means over all images: column sums here, summed over the ranks.
  Kokkos::View<double*, Space> sums("column sums", n);
  Kokkos::parallel_for("column sums", Kokkos::RangePolicy<>(exec, 0, n), KOKKOS_LAMBDA(int j) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += pixels(i, j) / 255.0;
    sums(j) = s;
  });
  std::vector<double> mean(static_cast<std::size_t>(n));
  Kokkos::deep_copy(Kokkos::View<double*, Kokkos::HostSpace>(mean.data(), n), sums);
  sum_over_ranks(mean);
  for (double& v : mean) v /= m;
  Kokkos::View<float*, Space> mu("mean", n);
  const auto host_mu = Kokkos::create_mirror_view(mu);
  for (int j = 0; j < n; ++j) host_mu(j) = static_cast<float>(mean[j]);
  Kokkos::deep_copy(mu, host_mu);
  Matrix x("X_c rows", rows, n);
  Kokkos::parallel_for("X_c", Kokkos::MDRangePolicy<Kokkos::Rank<2>>(exec, {0, 0}, {rows, n}),
                       KOKKOS_LAMBDA(int i, int j) { x(i, j) = pixels(i, j) / 255.0f - mu(j); });
  exec.fence();
  double setup_s = timer.seconds();

  timer.reset();
  randnla::DistributedReport distribution;
  const auto r = randnla::distributed_rsvd(exec, comm, x, k, {}, &distribution);
  exec.fence();
  const double library_s = timer.seconds();

  // Checks: ||X_c v_i||^2 summed over the ranks against sigma_i^2; V^T V (the same V on every rank).
  timer.reset();
  Matrix xv("X_c V", rows, k), gram("V^T V", k, k);
  KokkosBlas::gemm("N", "N", 1.0f, x, r.V, 0.0f, xv);
  KokkosBlas::gemm("T", "N", 1.0f, r.V, r.V, 0.0f, gram);
  Kokkos::View<double*, Space> along("||X_c v||^2", k);
  double squares = 0;  // ||X_c||_F^2 over this rank's rows
  Kokkos::parallel_reduce("||X_c||^2", Kokkos::MDRangePolicy<Kokkos::Rank<2>>(exec, {0, 0}, {rows, n}),
                          KOKKOS_LAMBDA(int i, int j, double& acc) { acc += static_cast<double>(x(i, j)) * x(i, j); }, squares);
  Kokkos::parallel_for("||X_c v||^2", Kokkos::RangePolicy<>(exec, 0, k), KOKKOS_LAMBDA(int c) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += static_cast<double>(xv(i, c)) * xv(i, c);
    along(c) = s;
  });
  std::vector<double> checked(static_cast<std::size_t>(k + 1));
  Kokkos::deep_copy(Kokkos::View<double*, Kokkos::HostSpace>(checked.data(), k), along);
  checked[k] = squares;
  sum_over_ranks(checked);
  const auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.S);
  const auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), gram);
  setup_s += timer.seconds();

  double cumulative = 0, worst_sigma = 0, worst_orthogonality = 0;
  if (comm.rank() == 0)
    std::printf("PCA of %s: %d images x %d pixels over %d ranks (%s) on %s\n component  explained variance  cumulative\n",
                path.c_str(), m, n, comm.size(), distribution.transport.c_str(), r.report.backend.c_str());
  for (int c = 0; c < k; ++c) {
    const double ratio = static_cast<double>(s(c)) * s(c) / checked[k];
    cumulative += ratio;
    worst_sigma = std::fmax(worst_sigma, std::fabs(std::sqrt(checked[c]) - s(c)) / s(c));
    for (int b = 0; b < k; ++b) worst_orthogonality = std::fmax(worst_orthogonality, std::fabs(g(c, b) - (b == c)));
    if (comm.rank() == 0) std::printf(" %9d  %15.2f %%  %8.2f %%\n", c + 1, 100 * ratio, 100 * cumulative);
  }
  if (comm.rank() == 0) {
    std::printf("||X_c v_i|| against sigma_i: worst relative difference %.1e; |V^T V - I| %.1e\n", worst_sigma,
                worst_orthogonality);
    std::printf("time on rank 0: library %.2f s, data and checks %.2f s\n", library_s, setup_s);
  }
  return worst_sigma < 2e-3 && worst_orthogonality < 1e-5 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 1;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    try {
      status = run(argc, argv);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      std::fprintf(stderr, "example_distributed_pca (rank %d): %s\n", rank,
                   what.rfind("randnla: ", 0) == 0 ? what.c_str() + 9 : what.c_str());
      // The library's collective checks throw on every rank, as on_every_rank does; anything else
      // may have happened on this rank alone, and only aborting the job frees the ranks waiting for it.
      if (!dynamic_cast<const AgreedError*>(&e) && !dynamic_cast<const randnla::InvalidArgument*>(&e))
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Finalize();
  return status;
}
