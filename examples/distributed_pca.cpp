// The PCA of pca.cpp with the images distributed over MPI ranks: each rank keeps its own block of
// rows (here every rank reads the file and keeps its block; an application already holds its
// rows), the pixel means are summed over the ranks, and distributed_rsvd finds the components
// with no rank holding all the rows. On GPUs, device buffers go through NCCL where every rank has
// a GPU of its own (staged through host memory otherwise). Rank 0 prints what pca.cpp prints and
// the transports used.
// Usage: mpirun -np 4 example_distributed_pca [IDX images file]
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/distributed/distributed.hpp"
#include "io/matrix_io.hpp"
#include "randnla/mpi/mpi_communicator.hpp"
#ifdef RANDNLA_EXAMPLE_NCCL
#include "randnla/nccl/nccl_transport.hpp"
#endif

using namespace randnla;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    MpiCommunicator comm(MPI_COMM_WORLD);
    const io::DenseMatrix x =
        io::read_matrix(argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
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
    auto b = make_backend(BackendKind::Auto);
#ifdef RANDNLA_EXAMPLE_NCCL
    if (b->memory_space() == MemorySpace::Device) attach_nccl(comm, *b);  // NCCL where every rank has its own GPU
#endif
    Matrix<float> a(*b, rows, n);
    b->copy(MatrixView<const float>(mine.data(), rows, n, rows, MemorySpace::Host), a.view());
    RsvdOptions o;
    o.power_iterations = 2;
    const DistributedRsvdResult r = distributed_rsvd(*b, comm, a, k, o);
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
    status = cum > 0.5 && cum < 1.0 ? 0 : 1;  // ten components of Fashion-MNIST explain about 72 %
  }
  MPI_Finalize();
  return status;
}
