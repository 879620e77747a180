// The randomized SVD and PCA of sparse matrices and of user operators on Kokkos: a
// KokkosSparse::CrsMatrix or a pair of callbacks on Kokkos views in, Kokkos views out (RsvdViews,
// PcaViews), on an execution-space instance as the other entries of randnla.hpp.
//
//   KokkosSparse::CrsMatrix<float, int, Kokkos::DefaultExecutionSpace, void, int> A = ...;
//   auto r = randnla::rsvd(Kokkos::DefaultExecutionSpace(), A, k);    // r.U, r.S, r.V
//   auto p = randnla::pca(Kokkos::DefaultExecutionSpace(), A, k);     // centred implicitly
#pragma once

#include <KokkosSparse_CrsMatrix.hpp>

#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "randnla/randnla.hpp"
#include "randnla/sparse/sparse_rsvd.hpp"

namespace randnla {

/// A linear operator A (rows x cols) on MemSpace known only by its products (matrix-free use):
/// apply(X, Y) sets Y (rows x l) := A X for X (cols x l); apply_transpose(Y, Z) sets Z (cols x l)
/// := A^T Y for Y (rows x l). The views are FP32, LayoutLeft, packed, in MemSpace, and valid only
/// during the call; each callback runs on the calling thread and must queue its work on the
/// execution-space instance the algorithm was given (or fence before it returns).
template <class MemSpace>
struct UserOperator {
  using View = Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace>;              ///< Y or Z
  using ConstView = Kokkos::View<const float**, Kokkos::LayoutLeft, MemSpace>;   ///< X or Y
  index_t rows = 0;  ///< m, A's rows
  index_t cols = 0;  ///< n, A's columns
  std::function<void(const ConstView& x, const View& y)> apply;            ///< Y := A X
  std::function<void(const ConstView& y, const View& z)> apply_transpose;  ///< Z := A^T Y
  /// ||A||_F where known (>= 0; negative: unknown): rsvd_fixed_accuracy and pca need it.
  double frobenius_norm = -1.0;
};

/// The CSR matrices the Kokkos entries take: FP32 values, int offsets and column indices (the types
/// cuSPARSE's CUSPARSE_INDEX_32I and Kokkos Kernels' own instantiations use).
template <class Device>
using CsrMatrix = KokkosSparse::CrsMatrix<float, int, Device, void, int>;

namespace kokkos_api {

/// The CsrView of `a` (the same arrays, no copy), its extents checked against each other.
template <class Exec, class Device>
CsrView csr_view_of(const CsrMatrix<Device>& a, const std::string& name) {
  using Space = typename CsrMatrix<Device>::memory_space;
  static_assert(Kokkos::SpaceAccessibility<Exec, Space>::accessible,
                "randnla: the execution space cannot access the matrix's memory space");
  CsrView v;
  v.rows = a.numRows(), v.cols = a.numCols(), v.nnz = a.nnz();
  const index_t offsets = static_cast<index_t>(a.graph.row_map.extent(0));
  require(offsets == v.rows + 1 || (v.rows == 0 && offsets == 0), name + ".graph.row_map.extent(0)", offsets,
          "must be numRows() + 1 = " + std::to_string(v.rows + 1));
  const index_t values = static_cast<index_t>(a.values.extent(0));
  require(values == v.nnz, name + ".values.extent(0)", values, "must be nnz() = " + std::to_string(v.nnz));
  v.row_ptr = a.graph.row_map.data(), v.col_idx = a.graph.entries.data(), v.values = a.values.data();
  v.space = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space>::accessible ? MemorySpace::Host : MemorySpace::Device;
  return v;
}

/// The callback of OperatorCallbacks calling f on packed Kokkos views of its arguments (empty where f is).
template <class MemSpace, class F>
std::function<void(MatrixView<const float>, MatrixView<float>)> on_views(const F& f) {
  if (!f) return nullptr;
  return [f](MatrixView<const float> x, MatrixView<float> y) {
    using U = UserOperator<MemSpace>;
    f(typename U::ConstView(x.data(), static_cast<std::size_t>(x.rows()), static_cast<std::size_t>(x.cols())),
      typename U::View(y.data(), static_cast<std::size_t>(y.rows()), static_cast<std::size_t>(y.cols())));
  };
}

/// The OperatorCallbacks of `a` for the Backend-level entries.
template <class Exec, class MemSpace>
OperatorCallbacks callbacks_of(const UserOperator<MemSpace>& a) {
  static_assert(Kokkos::SpaceAccessibility<Exec, MemSpace>::accessible,
                "randnla: the execution space cannot access the operator's memory space");
  OperatorCallbacks c{a.rows, a.cols, on_views<MemSpace>(a.apply), on_views<MemSpace>(a.apply_transpose)};
  c.frobenius_norm = a.frobenius_norm;
  return c;
}

}  // namespace kokkos_api

/// Rank-k randomized SVD of the sparse matrix A (m x n; FP32 values, int offsets and column indices,
/// in a memory space `exec` can access), as rsvd(Backend&, const CsrView&, ...) documents it
/// (Halko, Martinsson & Tropp 2011, Algorithms 4.4 and 5.1; Omega drawn in FP32 and stored; each
/// product with A one CSR product: cuSPARSE SpMM on a Kokkos::Cuda instance, Kokkos Kernels' spmv
/// elsewhere), on `exec`. A is read in place: validated (sorted, in-range column indices, monotone
/// row_ptr with row_ptr[0] = 0 and row_ptr[m] = nnz, finite values) in one pass on the backend,
/// never copied nor modified. U (m x k), S (k), V (n x k): FP32, LayoutLeft, in exec's memory space.
/// Throws InvalidArgument for extents of A's views that disagree (A.graph.row_map.extent(0),
/// A.values.extent(0)), and as rsvd(Backend&, const CsrView&, ...).
template <class Exec, class Device, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> rsvd(const Exec& exec, const CsrMatrix<Device>& a, index_t k,
                                            const RsvdOptions& options = {}) {
  const CsrView view = kokkos_api::csr_view_of<Exec>(a, "A");
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::views_of(out, rsvd(*backend, view, k, options, out.allocator()), "A: CSR, read in place", false);
}

/// Fixed-accuracy randomized SVD of the sparse matrix A (randQB_EI; see
/// rsvd_fixed_accuracy(Backend&, const CsrView&, ...)) on `exec`: the rank found is S.extent(0).
/// Throws InvalidArgument for extents of A's views that disagree, and as that function.
template <class Exec, class Device, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> rsvd_fixed_accuracy(const Exec& exec, const CsrMatrix<Device>& a,
                                                           const FixedAccuracyOptions& options) {
  const CsrView view = kokkos_api::csr_view_of<Exec>(a, "A");
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::views_of(out, rsvd_fixed_accuracy(*backend, view, options, out.allocator()),
                              "A: CSR, read in place", false);
}

/// Rank-k randomized SVD of the user's operator `a` (see UserOperator; MemSpace one `exec` can
/// access), as rsvd(Backend&, const OperatorCallbacks&, ...) documents it (Halko, Martinsson &
/// Tropp 2011, Algorithms 4.4 and 5.1; Omega drawn in FP32 and stored, then a.apply), on `exec`.
/// U (m x k), S (k), V (n x k): FP32, LayoutLeft, in exec's memory space.
/// Throws InvalidArgument as rsvd(Backend&, const OperatorCallbacks&, ...); what the callbacks
/// throw passes through.
template <class Exec, class MemSpace, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> rsvd(const Exec& exec, const UserOperator<MemSpace>& a, index_t k,
                                            const RsvdOptions& options = {}) {
  const OperatorCallbacks callbacks = kokkos_api::callbacks_of<Exec>(a);
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::views_of(out, rsvd(*backend, callbacks, k, options, out.allocator()),
                              "A: a user operator", false);
}

/// Fixed-accuracy randomized SVD of the user's operator `a` (randQB_EI; see
/// rsvd_fixed_accuracy(Backend&, const OperatorCallbacks&, ...)) on `exec`, relative to
/// a.frobenius_norm, which must be given: the rank found is S.extent(0). Throws InvalidArgument as
/// that function; what the callbacks throw passes through.
template <class Exec, class MemSpace, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> rsvd_fixed_accuracy(const Exec& exec, const UserOperator<MemSpace>& a,
                                                           const FixedAccuracyOptions& options) {
  const OperatorCallbacks callbacks = kokkos_api::callbacks_of<Exec>(a);
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::views_of(out, rsvd_fixed_accuracy(*backend, callbacks, options, out.allocator()),
                              "A: a user operator", false);
}

/// Principal component analysis of the user's operator X (m samples x n features), centred
/// implicitly (see pca(Backend&, const OperatorCallbacks&, ...)); x.frobenius_norm must be given.
/// Results as PcaViews in exec's memory space. Throws InvalidArgument as that function; what the
/// callbacks throw passes through.
template <class Exec, class MemSpace, class = kokkos_api::IfExecutionSpace<Exec>>
PcaViews<typename Exec::memory_space> pca(const Exec& exec, const UserOperator<MemSpace>& x, index_t k,
                                          const PcaOptions& options = {}) {
  const OperatorCallbacks callbacks = kokkos_api::callbacks_of<Exec>(x);
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::pca_views_of(out, pca(*backend, callbacks, k, options, out.allocator()), "X: a user operator");
}

/// Principal component analysis of the sparse matrix X (m samples x n features, as in rsvd's
/// sparse entry) with X - 1 mu^T applied implicitly, never formed (torch.pca_lowrank's centring;
/// see pca(Backend&, const CsrView&, ...)), on `exec`. Results as PcaViews in exec's memory space.
/// Throws InvalidArgument for extents of X's views that disagree, and as pca(Backend&, const CsrView&, ...).
template <class Exec, class Device, class = kokkos_api::IfExecutionSpace<Exec>>
PcaViews<typename Exec::memory_space> pca(const Exec& exec, const CsrMatrix<Device>& x, index_t k,
                                          const PcaOptions& options = {}) {
  const CsrView view = kokkos_api::csr_view_of<Exec>(x, "X");
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::pca_views_of(out, pca(*backend, view, k, options, out.allocator()), "X: CSR, read in place");
}

}  // namespace randnla
