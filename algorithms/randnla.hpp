// randnla on Kokkos views: the public API. Every entry point takes an execution-space instance and
// rank-2 Kokkos views (LayoutLeft, or LayoutStride with unit row stride) in a memory space that
// instance can access, queues its work on the instance (on CUDA, its stream), reads A in place and
// returns its results as Kokkos views in the same memory space, allocated on the instance: no copy
// of A goes in and none of the results comes out.
//
// The instance chooses the backend (backend_for): a Kokkos::Cuda instance gets the Tensor Core
// backend on that instance's device and stream (where randnla was built with CUDA); every other
// execution space the portable Kokkos backend. Phase timings synchronise the instance between
// phases, and nothing else.
//
//   Kokkos::View<float**, Kokkos::LayoutLeft> A("A", m, n);   // filled by the application
//   auto r = randnla::rsvd(Kokkos::DefaultExecutionSpace(), A, k);
//   // r.U (m x k), r.S (k), r.V (n x k): Kokkos views in A's memory space; r.report says what ran
#pragma once

#include <Kokkos_Core.hpp>

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/distributed/distributed.hpp"
#include "randnla/lra/randomized_lra.hpp"
#include "randnla/sparse_projection/sparse_sign_projection.hpp"
#include "randnla/tsqr/tsqr.hpp"
#include "randnla/tucker/tucker.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/pca/pca.hpp"
#include "randnla/kokkos_compat.hpp"
#include "randnla/rsvd/rsvd.hpp"

namespace randnla {

/// The randomized SVD A ~ U diag(S) V^T as Kokkos views in MemSpace (FP32, LayoutLeft).
template <class MemSpace>
struct RsvdViews {
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> U;  ///< m x k, orthonormal columns
  Kokkos::View<float*, Kokkos::LayoutLeft, MemSpace> S;   ///< k, descending
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> V;  ///< n x k, orthonormal columns
  RsvdReport report;  ///< what ran, the phases' times and the error estimate
};

/// The principal components of X (m samples x n features) as Kokkos views in MemSpace (FP32,
/// LayoutLeft), shaped as scikit-learn's PCA attributes (see PcaResult).
template <class MemSpace>
struct PcaViews {
  Kokkos::View<float*, Kokkos::LayoutLeft, MemSpace> mean;                      ///< n: the column means mu
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> components;               ///< k x n, rows the principal axes
  Kokkos::View<float*, Kokkos::LayoutLeft, MemSpace> singular_values;           ///< k, descending
  Kokkos::View<float*, Kokkos::LayoutLeft, MemSpace> explained_variance;        ///< k: S_i^2 / (m - 1)
  Kokkos::View<float*, Kokkos::LayoutLeft, MemSpace> explained_variance_ratio;  ///< k: against total_variance
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> scores;  ///< m x k, U diag(S); empty unless options.scores
  double total_variance = 0;  ///< the sum of the n variances, ||X - 1 mu^T||_F^2 / (m - 1)
  RsvdReport report;          ///< what ran, the phases' times and the relative residual
};

/// The randomized LRA A ~ X Y^T as Kokkos views in MemSpace (FP32, LayoutLeft).
template <class MemSpace>
struct LraViews {
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> X;  ///< m x r
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> Y;  ///< n x r
  LraReport report;  ///< what ran, the residuals and the phases' times
};

/// A sparse sign projection's Y (k x b, FP32, LayoutLeft) as a Kokkos view in MemSpace.
template <class MemSpace>
struct SparseProjectionViews {
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> Y;  ///< k x b
  SparseProjectionReport report;  ///< the kernel, the density, the non-zeros' value and the time
};

/// A = Q R as Kokkos views in MemSpace (FP32, LayoutLeft); Q empty when not formed or written into
/// options.q_buffer.
template <class MemSpace>
struct TsqrViews {
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> Q;  ///< m x n
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> R;  ///< n x n, upper triangular
  TsqrReport report;  ///< the tree's shape and the blocks' method
};

/// A Tucker approximation A ~ core x_1 Q[0] ... x_N Q[N-1] as Kokkos views in MemSpace (FP32,
/// LayoutLeft); CoreData is A's data type (float***, ...), so the core has A's number of modes.
template <class CoreData, class MemSpace>
struct TuckerViews {
  Kokkos::View<CoreData, Kokkos::LayoutLeft, MemSpace> core;  ///< J_1 x ... x J_N
  std::vector<Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace>> Q;  ///< Q[i]: I_i x J_i, orthonormal columns
  TuckerReport report;  ///< what ran and the phases' times
};

namespace kokkos_api {

template <class Exec>
using IfExecutionSpace = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>;

/// Results allocated as Kokkos views on `exec` (a MatrixAllocator), kept for the caller: view(r.U)
/// is the view the result matrix r.U was allocated as.
template <class Exec>
class ViewOutputs {
 public:
  using Views = Kokkos::View<float**, Kokkos::LayoutLeft, typename Exec::memory_space>;

