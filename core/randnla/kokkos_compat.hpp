// The one place that knows how Kokkos 3.4 and Kokkos 4.x differ. Nothing else in the tree tests
// Kokkos or Kokkos Kernels versions.
#pragma once

#include <Kokkos_Core.hpp>
#include <KokkosBlas3_gemm.hpp>
#include <KokkosBlas3_trmm.hpp>
#include <KokkosBlas3_trsm.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

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

/// KokkosBlas::trmm on `exec` (B := alpha op(A) B or alpha B op(A), A triangular, B overwritten):
/// called without an instance, as trsm.
template <class Exec, class AV, class BV>
void trmm(const Exec& exec, const char* side, const char* uplo, const char* trans, const char* diag,
          typename BV::const_value_type alpha, const AV& a, const BV& b) {
  exec.fence();
  KokkosBlas::trmm(side, uplo, trans, diag, alpha, a, b);
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

/// How the memory of a rank-2 Kokkos view A (m x n) reads as a column-major (BLAS) matrix.
enum class ViewStorage {
  ColumnMajor,  ///< A itself: LayoutLeft, or strides (1, ld) with ld >= m (view_of)
  RowMajor,     ///< A^T, n x m: LayoutRight, or strides (ld, 1) with ld >= n (transposed_view_of)
  Strided       ///< neither stride is 1 (or the strides overlap): no column-major matrix of A's memory
};

/// The storage of a rank-2 view, from its extents and strides alone (any layout). Where both
/// readings hold (an empty view, 1 x n, n x 1 with unit stride, 1 x 1) it is ColumnMajor: the
/// classification is deterministic and a view is read as A^T only where it must be.
template <class KV>
ViewStorage storage_of(const KV& v) {
  static_assert(KV::rank == 2, "randnla: storage_of needs a rank-2 Kokkos::View");
  const index_t m = static_cast<index_t>(v.extent(0)), n = static_cast<index_t>(v.extent(1));
  const index_t s0 = static_cast<index_t>(v.stride(0)), s1 = static_cast<index_t>(v.stride(1));
  if (m == 0 || n == 0) return ViewStorage::ColumnMajor;
  if ((m == 1 || s0 == 1) && (n == 1 || s1 >= m)) return ViewStorage::ColumnMajor;
  if ((n == 1 || s1 == 1) && (m == 1 || s0 >= n)) return ViewStorage::RowMajor;
  return ViewStorage::Strided;
}

/// "(s0, s1)": a rank-2 view's strides, for messages.
template <class KV>
std::string strides_of(const KV& v) {
  return "(" + std::to_string(v.stride(0)) + ", " + std::to_string(v.stride(1)) + ")";
}

namespace compat {
/// The randnla memory space of a Kokkos view type: Host where the host can access it, else Device.
template <class KV>
MemorySpace space_of() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename KV::memory_space>::accessible ? MemorySpace::Host
                                                                                              : MemorySpace::Device;
}
}  // namespace compat

/// The randnla view of a rank-2 Kokkos view A (m x n) whose storage_of is ColumnMajor (LayoutLeft,
/// or LayoutStride with stride(0) = 1), the same memory: ld = stride(1). Anything else throws
/// InvalidArgument naming `name` + ".layout" and the strides. Host-accessible views map to
/// MemorySpace::Host, others (CudaSpace) to MemorySpace::Device.
template <class KV>
MatrixView<typename KV::value_type> view_of(const KV& v, const std::string& name = "A") {
  static_assert(KV::rank == 2, "randnla: view_of needs a rank-2 Kokkos::View");
  require(storage_of(v) == ViewStorage::ColumnMajor, name + ".layout", "strides " + strides_of(v),
          "must be column-major (Kokkos::LayoutLeft, or LayoutStride with stride(0) = 1)");
  const index_t rows = static_cast<index_t>(v.extent(0));
  const index_t cols = static_cast<index_t>(v.extent(1));
  const index_t ld = cols > 1 && rows > 0 ? static_cast<index_t>(v.stride(1)) : (rows > 1 ? rows : 1);
  return MatrixView<typename KV::value_type>(v.data(), rows, cols, ld, compat::space_of<KV>(), name);
}

