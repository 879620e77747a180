// The portable backend's device context: an execution-space instance, its memory space, copies
// between it and host memory, and allocation (aligned host blocks, or Kokkos' allocator).
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "portable/kernels.hpp"

namespace randnla {
namespace portable {

/// The context every portable family shares: the execution-space instance work is queued on.
template <class Exec>
class PortableContext : public virtual DeviceContext {
 protected:
  using MemSpace = typename Exec::memory_space;
  static constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

 public:
  explicit PortableContext(const Exec& exec = Exec()) : exec_(exec) {}

  MemorySpace memory_space() const override { return kHostMemory ? MemorySpace::Host : MemorySpace::Device; }
  int device() const override { return compat::device_of(exec_); }
  void* native_stream() const override { return compat::native_stream_of(exec_); }
  std::string description() const override {
    return std::string("portable (Kokkos ") + Exec::name() + ", Kokkos Kernels + LAPACK)";
  }
  Capabilities capabilities() const override {
    Capabilities c;
    c.gesdd = true;
    return c;
  }

  std::shared_ptr<void> do_allocate(std::size_t bytes) override {
    if (kHostMemory) {
      void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
      if (!p) throw Error("host allocation of " + std::to_string(bytes) + " bytes failed");
      return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    }
    void* p = Kokkos::kokkos_malloc<MemSpace>("randnla::portable", bytes > 0 ? bytes : 1);
    return std::shared_ptr<void>(p, [](void* q) { Kokkos::kokkos_free<MemSpace>(q); });
  }
  void synchronize() override { exec_.fence(); }

  // The hooks are public here: nvcc takes no extended lambda in a protected member function.
  void do_copy(MatrixView<const float> s, MatrixView<float> d) override { copy_any(s, d); }
  void do_copy(MatrixView<const double> s, MatrixView<double> d) override { copy_any(s, d); }
  void do_copy(MatrixView<const fp16> s, MatrixView<fp16> d) override { copy_any(s, d); }

 protected:
  /// A view's data where LAPACK can reach it: the view itself in host memory, else a host copy
  /// (read from the device unless `read` is false) that write_back() returns to the view.
  template <class T>
  class OnHost {
   public:
    OnHost(PortableContext& b, MatrixView<T> v, bool read = true) : b_(b), device_(v), view_(v) {
      if (kHostMemory) return;
      buffer_.resize(static_cast<std::size_t>(v.size()));
      view_ = MatrixView<T>(buffer_.data(), v.rows(), v.cols(), v.rows() > 1 ? v.rows() : 1, MemorySpace::Host);
      if (read) b_.copy(MatrixView<const T>(device_), view_);
    }
    MatrixView<T>* operator->() { return &view_; }
    MatrixView<T>& operator*() { return view_; }
    void write_back() {
      if (!kHostMemory) b_.copy(MatrixView<const T>(view_), device_);
    }

   private:
    PortableContext& b_;
    MatrixView<T> device_, view_;
    std::vector<T> buffer_;
  };


 private:
  /// dst := src between host memory and this backend's; column by column where either is strided.
  template <class T>
  void copy_any(MatrixView<const T> s, MatrixView<T> d) {
    const bool src_host = s.space() == MemorySpace::Host, dst_host = d.space() == MemorySpace::Host;
    require(kHostMemory ? src_host && dst_host : true, "copy spaces",
            std::string(to_string(s.space())) + "->" + to_string(d.space()),
            "this backend's memory is host memory: device views belong to another backend");
    if (src_host == dst_host) {
      if (src_host && !kHostMemory)
        return copy_columns<Kokkos::HostSpace, Kokkos::HostSpace>(s, d);
      return copy_columns<MemSpace, MemSpace>(s, d);
    }
    if (src_host) return copy_columns<MemSpace, Kokkos::HostSpace>(s, d);
    copy_columns<Kokkos::HostSpace, MemSpace>(s, d);
  }
  template <class DstSpace, class SrcSpace, class T>
  void copy_columns(MatrixView<const T> s, MatrixView<T> d) {
    using Src = Kokkos::View<const T*, SrcSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using Dst = Kokkos::View<T*, DstSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const bool contiguous = (s.ld() == s.rows() && d.ld() == d.rows()) || s.cols() == 1;
    const index_t pieces = contiguous ? 1 : s.cols(), length = contiguous ? s.size() : s.rows();
    for (index_t j = 0; j < pieces; ++j)
      Kokkos::deep_copy(exec_, Dst(&d(0, j), length), Src(&s(0, j), length));
    exec_.fence();
  }

 protected:
  Exec exec_;
};

}  // namespace portable
}  // namespace randnla
