// The communicator of the distributed algorithms: the few collectives they need, over a transport
// (backends/mpi: MPI, device buffers staged through host memory). The algorithms speak only to
// this; which transport ran is reported (transport()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "randnla/backend.hpp"

namespace randnla {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// E.g. "MPI (OpenMPI 4.1.4), device buffers staged through host memory".
  virtual std::string transport() const = 0;

  /// X := the sum of every rank's X (same shape on every rank), X in `b`'s memory.
  void allreduce_sum(Backend& b, MatrixView<float> x) { staged(b, x, [&](float* h, std::size_t n) { sum(h, n); }); }
  /// The same in FP64 (the Gram matrices of CholeskyQR).
  void allreduce_sum(Backend& b, MatrixView<double> x) { staged(b, x, [&](double* h, std::size_t n) { sum(h, n); }); }
  /// X := rank `root`'s X on every rank.
  void broadcast(Backend& b, MatrixView<float> x, int root) {
    staged(b, x, [&](float* h, std::size_t n) { broadcast(h, n, root); });
  }
  /// Point to point, for the reduction trees: X (same shape on both ranks) from this rank to `to`.
  void send(Backend& b, MatrixView<const float> x, int to);
  void receive(Backend& b, MatrixView<float> x, int from) {
    staged(b, x, [&](float* h, std::size_t n) { receive(h, n, from); });
  }
  /// Every rank's `mine` (the same count on every rank), rank by rank.
  std::vector<std::int64_t> allgather(const std::vector<std::int64_t>& mine);

 protected:
  // The transport's hooks, on host memory.
  virtual void sum(float* x, std::size_t n) = 0;
  virtual void sum(double* x, std::size_t n) = 0;
  virtual void broadcast(float* x, std::size_t n, int root) = 0;
  virtual void send(const float* x, std::size_t n, int to) = 0;
  virtual void receive(float* x, std::size_t n, int from) = 0;
  virtual void allgather(const std::int64_t* mine, std::size_t n, std::int64_t* all) = 0;

 private:
  /// Runs `f` on a packed host copy of X and copies the result back.
  template <class T, class F>
  void staged(Backend& b, MatrixView<T> x, F&& f) {
    std::vector<T> h(static_cast<std::size_t>(x.rows() * x.cols()));
    const MatrixView<T> hv(h.data(), x.rows(), x.cols(), std::max<index_t>(x.rows(), 1), MemorySpace::Host);
    b.copy(MatrixView<const T>(x), hv);
    f(h.data(), h.size());
    b.copy(MatrixView<const T>(hv), x);
  }
};

inline void Communicator::send(Backend& b, MatrixView<const float> x, int to) {
  std::vector<float> h(static_cast<std::size_t>(x.rows() * x.cols()));
  b.copy(x, MatrixView<float>(h.data(), x.rows(), x.cols(), std::max<index_t>(x.rows(), 1), MemorySpace::Host));
  send(h.data(), h.size(), to);
}

inline std::vector<std::int64_t> Communicator::allgather(const std::vector<std::int64_t>& mine) {
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(size()));
  allgather(mine.data(), mine.size(), all.data());
  return all;
}

}  // namespace randnla