  explicit ViewOutputs(const Exec& exec) : exec_(exec), views_(std::make_shared<std::map<const float*, Views>>()) {}
  MatrixAllocator allocator() const {
    const Exec exec = exec_;
    const auto views = views_;
    return [exec, views](index_t rows, index_t cols, const std::string& name) {
      Views v(Kokkos::view_alloc(exec, "randnla::" + name, Kokkos::WithoutInitializing), rows, cols);
      (*views)[v.data()] = v;
      return Matrix<float>(std::make_shared<Views>(v), view_of(v, name));
    };
  }
  /// The view `m` was allocated as; empty for an empty m. Throws Error for a matrix this
  /// allocator did not make (a library defect).
  Views view(const Matrix<float>& m) const {
    if (m.data() == nullptr) return Views();
    const auto it = views_->find(m.data());
    if (it == views_->end()) throw Error("randnla: a result matrix was not allocated as a Kokkos view");
    return it->second;
  }
  Kokkos::View<float*, Kokkos::LayoutLeft, typename Exec::memory_space> vector(const Matrix<float>& m) const {
    return Kokkos::subview(view(m), Kokkos::ALL(), 0);
  }

 private:
  Exec exec_;
  std::shared_ptr<std::map<const float*, Views>> views_;
};

/// A view of extents[0] x ... x extents[N-1] allocated on exec, uninitialised.
template <class V, class Exec, std::size_t... I>
V allocate(const Exec& exec, const std::string& label, const std::vector<index_t>& extents, std::index_sequence<I...>) {
  return V(Kokkos::view_alloc(exec, label, Kokkos::WithoutInitializing), static_cast<std::size_t>(extents[I])...);
}

/// An unmanaged view of extents[0] x ... x extents[N-1] over `data`.
template <class V, std::size_t... I>
V wrap(float* data, const std::vector<index_t>& extents, std::index_sequence<I...>) {
  return V(data, static_cast<std::size_t>(extents[I])...);
}

template <class Exec, class View>
void require_reachable() {
  static_assert(Kokkos::SpaceAccessibility<Exec, typename View::memory_space>::accessible,
                "randnla: the execution space cannot access the view's memory space");
  static_assert(std::is_same<typename View::non_const_value_type, float>::value, "randnla: the view must hold float");
}

template <class Exec, class Result>
RsvdViews<typename Exec::memory_space> views_of(const ViewOutputs<Exec>& out, Result&& r) {
  return {out.view(r.U), out.vector(r.S), out.view(r.V), std::move(r.report)};
}

}  // namespace kokkos_api

/// Rank-k randomized SVD of A (m x n, FP32), as rsvd(Backend&, ...) documents it (Halko,
/// Martinsson & Tropp 2011, Algorithms 4.4 and 5.1; Ootomo & Yokota, Algorithm 1), on `exec`.
/// A is a rank-2 view of float (const or not) that exec can access; it is not modified.
/// Throws InvalidArgument for a layout other than column-major, and as rsvd(Backend&, ...).
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> rsvd(const Exec& exec, const AView& a, index_t k,
                                            const RsvdOptions& options = {}) {
  kokkos_api::require_reachable<Exec, AView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::views_of(out, rsvd(*backend, view_of(a, "A"), k, options, out.allocator()));
}

/// Fixed-accuracy randomized SVD of A (randQB_EI; see rsvd_fixed_accuracy(Backend&, ...)) on
/// `exec`: the rank found is S.extent(0).
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> rsvd_fixed_accuracy(const Exec& exec, const AView& a,
                                                           const FixedAccuracyOptions& options) {
  kokkos_api::require_reachable<Exec, AView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  return kokkos_api::views_of(out, rsvd_fixed_accuracy(*backend, view_of(a, "A"), options, out.allocator()));
}

/// Principal component analysis of X (m samples x n features, FP32), as pca(Backend&, ...)
/// documents it (Halko, Martinsson & Tropp 2011, Algorithms 4.4 and 5.1, on X - 1 mu^T centred
/// implicitly as in torch.pca_lowrank), on `exec`. X is a rank-2 view of float (const or not)
/// that exec can access; it is read in place, neither copied nor modified.
/// Throws InvalidArgument for a layout other than column-major, and as pca(Backend&, ...).
template <class Exec, class XView, class = kokkos_api::IfExecutionSpace<Exec>>
PcaViews<typename Exec::memory_space> pca(const Exec& exec, const XView& x, index_t k, const PcaOptions& options = {}) {
  kokkos_api::require_reachable<Exec, XView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  PcaResult r = pca(*backend, view_of(x, "X"), k, options, out.allocator());
  PcaViews<typename Exec::memory_space> v;
  v.mean = out.vector(r.mean);
  v.components = out.view(r.components);
  v.singular_values = out.vector(r.singular_values);
  v.explained_variance = out.vector(r.explained_variance);
  v.explained_variance_ratio = out.vector(r.explained_variance_ratio);
  v.scores = out.view(r.scores);
  v.total_variance = r.total_variance;
  v.report = std::move(r.report);
  return v;
}

/// Mixed-precision randomized LRA of A with optional refinement, on the residual with recompression
/// (Baboulin et al. 2024, Algorithms 1, 3-5) or on the subspace (see randomized_lra(Backend&, ...)),
/// on `exec`. A is not modified
/// unless it is passed as options.residual_buffer (view_of(A)).
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
LraViews<typename Exec::memory_space> randomized_lra(const Exec& exec, const AView& a, index_t k,
                                                     const LraOptions& options = {}) {
  kokkos_api::require_reachable<Exec, AView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  LraResult r = randomized_lra(*backend, view_of(a, "A"), k, options, out.allocator());
  return {out.view(r.X), out.view(r.Y), std::move(r.report)};
}

/// Very sparse random projection Y = S A without storing S (Li, Hastie & Church 2006; see
/// sparse_sign_projection(Backend&, ...)) on `exec`; A is D x b or b x D as options.layout says.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
SparseProjectionViews<typename Exec::memory_space> sparse_sign_projection(const Exec& exec, const AView& a, index_t k,
                                                                          const SparseProjectionOptions& options = {}) {
  kokkos_api::require_reachable<Exec, AView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  SparseProjectionResult r = sparse_sign_projection(*backend, view_of(a, "A"), k, options, out.allocator());
  return {out.view(r.Y), std::move(r.report)};
}

/// Tall-skinny QR A = Q R by a reduction tree (see tsqr(Backend&, ...)) on `exec`.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> tsqr(const Exec& exec, const AView& a, const TsqrOptions& options = {}) {
  kokkos_api::require_reachable<Exec, AView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  TsqrResult r = tsqr(*backend, view_of(a, "A"), options, out.allocator());
  TsqrViews<typename Exec::memory_space> v;
  if (options.form_q && options.q_buffer.empty()) v.Q = out.view(r.Q);
  v.R = out.view(r.R);
  v.report = std::move(r.report);
  return v;
}

