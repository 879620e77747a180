// The MPI transport of the distributed algorithms' Communicator: collectives on host memory (device
// buffers staged through it unless a device transport is attached: backends/nccl). Built when
// CMake finds MPI (Debian's OpenMPI, installed by scripts/install_deps.sh); link RandNLA::randnla_mpi.
#pragma once

#include <mpi.h>

#include <string>

#include "randnla/communicator.hpp"

namespace randnla {

/// A Communicator over an MPI communicator the caller owns (MPI initialised, not finalised, for
/// the object's lifetime). Every rank of `comm` must take part in each call, in the same order.
class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string host_transport() const override;

 protected:
  void sum(float* x, std::size_t n) override;
  void sum(double* x, std::size_t n) override;
  void broadcast(float* x, std::size_t n, int root) override;
  void allgather(const std::int64_t* mine, std::size_t n, std::int64_t* all) override;

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace randnla
