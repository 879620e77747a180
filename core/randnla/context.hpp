// The device context: where a backend's data lives and how work is queued there. Every family of
// operations (core/randnla/ops/) and every algorithm-only interface reaches the machine through it.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <typeindex>
#include <unordered_map>

#include "randnla/matrix_view.hpp"
#include "randnla/ops/factorization_types.hpp"

namespace randnla {

/// What a backend can do, asked before an operation instead of a rejection at run time.
struct Capabilities {
  /// ProductMode::Split runs on Tensor Cores. Without them a backend emulates it element by
  /// element (for validation, several times slower than its FP32 GEMM), and ProductMode::Auto
  /// runs FP32 there.
  bool tensor_cores = false;
  /// The FactorizationOps::svd methods this backend runs (SvdMethod::Auto always resolves to one of them).
  bool gesvd = true, gesdd = false, jacobi = true, polar = false;

  bool supports(SvdMethod m) const {
    switch (m) {
      case SvdMethod::Gesvd: return gesvd;
      case SvdMethod::Gesdd: return gesdd;
      case SvdMethod::Jacobi: return jacobi;
      case SvdMethod::Polar: return polar;
      default: return true;
    }
  }
};

/// Memory space, allocation (on a device: from the stream-ordered pool), copies, fences, the
/// device and the stream (or execution-space instance), and the registry of operation interfaces
/// that one algorithm alone uses. Adding an algorithm adds such an interface (next to the
/// algorithm) and its implementations (backends/<backend>/<algorithm>/), never a member here.
class DeviceContext {
 public:
  virtual ~DeviceContext() = default;

  virtual MemorySpace memory_space() const = 0;
  /// What the operation families run here (Tensor Cores, SVD routines).
  virtual Capabilities capabilities() const = 0;
  /// "portable (Kokkos Serial)" or the GPU's name.
  virtual std::string description() const = 0;
  /// The CUDA device ordinal, or -1 for host memory.
  virtual int device() const = 0;
  /// The native queue work is put on: a cudaStream_t on the CUDA backend, null where the queue is
  /// a Kokkos execution-space instance (held by the backend) or there is none.
  virtual void* native_stream() const = 0;

  /// Uninitialised bytes in memory_space(), freed when the last owner goes; on CUDA from the
  /// stream-ordered pool, released in stream order. Counted in memory_use().
  std::shared_ptr<void> allocate(std::size_t bytes) {
    std::shared_ptr<void> block = do_allocate(bytes);
    memory_->add(bytes);
    return std::shared_ptr<void>(block.get(), [block, bytes, use = memory_](void*) { use->remove(bytes); });
  }
  /// Bytes this context has allocated and not yet freed (the library's matrices and workspaces;
  /// not the caller's data nor the vendor libraries' own handles), now and at most since the last
  /// reset_peak_memory().
  struct MemoryUse {
    std::size_t bytes = 0, peak_bytes = 0;
  };
  MemoryUse memory_use() const { return {memory_->now.load(), memory_->peak.load()}; }
  void reset_peak_memory() { memory_->peak.store(memory_->now.load()); }
  /// Waits for all work queued on this context (its stream or execution-space instance).
  virtual void synchronize() = 0;
  /// A mark put in the queue without waiting (a CUDA event): it is reached when the work queued
  /// before it has run. Null where this context has no such marks (the Stopwatch then waits for
  /// the queue and reads the host clock).
  virtual std::shared_ptr<void> queue_mark() { return nullptr; }
  /// Milliseconds between two marks of queue_mark(), `earlier` queued first; waits for `later`.
  virtual double milliseconds_between(const std::shared_ptr<void>& /*earlier*/, const std::shared_ptr<void>& /*later*/) {
    throw UnsupportedConfiguration("queue marks: not on " + description());
  }

  /// dst := src for same-shape views, any spaces. Blocks until done where either view is in host
  /// memory; between device views it may return once queued, like the other operations (a wait
  /// per copy left the device idle for microseconds at each of an algorithm's copies out).
  void copy(MatrixView<const float> src, MatrixView<float> dst) { checked_copy(src, dst); }
  void copy(MatrixView<const double> src, MatrixView<double> dst) { checked_copy(src, dst); }
  void copy(MatrixView<const fp16> src, MatrixView<fp16> dst) { checked_copy(src, dst); }

  /// The implementation of the algorithm-only interface Ops (e.g. CholeskyQrOps) on this context.
  /// Throws UnsupportedConfiguration when this backend has none.
  template <class Ops>
  Ops& ops() {
    Ops* found = find_ops<Ops>();
    if (found == nullptr)
      throw UnsupportedConfiguration(std::string("the operations ") + Ops::kName + " are not implemented on " +
                                     description());
    return *found;
  }
  /// The implementation of Ops on this context, or nullptr where an algorithm has a generic one.
  template <class Ops>
  Ops* find_ops() {
    const auto it = ops_.find(std::type_index(typeid(Ops)));
    return it == ops_.end() ? nullptr : static_cast<Ops*>(it->second.get());
  }
  /// Registers the implementation of Ops on this context (a backend does this once, at construction).
  template <class Ops>
  void provide(std::shared_ptr<Ops> implementation) {
    ops_[std::type_index(typeid(Ops))] = std::move(implementation);
  }

 protected:
  virtual std::shared_ptr<void> do_allocate(std::size_t bytes) = 0;
  virtual void do_copy(MatrixView<const float> src, MatrixView<float> dst) = 0;
  virtual void do_copy(MatrixView<const double> src, MatrixView<double> dst) = 0;
  virtual void do_copy(MatrixView<const fp16> src, MatrixView<fp16> dst) = 0;

  template <class T>
  void mine(const MatrixView<T>& v, const std::string& name) const {
    require_space(v, memory_space(), name);
  }

 private:
  template <class T>
  void checked_copy(MatrixView<const T> s, MatrixView<T> d) {
    require_shape(d, s.rows(), s.cols(), "dst");
    if (!s.empty()) do_copy(s, d);
  }

  struct MemoryCounter {
    std::atomic<std::size_t> now{0}, peak{0};
    void add(std::size_t bytes) {
      const std::size_t after = now += bytes;
      for (std::size_t p = peak.load(); after > p && !peak.compare_exchange_weak(p, after);) {
      }
    }
    void remove(std::size_t bytes) { now -= bytes; }
  };
  std::unordered_map<std::type_index, std::shared_ptr<void>> ops_;
  std::shared_ptr<MemoryCounter> memory_ = std::make_shared<MemoryCounter>();
};

}  // namespace randnla
