// The one place that knows how Kokkos 3.4 and Kokkos 4.x differ. Nothing else in the tree tests
// Kokkos or Kokkos Kernels versions.
#pragma once

#include <Kokkos_Core.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <KokkosBlas3_trsm.hpp>

#include <type_traits>

#include "randnla/matrix_view.hpp"
#include "randnla/tensor_view.hpp"

namespace randnla {
namespace compat {

/// KokkosBlas::gemm on `exec`. Kokkos Kernels takes an execution-space instance only from 4.1
/// (which is also when KOKKOSKERNELS_VERSION appeared in 4.x's config header); before, it runs on
/// the space's default instance, so the call is ordered after and before exec's work by fences.
template <class Exec, class AV, class BV, class CV>
void gemm(const Exec& exec, const char* transa, const char* transb, typename CV::const_value_type alpha, const AV& a,
          const BV& b, typename CV::const_value_type beta, const CV& c) {
#if defined(KOKKOSKERNELS_VERSION) && KOKKOSKERNELS_VERSION >= 40100
  KokkosBlas::gemm(exec, transa, transb, alpha, a, b, beta, c);
#else
  exec.fence();
  KokkosBlas::gemm(transa, transb, alpha, a, b, beta, c);
  typename CV::execution_space().fence();
#endif
}

/// KokkosBlas::trsm on `exec`: called without an instance (the form 3.4 and 4.x share), so it is
/// ordered after and before exec's work by fences.
template <class Exec, class AV, class BV>
void trsm(const Exec& exec, const char* side, const char* uplo, const char* trans, const char* diag,
          typename BV::const_value_type alpha, const AV& a, const BV& b) {
  exec.fence();
  KokkosBlas::trsm(side, uplo, trans, diag, alpha, a, b);
  typename BV::execution_space().fence();
}

/// Kokkos' initialisation settings with its start-up warnings (e.g. on OMP_PROC_BIND) shown or not:
/// Kokkos::InitArguments in 3.x, Kokkos::InitializationSettings from 4.0; both start a ScopeGuard.
#if KOKKOS_VERSION >= 40000
inline Kokkos::InitializationSettings init_settings(bool warnings) {
  return Kokkos::InitializationSettings().set_disable_warnings(!warnings);
}
#else
inline Kokkos::InitArguments init_settings(bool warnings) {
  Kokkos::InitArguments args;
  args.disable_warnings = !warnings;
  return args;
}
#endif

/// The CUDA device ordinal and stream of an execution-space instance: its own for Kokkos::Cuda;
/// -1 and none for the others.
template <class Exec>
int device_of(const Exec&) { return -1; }
template <class Exec>
void* native_stream_of(const Exec&) { return nullptr; }
#if defined(KOKKOS_ENABLE_CUDA)
inline int device_of(const Kokkos::Cuda& exec) { return exec.cuda_device(); }
inline void* native_stream_of(const Kokkos::Cuda& exec) { return exec.cuda_stream(); }
#endif

// HIP and SYCL left Kokkos::Experimental in 4.0.
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
using Hip = Kokkos::HIP;
#else
using Hip = Kokkos::Experimental::HIP;
#endif
#endif
#if defined(KOKKOS_ENABLE_SYCL)
#if KOKKOS_VERSION >= 40000
using Sycl = Kokkos::SYCL;
#else
using Sycl = Kokkos::Experimental::SYCL;
#endif
#endif

}  // namespace compat

/// The randnla view of a rank-2 Kokkos view. Accepts LayoutLeft, and LayoutStride with unit
/// stride along rows; anything else throws InvalidArgument naming `name`. Host-accessible views
/// map to MemorySpace::Host, others (CudaSpace) to MemorySpace::Device.
template <class KV>
MatrixView<typename KV::value_type> view_of(const KV& v, const std::string& name = "A") {
  static_assert(KV::rank == 2, "randnla: view_of needs a rank-2 Kokkos::View");
  using layout = typename KV::array_layout;
  constexpr bool left = std::is_same<layout, Kokkos::LayoutLeft>::value;
  constexpr bool strided = std::is_same<layout, Kokkos::LayoutStride>::value;
  require(left || (strided && (v.stride(0) == 1 || v.extent(0) <= 1)), name + ".layout",
          left ? "LayoutLeft" : strided ? "LayoutStride with row stride != 1" : "LayoutRight or other",
          "must be column-major (Kokkos::LayoutLeft)");
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename KV::memory_space>::accessible;
  const index_t rows = static_cast<index_t>(v.extent(0));
  const index_t cols = static_cast<index_t>(v.extent(1));
  const index_t ld = cols > 1 ? static_cast<index_t>(v.stride(1)) : (rows > 1 ? rows : 1);
  return MatrixView<typename KV::value_type>(v.data(), rows, cols, ld, host ? MemorySpace::Host : MemorySpace::Device,
                                             name);
}

/// The randnla tensor view of a rank-N Kokkos view (N = KV::rank, 1 to 8): LayoutLeft, or
/// LayoutStride with the first index fastest; the same memory, no copy. Anything else throws
/// InvalidArgument naming `name`.
template <class KV>
TensorView<typename KV::value_type, static_cast<int>(KV::rank)> tensor_view_of(const KV& v, const std::string& name = "A") {
  constexpr int N = static_cast<int>(KV::rank);
  using layout = typename KV::array_layout;
  constexpr bool left = std::is_same<layout, Kokkos::LayoutLeft>::value;
  constexpr bool strided = std::is_same<layout, Kokkos::LayoutStride>::value;
  require(left || strided, name + ".layout", "LayoutRight or other", "must be LayoutLeft (first index fastest)");
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename KV::memory_space>::accessible;
  typename TensorView<typename KV::value_type, N>::Index extents{}, strides{};
  for (int k = 0; k < N; ++k) {
    extents[k] = static_cast<index_t>(v.extent(k));
    strides[k] = static_cast<index_t>(v.stride(k));
  }
  return TensorView<typename KV::value_type, N>(v.data(), extents, strides, host ? MemorySpace::Host : MemorySpace::Device,
                                                name);
}

}  // namespace randnla