/// The randnla view of A^T (n x m, column-major) for a rank-2 Kokkos view A (m x n) whose
/// storage_of is RowMajor (LayoutRight, or LayoutStride with stride(1) = 1), the same memory:
/// ld = stride(0). Anything else throws InvalidArgument naming `name` + ".layout" and the strides.
template <class KV>
MatrixView<typename KV::value_type> transposed_view_of(const KV& v, const std::string& name = "A") {
  static_assert(KV::rank == 2, "randnla: transposed_view_of needs a rank-2 Kokkos::View");
  require(storage_of(v) == ViewStorage::RowMajor, name + ".layout", "strides " + strides_of(v),
          "must be row-major (Kokkos::LayoutRight, or LayoutStride with stride(1) = 1)");
  const index_t rows = static_cast<index_t>(v.extent(1));
  const index_t cols = static_cast<index_t>(v.extent(0));
  const index_t ld = cols > 1 ? static_cast<index_t>(v.stride(0)) : (rows > 1 ? rows : 1);
  return MatrixView<typename KV::value_type>(v.data(), rows, cols, ld, compat::space_of<KV>(), name + "^T");
}

/// The randnla tensor view of a rank-N Kokkos view (N = KV::rank, 1 to 8) with its modes in the
/// order `order` (mode k of the tensor view is mode order[k] of v; N distinct modes): the same
/// memory, no copy. TensorView's constructor checks the strides (the first mode's must be 1, and no
/// two elements may share memory) and throws InvalidArgument naming `name` otherwise.
template <class KV>
TensorView<typename KV::value_type, static_cast<int>(KV::rank)> tensor_view_of(const KV& v, const std::vector<int>& order,
                                                                               const std::string& name) {
  constexpr int N = static_cast<int>(KV::rank);
  require(order.size() == static_cast<std::size_t>(N), name + ".order.size", order.size(), "must be " + std::to_string(N));
  typename TensorView<typename KV::value_type, N>::Index extents{}, strides{};
  for (int k = 0; k < N; ++k) {
    extents[k] = static_cast<index_t>(v.extent(order[k]));
    strides[k] = static_cast<index_t>(v.stride(order[k]));
  }
  return TensorView<typename KV::value_type, N>(v.data(), extents, strides, compat::space_of<KV>(), name);
}

/// The randnla tensor view of a rank-N Kokkos view in its own mode order: LayoutLeft, or LayoutStride
/// with the first index fastest (TensorView's checks; InvalidArgument naming `name` otherwise).
template <class KV>
TensorView<typename KV::value_type, static_cast<int>(KV::rank)> tensor_view_of(const KV& v, const std::string& name = "A") {
  std::vector<int> identity(static_cast<std::size_t>(KV::rank));
  for (std::size_t k = 0; k < identity.size(); ++k) identity[k] = static_cast<int>(k);
  return tensor_view_of(v, identity, name);
}

/// The order of a rank-N view's modes in which its memory is packed first index fastest (as a
/// LayoutLeft view's is): the identity for a packed LayoutLeft view, the reverse for a packed
/// LayoutRight one, the modes by ascending stride for a LayoutStride one (ties, which only modes of
/// extent 1 have in a packed view, in the reverse order, as LayoutRight's). Empty where no order is
/// packed (padding between slices). The identity for an empty view (an extent 0: no memory to read).
template <class KV>
std::vector<int> packed_order_of(const KV& v) {
  constexpr int N = static_cast<int>(KV::rank);
  std::vector<int> order(N);
  for (int k = 0; k < N; ++k) order[k] = k;
  if (v.size() == 0) return order;
  const auto packed = [&v](const std::vector<int>& o) {
    index_t stride = 1;
    for (int k : o) {
      if (v.extent(k) > 1 && static_cast<index_t>(v.stride(k)) != stride) return false;
      stride *= static_cast<index_t>(v.extent(k));
    }
    return true;
  };
  if (packed(order)) return order;
  std::reverse(order.begin(), order.end());
  std::stable_sort(order.begin(), order.end(), [&v](int a, int b) { return v.stride(a) < v.stride(b); });
  return packed(order) ? order : std::vector<int>();
}

}  // namespace randnla
