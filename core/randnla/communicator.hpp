// The communicator of the distributed algorithms: the few collectives they need, over two
// transports chosen at run time: the host transport (backends/mpi: MPI) always, and a device
// transport (backends/nccl: NCCL between GPUs) where one is attached. Device buffers go through
// the device transport when there is one, otherwise they are staged through host memory and the
// host transport. The algorithms speak only to this; which transports ran is reported
// (transport()).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "randnla/backend.hpp"

namespace randnla {

/// Collectives on device buffers (contiguous, in the calling backend's memory, queued on its
/// stream). Every rank must call each one with the same sizes, in the same order.
class DeviceTransport {
 public:
  virtual ~DeviceTransport() = default;
  /// E.g. "NCCL 2.28.9".
  virtual std::string name() const = 0;
  virtual void sum(Backend& b, float* x, std::size_t n) = 0;
  virtual void sum(Backend& b, double* x, std::size_t n) = 0;
  virtual void broadcast(Backend& b, float* x, std::size_t n, int root) = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// The host transport, e.g. "MPI (Open MPI v4.1.4)".
  virtual std::string host_transport() const = 0;
  /// Both transports, e.g. "MPI (Open MPI v4.1.4), device buffers through NCCL 2.28.9".
  std::string transport() const {
    return host_transport() + (device_ ? ", device buffers through " + device_->name()
                                       : ", device buffers staged through host memory" + device_note_);
  }
  /// Device buffers through `t` from now on (every rank attaches one together, or none does); a
  /// null `t` keeps host staging, with `why` reported after it in transport().
  void attach_device_transport(std::shared_ptr<DeviceTransport> t, const std::string& why = "") {
    device_ = std::move(t);
    device_note_ = why.empty() ? "" : " (" + why + ")";
  }

  /// Times the collectives from now on (on) or stops (off), the count starting at zero either way.
  /// A timed collective first waits for the work queued on its backend and afterwards for its own
  /// transfer, so seconds_communicating() is the wall time of the communication alone. Off by
  /// default: the waits stop communication from overlapping computation, so a benchmark times one
  /// run with it off and reads the share spent communicating from another with it on.
  void time_collectives(bool on) { timed_ = on, seconds_ = 0; }
  /// Seconds spent in the collectives (device-buffer staging included) since time_collectives(true).
  double seconds_communicating() const { return seconds_; }

  /// X := the sum of every rank's X (same shape on every rank), X in `b`'s memory.
  void allreduce_sum(Backend& b, MatrixView<float> x) {
    timed(b, [&] {
      route(b, x, [&](float* d, std::size_t n) { device_->sum(b, d, n); }, [&](float* h, std::size_t n) { sum(h, n); });
    });
  }
  /// The same in FP64 (the Gram matrices of CholeskyQR).
  void allreduce_sum(Backend& b, MatrixView<double> x) {
    timed(b, [&] {
      route(b, x, [&](double* d, std::size_t n) { device_->sum(b, d, n); }, [&](double* h, std::size_t n) { sum(h, n); });
    });
  }
  /// X := rank `root`'s X on every rank.
  void broadcast(Backend& b, MatrixView<float> x, int root) {
    timed(b, [&] {
      route(b, x, [&](float* d, std::size_t n) { device_->broadcast(b, d, n, root); },
            [&](float* h, std::size_t n) { broadcast(h, n, root); });
    });
  }
  /// Every rank's `mine` (the same count on every rank), rank by rank.
  std::vector<std::int64_t> allgather(const std::vector<std::int64_t>& mine);

 protected:
  // The host transport's hooks, on host memory.
  virtual void sum(float* x, std::size_t n) = 0;
  virtual void sum(double* x, std::size_t n) = 0;
  virtual void broadcast(float* x, std::size_t n, int root) = 0;
  virtual void allgather(const std::int64_t* mine, std::size_t n, std::int64_t* all) = 0;

 private:
  template <class F>
  void timed(Backend& b, F&& collective) {
    if (!timed_) return collective();
    b.synchronize();
    const auto start = std::chrono::steady_clock::now();
    collective();
    b.synchronize();
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  /// Runs `on_device` on X packed in device memory when X is device memory and a device transport
  /// is attached (the choice depends on neither X's layout nor the rank, so every rank takes the
  /// same path), `on_host` on a packed host copy otherwise; the result is copied back into X.
  template <class T, class D, class H>
  void route(Backend& b, MatrixView<T> x, D&& on_device, H&& on_host) {
    const std::size_t n = static_cast<std::size_t>(x.rows() * x.cols());
    if (device_ && x.space() == MemorySpace::Device) {
      if (x.ld() == x.rows() || x.cols() <= 1) return on_device(x.data(), n);
      Matrix<T> packed(b, x.rows(), x.cols(), "packed");
      b.copy(MatrixView<const T>(x), packed.view());
      on_device(packed.data(), n);
      b.copy(MatrixView<const T>(packed.view()), x);
      return;
    }
    std::vector<T> h(n);
    const MatrixView<T> hv(h.data(), x.rows(), x.cols(), std::max<index_t>(x.rows(), 1), MemorySpace::Host);
    b.copy(MatrixView<const T>(x), hv);
    on_host(h.data(), n);
    b.copy(MatrixView<const T>(hv), x);
  }

  std::shared_ptr<DeviceTransport> device_;
  std::string device_note_;
  bool timed_ = false;
  double seconds_ = 0;
};

inline std::vector<std::int64_t> Communicator::allgather(const std::vector<std::int64_t>& mine) {
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(size()));
  allgather(mine.data(), mine.size(), all.data());
  return all;
}

}  // namespace randnla
