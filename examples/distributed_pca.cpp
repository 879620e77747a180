// The PCA of pca.cpp with the images distributed over MPI ranks: each rank keeps its own block of
// rows (here every rank reads the file and keeps its block; an application already holds its
// rows), the pixel means are summed over the ranks, and distributed_rsvd finds the components
// with no rank holding all the rows. On GPUs, device buffers go through NCCL where every rank has
// a GPU of its own (staged through host memory otherwise). Rank 0 prints what pca.cpp prints and
// the transports used.
// On an error every rank prints the library's message, naming the rank it happened on, and exits
// with status 1: a step that one rank may fail alone (its arguments, its file) is agreed on by all
// ranks before any collective, so none is left waiting.
// Usage: mpirun -np 4 example_distributed_pca [matrix file: IDX, .npy or .mtx, optionally .gz]
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "distributed/distributed.hpp"
#include "io/matrix_io.hpp"
#include "mpi/mpi_communicator.hpp"
#ifdef RANDNLA_EXAMPLE_NCCL
#include "nccl/nccl_transport.hpp"
#endif

using namespace randnla;

namespace {

/// An error every rank has thrown together: the ranks can finalise MPI and exit normally.
struct AgreedError : Error {
  using Error::Error;
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

int run(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  MpiCommunicator comm(MPI_COMM_WORLD);
  io::DenseMatrix x;
  on_every_rank([&] {
    if (argc > 2) throw InvalidArgument("argument", std::string("'") + argv[2] + "'", "is surplus (usage: example_distributed_pca [matrix file])");
    x = io::read_matrix(argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
  });
  // Each rank read the file itself: the shapes must agree before the means are summed over the ranks.
  require_same_on_every_rank(comm, {{"input rows", x.rows}, {"input columns", x.cols}});
  const index_t m = x.rows, n = x.cols, k = 10;
  const index_t r0 = m * comm.rank() / comm.size(), rows = m * (comm.rank() + 1) / comm.size() - r0;
  std::vector<double> mean(static_cast<std::size_t>(n), 0.0);  // pixel means over all images, [0, 1] units
  for (index_t j = 0; j < n; ++j)
    for (index_t i = r0; i < r0 + rows; ++i) mean[j] += x.data[i + j * m] / 255.0 / m;
  MPI_Allreduce(MPI_IN_PLACE, mean.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  std::vector<float> mine(static_cast<std::size_t>(rows * n));
  double total = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < rows; ++i) {
      const float v = static_cast<float>(x.data[r0 + i + j * m] / 255.0 - mean[j]);
      mine[i + j * rows] = v, total += static_cast<double>(v) * v;
    }
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  std::unique_ptr<Backend> b;
  on_every_rank([&] { b = make_backend(BackendKind::Auto); });
#ifdef RANDNLA_EXAMPLE_NCCL
  if (b->memory_space() == MemorySpace::Device) attach_nccl(comm, *b);  // NCCL where every rank has its own GPU
#endif
  Matrix<float> a(*b, rows, n);
  b->copy(MatrixView<const float>(mine.data(), rows, n, rows, MemorySpace::Host), a.view());
  RsvdOptions o;
  o.power_iterations = 2;
  const DistributedRsvdResult r = distributed_rsvd(*b, comm, a, k, o);  // its argument checks are collective
  std::vector<float> s(k);
  b->copy(r.S.view(), MatrixView<float>(s.data(), k, 1, k, MemorySpace::Host));
  double cum = 0;
  if (comm.rank() == 0)
    std::printf("Fashion-MNIST %lld x %lld over %d ranks (%s) on %s\ncomponent  explained variance\n",
                static_cast<long long>(m), static_cast<long long>(n), comm.size(), comm.transport().c_str(),
                b->description().c_str());
  for (index_t i = 0; i < k; ++i) {
    cum += s[i] * s[i] / total;
    if (comm.rank() == 0)
      std::printf("%9lld  %6.2f %%  (cumulative %6.2f %%)\n", static_cast<long long>(i + 1), 100 * s[i] * s[i] / total,
                  100 * cum);
  }
  return cum > 0.5 && cum < 1.0 ? 0 : 1;  // ten components of Fashion-MNIST explain about 72 %
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 1;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::fprintf(stderr, "example_distributed_pca (rank %d): %s\n", rank, what.rfind("randnla: ", 0) == 0 ? what.c_str() + 9 : what.c_str());
    // The library's collective checks throw on every rank, as on_every_rank does; anything else
    // may have happened on this rank alone, and only aborting the job frees the ranks waiting for it.
    if (!dynamic_cast<const AgreedError*>(&e) && !dynamic_cast<const InvalidArgument*>(&e)) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