/// Rank-(J_1, ..., J_N) Tucker approximation of the 3- to 5-way view A (LayoutLeft, float) by
/// random projection (Ootomo & Yokota, Sec. 5.2; see rp_hosvd(Backend&, ...)) on `exec`; ranks
/// holds J_1 .. J_N. A is read in place and not modified.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TuckerViews<typename AView::non_const_data_type, typename Exec::memory_space> rp_hosvd(
    const Exec& exec, const AView& a, const std::vector<index_t>& ranks, const TuckerOptions& options = {}) {
  kokkos_api::require_reachable<Exec, AView>();
  constexpr int N = static_cast<int>(AView::rank);
  static_assert(N >= 3 && N <= 5, "randnla::rp_hosvd: views of 3 to 5 modes");
  using CoreView = Kokkos::View<typename AView::non_const_data_type, Kokkos::LayoutLeft, typename Exec::memory_space>;
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  TuckerResult r = rp_hosvd(*backend, tensor_view_of(a, "A"), ranks, options, out.allocator());
  // The core comes back as its mode-0 unfolding (J_1 x J_2 ... J_N, the same LayoutLeft order): its
  // few elements are copied into a view of N modes.
  using Unmanaged = Kokkos::View<typename AView::non_const_data_type, Kokkos::LayoutLeft, typename Exec::memory_space,
                                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const CoreView core = kokkos_api::allocate<CoreView>(exec, "randnla::core", ranks, std::make_index_sequence<N>());
  Kokkos::deep_copy(exec, core, kokkos_api::wrap<Unmanaged>(r.core.data(), ranks, std::make_index_sequence<N>()));
  TuckerViews<typename AView::non_const_data_type, typename Exec::memory_space> v{core, {}, std::move(r.report)};
  for (const Matrix<float>& q : r.factors) v.Q.push_back(out.view(q));
  return v;
}

/// Rank-k randomized SVD of A distributed by rows over `comm` (this rank's rows as a rank-2 view;
/// see distributed_rsvd(Backend&, ...)) on `exec`: U holds this rank's rows of U, S and V are the
/// same on every rank; r.report, and the distribution (transport, ranks, words sent) in
/// `distribution` when non-null.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> distributed_rsvd(const Exec& exec, Communicator& comm, const AView& a, index_t k,
                                                        const RsvdOptions& options = {},
                                                        DistributedReport* distribution = nullptr) {
  kokkos_api::require_reachable<Exec, AView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  DistributedRsvdResult r = distributed_rsvd(*backend, comm, view_of(a, "A"), k, options, out.allocator());
  if (distribution) *distribution = r.distribution;
  return kokkos_api::views_of(out, std::move(r));
}

/// Fixed-accuracy randomized SVD of A distributed by rows over `comm` (see
/// distributed_rsvd_fixed_accuracy(Backend&, ...)) on `exec`: the rank found is S's extent on every
/// rank, U holds this rank's rows.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> distributed_rsvd_fixed_accuracy(const Exec& exec, Communicator& comm,
                                                                       const AView& a, const FixedAccuracyOptions& options,
                                                                       DistributedReport* distribution = nullptr) {
  kokkos_api::require_reachable<Exec, AView>();
  kokkos_api::ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  DistributedRsvdResult r = distributed_rsvd_fixed_accuracy(*backend, comm, view_of(a, "A"), options, out.allocator());
  if (distribution) *distribution = r.distribution;
  return kokkos_api::views_of(out, std::move(r));
}

namespace kokkos_api {

/// The Kokkos entry of the distributed QR factorisation `factor`: Q (this rank's rows) and R as
/// views, the report into `distribution`.
template <class Exec, class AView>
TsqrViews<typename Exec::memory_space> distributed_qr(const Exec& exec, Communicator& comm, const AView& a,
                                                      DistributedQr factor, DistributedReport* distribution) {
  require_reachable<Exec, AView>();
  ViewOutputs<Exec> out(exec);
  auto backend = backend_for(exec);
  const DistributedQrResult r = factor(*backend, comm, view_of(a, "A"), out.allocator());
  if (distribution) *distribution = r.report;
  TsqrViews<typename Exec::memory_space> v;
  v.Q = out.view(r.Q);
  v.R = out.view(r.R);
  v.report.backend = backend->description();
  v.report.levels = 1;  // the stack of the ranks' R factors above their local QRs
  return v;
}

}  // namespace kokkos_api

/// A = Q R for A distributed by rows over `comm` (see distributed_tsqr(Backend&, ...)) on `exec`:
/// Q holds this rank's rows, R is the same on every rank.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> distributed_tsqr(const Exec& exec, Communicator& comm, const AView& a,
                                                        DistributedReport* distribution = nullptr) {
  return kokkos_api::distributed_qr(exec, comm, a, DistributedQr{distributed_tsqr}, distribution);
}

/// A = Q R for A distributed by rows over `comm` by CholeskyQR2 (see
/// distributed_cholesky_qr2(Backend&, ...)) on `exec`: Q holds this rank's rows, R is the same on
/// every rank.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> distributed_cholesky_qr2(const Exec& exec, Communicator& comm, const AView& a,
                                                                DistributedReport* distribution = nullptr) {
  return kokkos_api::distributed_qr(exec, comm, a, DistributedQr{distributed_cholesky_qr2}, distribution);
}

/// A = Q R for A distributed by rows over `comm` by the sketch-preconditioned CholeskyQR (see
/// distributed_rand_cholesky_qr(Backend&, ...)) on `exec`: Q holds this rank's rows, R is the same
/// on every rank.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> distributed_rand_cholesky_qr(const Exec& exec, Communicator& comm, const AView& a,
                                                                    DistributedReport* distribution = nullptr) {
  return kokkos_api::distributed_qr(exec, comm, a, DistributedQr{distributed_rand_cholesky_qr}, distribution);
}

/// Y (m x l, m >= l, FP32) := an orthonormal basis of its range, in place, on `exec`; returns the
/// method that produced it (see orthonormalize(Backend&, ...)).
template <class Exec, class YView, class = kokkos_api::IfExecutionSpace<Exec>>
Orthonormalizer orthonormalize(const Exec& exec, const YView& y, Orthonormalizer method = Orthonormalizer::Auto) {
  kokkos_api::require_reachable<Exec, YView>();
  auto backend = backend_for(exec);
  return orthonormalize(*backend, view_of(y, "Y"), method);
}

}  // namespace randnla

// Every algorithm's own Kokkos entry points (algorithms/<name>/kokkos_api.hpp), generated from
// RANDNLA_ALGORITHMS: a new algorithm adds its file, not a line here.
#include "randnla/algorithms.hpp"
