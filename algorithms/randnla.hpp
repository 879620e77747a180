// randnla on Kokkos views: the public API. Every entry point takes an execution-space instance and
// Kokkos views of float in a memory space that instance can access, queues its work on the instance
// (on CUDA, its stream), and returns its results as Kokkos views (LayoutLeft) in the execution
// space's memory space, allocated on the instance.
//
// Layouts: a matrix view may be LayoutLeft, LayoutRight or LayoutStride (storage_of classifies it).
// A column-major one (LayoutLeft, or stride(0) = 1) is read in place. A row-major one (LayoutRight,
// or stride(1) = 1) is A^T column-major: rsvd, rsvd_fixed_accuracy, pca, randomized_lra and
// sparse_sign_projection read it in place, with no copy, by running on A^T and swapping the roles of
// their results (or, for pca, reading X through its transpose); the distributed RSVDs read a
// row-major block in place through its transpose, as pca does; orthonormalize runs its FP64
// CholeskyQR chain on Y^T in Y's memory; tsqr and the distributed QRs transpose A into the memory of
// the Q they return and factor it there (so a row-major A costs no memory beyond a column-major
// one). A view with neither stride 1 is copied into LayoutLeft first. A tensor view for rp_hosvd is read in place in whatever mode order packs it (LayoutRight:
// the reverse), and copied otherwise. Every result says how its input was read (`input`).
// The element type and rank are checked at compile time: another type or rank fails with a
// static_assert "randnla: ..." as the first error.
//
// The instance chooses the backend (backend_for): a Kokkos::Cuda instance gets the Tensor Core
// backend on that instance's device and stream (where randnla was built with CUDA); every other
// execution space the portable Kokkos backend. Phase timings synchronise the instance between
// phases, and nothing else.
//
//   Kokkos::View<float**> A("A", m, n);   // filled by the application; LayoutRight on the host
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

/// The randomized SVD A ~ U diag(S) V^T as Kokkos views in MemSpace (LayoutLeft; FP32, or FP64
/// for FP64 data).
template <class MemSpace, class T = float>
struct RsvdViews {
  Kokkos::View<T**, Kokkos::LayoutLeft, MemSpace> U;  ///< m x k, orthonormal columns
  Kokkos::View<T*, Kokkos::LayoutLeft, MemSpace> S;   ///< k, descending
  Kokkos::View<T**, Kokkos::LayoutLeft, MemSpace> V;  ///< n x k, orthonormal columns
  RsvdReport report;  ///< what ran, the phases' times and the error estimate
  /// How A was read: "A: column-major, read in place", "A: row-major, read in place as A^T" or
  /// "A: copied to LayoutLeft (strides (s0, s1))".
  std::string input;
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
  std::string input;          ///< how X was read, as RsvdViews::input says
};

/// The randomized LRA A ~ X Y^T as Kokkos views in MemSpace (FP32, LayoutLeft).
template <class MemSpace>
struct LraViews {
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> X;  ///< m x r
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> Y;  ///< n x r
  LraReport report;   ///< what ran, the residuals and the phases' times
  std::string input;  ///< how A was read, as RsvdViews::input says
};

/// A sparse sign projection's Y (k x b, FP32, LayoutLeft) as a Kokkos view in MemSpace.
template <class MemSpace>
struct SparseProjectionViews {
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> Y;  ///< k x b
  SparseProjectionReport report;  ///< the kernel, the density, the non-zeros' value and the time
  std::string input;              ///< how A was read, as RsvdViews::input says
};

/// A = Q R as Kokkos views in MemSpace (FP32, LayoutLeft); Q empty when not formed or written into
/// options.q_buffer.
template <class MemSpace>
struct TsqrViews {
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> Q;  ///< m x n
  Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace> R;  ///< n x n, upper triangular
  TsqrReport report;  ///< the tree's shape and the blocks' method
  /// How A was read: "A: column-major, read in place" or "A: copied to LayoutLeft (strides (s0, s1))"
  /// (a row-major A too: the QR factors column-major memory).
  std::string input;
};

/// A Tucker approximation A ~ core x_1 Q[0] ... x_N Q[N-1] as Kokkos views in MemSpace (FP32,
/// LayoutLeft); CoreData is A's data type (float***, ...), so the core has A's number of modes, in
/// A's mode order whatever A's layout.
template <class CoreData, class MemSpace>
struct TuckerViews {
  Kokkos::View<CoreData, Kokkos::LayoutLeft, MemSpace> core;  ///< J_1 x ... x J_N
  std::vector<Kokkos::View<float**, Kokkos::LayoutLeft, MemSpace>> Q;  ///< Q[i]: I_i x J_i, orthonormal columns
  TuckerReport report;  ///< what ran and the phases' times
  /// How A was read: "A: read in place, modes in the order (0, 1, 2)" (LayoutLeft; (2, 1, 0) for a
  /// LayoutRight A, the order in which the run took the modes) or "A: copied to LayoutLeft (strides
  /// (...))".
  std::string input;
};

namespace kokkos_api {

template <class Exec>
using IfExecutionSpace = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>;

/// The element types the Kokkos entries take: FP32 only. The one place that says so.
template <class T>
using AcceptedElement = std::is_same<std::remove_const_t<T>, float>;

/// The element and memory-space checks of every Kokkos entry, as static_asserts that fire where the
/// entry names this class, before anything else of the entry is instantiated.
template <class Exec, class View>
struct ElementAndSpace {
  static_assert(Kokkos::is_view<View>::value, "randnla: the input must be a Kokkos::View");
  static_assert(AcceptedElement<typename View::value_type>::value, "randnla: the view must hold float (FP32)");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename View::memory_space>::accessible,
                "randnla: the execution space cannot access the view's memory space");
  static constexpr bool value = AcceptedElement<typename View::value_type>::value &&
                                Kokkos::SpaceAccessibility<Exec, typename View::memory_space>::accessible;
};

/// rsvd's input: a rank-2 view of float or double (FP64 data: rsvd(Backend&, MatrixView<const
/// double>, ...)) that Exec can access.
template <class Exec, class View>
struct Fp32OrFp64MatrixInput {
  static_assert(Kokkos::is_view<View>::value, "randnla: the input must be a Kokkos::View");
  static constexpr bool element_ok = std::is_same<std::remove_const_t<typename View::value_type>, float>::value ||
                                     std::is_same<std::remove_const_t<typename View::value_type>, double>::value;
  static_assert(element_ok, "randnla: the view must hold float (FP32) or double (FP64)");
  static_assert(Kokkos::SpaceAccessibility<Exec, typename View::memory_space>::accessible,
                "randnla: the execution space cannot access the view's memory space");
  static_assert(static_cast<int>(View::rank) == 2, "randnla: the view must be rank 2 (a matrix)");
  static constexpr bool value = element_ok && Kokkos::SpaceAccessibility<Exec, typename View::memory_space>::accessible &&
                                static_cast<int>(View::rank) == 2;
};

/// A matrix input: a rank-2 view of float that Exec can access.
template <class Exec, class View>
struct MatrixInput : ElementAndSpace<Exec, View> {
  static_assert(static_cast<int>(View::rank) == 2, "randnla: the view must be rank 2 (a matrix)");
  static constexpr bool value = ElementAndSpace<Exec, View>::value && static_cast<int>(View::rank) == 2;
};

/// rp_hosvd's input: a view of float of 3 to 5 modes that Exec can access.
template <class Exec, class View>
struct TensorInput : ElementAndSpace<Exec, View> {
  static_assert(static_cast<int>(View::rank) >= 3 && static_cast<int>(View::rank) <= 5,
                "randnla: rp_hosvd takes views of 3 to 5 modes");
  static constexpr bool value =
      ElementAndSpace<Exec, View>::value && static_cast<int>(View::rank) >= 3 && static_cast<int>(View::rank) <= 5;
};

/// Results (of T) allocated as Kokkos views on `exec` (a MatrixAllocatorOf<T>), kept for the caller:
/// view(r.U) is the view the result matrix r.U was allocated as.
template <class Exec, class T = float>
class ViewOutputs {
 public:
  using Views = Kokkos::View<T**, Kokkos::LayoutLeft, typename Exec::memory_space>;

  explicit ViewOutputs(const Exec& exec) : exec_(exec), views_(std::make_shared<std::map<const T*, Views>>()) {}
  MatrixAllocatorOf<T> allocator() const {
    const Exec exec = exec_;
    const auto views = views_;
    return [exec, views](index_t rows, index_t cols, const std::string& name) {
      Views v(Kokkos::view_alloc(exec, "randnla::" + name, Kokkos::WithoutInitializing), rows, cols);
      (*views)[v.data()] = v;
      return Matrix<T>(std::make_shared<Views>(v), view_of(v, name));
    };
  }
  /// The view `m` was allocated as; empty for an empty m. Throws Error for a matrix this
  /// allocator did not make (a library defect).
  Views view(const Matrix<T>& m) const {
    if (m.data() == nullptr) return Views();
    const auto it = views_->find(m.data());
    if (it == views_->end()) throw Error("randnla: a result matrix was not allocated as a Kokkos view");
    return it->second;
  }
  Kokkos::View<T*, Kokkos::LayoutLeft, typename Exec::memory_space> vector(const Matrix<T>& m) const {
    return Kokkos::subview(view(m), Kokkos::ALL(), 0);
  }

 private:
  Exec exec_;
  std::shared_ptr<std::map<const T*, Views>> views_;
};

/// A view of extents[0] x ... x extents[N-1] allocated on exec, uninitialised.
template <class V, class Exec, std::size_t... I>
V allocate(const Exec& exec, const std::string& label, const std::vector<index_t>& extents, std::index_sequence<I...>) {
  return V(Kokkos::view_alloc(exec, label, Kokkos::WithoutInitializing), static_cast<std::size_t>(extents[I])...);
}

/// A LayoutLeft copy of `a` (any layout) in a's memory space, made on exec.
template <class Exec, class AView>
Kokkos::View<typename AView::non_const_data_type, Kokkos::LayoutLeft, typename AView::memory_space> layout_left_copy(
    const Exec& exec, const AView& a, const std::string& name) {
  using Copy = Kokkos::View<typename AView::non_const_data_type, Kokkos::LayoutLeft, typename AView::memory_space>;
  std::vector<index_t> extents(static_cast<std::size_t>(AView::rank));
  for (std::size_t k = 0; k < extents.size(); ++k) extents[k] = static_cast<index_t>(a.extent(k));
  const Copy copy = allocate<Copy>(exec, "randnla::" + name + " (LayoutLeft copy)", extents,
                                   std::make_index_sequence<static_cast<std::size_t>(AView::rank)>());
  Kokkos::deep_copy(exec, copy, a);
  return copy;
}

/// A matrix view as the library reads it: `matrix` is A (column-major), or A^T where `transposed`
/// (A row-major, the same memory); or, for a view with neither stride 1, a LayoutLeft copy of A
/// (`staged`, in A's memory space). `note` says which.
template <class AView>
struct Input {
  MatrixView<typename AView::value_type> matrix;
  bool transposed = false;
  std::string note;
  Kokkos::View<typename AView::non_const_value_type**, Kokkos::LayoutLeft, typename AView::memory_space> staged;
};

template <class Exec, class AView>
Input<AView> read(const Exec& exec, const AView& a, const std::string& name) {
  Input<AView> in;
  const ViewStorage storage = storage_of(a);
  if (storage == ViewStorage::ColumnMajor) {
    in.matrix = view_of(a, name);
    in.note = name + ": column-major, read in place";
  } else if (storage == ViewStorage::RowMajor) {
    in.matrix = transposed_view_of(a, name);
    in.transposed = true;
    in.note = name + ": row-major, read in place as " + name + "^T";
  } else {
    in.staged = layout_left_copy(exec, a, name);
    in.matrix = view_of(in.staged, name);
    in.note = name + ": copied to LayoutLeft (strides " + strides_of(a) + ")";
  }
  return in;
}

template <class Exec, class T, class Result>
RsvdViews<typename Exec::memory_space, T> views_of(const ViewOutputs<Exec, T>& out, Result&& r, const std::string& input,
                                                   bool transposed) {
  RsvdViews<typename Exec::memory_space, T> v{out.view(r.U), out.vector(r.S), out.view(r.V), std::move(r.report), input};
  if (transposed) std::swap(v.U, v.V);  // A^T = V diag(S) U^T
  return v;
}

template <class Exec, class AView, class T = std::remove_const_t<typename AView::value_type>>
RsvdViews<typename Exec::memory_space, T> rsvd(const Exec& exec, const AView& a, index_t k, const RsvdOptions& options) {
  const ViewOutputs<Exec, T> out(exec);
  const Input<AView> in = read(exec, a, "A");
  auto backend = backend_for(exec);
  return views_of(out, randnla::rsvd(*backend, MatrixView<const T>(in.matrix), k, options, out.allocator()), in.note,
                  in.transposed);
}

template <class Exec, class AView>
RsvdViews<typename Exec::memory_space> rsvd_fixed_accuracy(const Exec& exec, const AView& a,
                                                           const FixedAccuracyOptions& options) {
  const ViewOutputs<Exec> out(exec);
  const Input<AView> in = read(exec, a, "A");
  auto backend = backend_for(exec);
  return views_of(out, randnla::rsvd_fixed_accuracy(*backend, in.matrix, options, out.allocator()), in.note,
                  in.transposed);
}

/// A PcaResult's matrices as the views `out` allocated; `input` says how X was read.
template <class Exec>
PcaViews<typename Exec::memory_space> pca_views_of(const ViewOutputs<Exec>& out, PcaResult&& r, std::string input) {
  PcaViews<typename Exec::memory_space> v;
  v.mean = out.vector(r.mean);
  v.components = out.view(r.components);
  v.singular_values = out.vector(r.singular_values);
  v.explained_variance = out.vector(r.explained_variance);
  v.explained_variance_ratio = out.vector(r.explained_variance_ratio);
  v.scores = out.view(r.scores);
  v.total_variance = r.total_variance;
  v.report = std::move(r.report);
  v.input = std::move(input);
  return v;
}

template <class Exec, class XView>
PcaViews<typename Exec::memory_space> pca(const Exec& exec, const XView& x, index_t k, const PcaOptions& options) {
  const ViewOutputs<Exec> out(exec);
  const Input<XView> in = read(exec, x, "X");
  auto backend = backend_for(exec);
  PcaResult r = in.transposed ? randnla::pca(*backend, Transposed<const float>{in.matrix}, k, options, out.allocator())
                              : randnla::pca(*backend, in.matrix, k, options, out.allocator());
  return pca_views_of(out, std::move(r), in.note);
}

template <class Exec, class AView>
LraViews<typename Exec::memory_space> randomized_lra(const Exec& exec, const AView& a, index_t k,
                                                     const LraOptions& options) {
  const ViewOutputs<Exec> out(exec);
  const Input<AView> in = read(exec, a, "A");
  auto backend = backend_for(exec);
  LraResult r = randnla::randomized_lra(*backend, in.matrix, k, options, out.allocator());
  if (in.transposed) std::swap(r.X, r.Y);  // A^T ~ X Y^T is A ~ Y X^T
  return {out.view(r.X), out.view(r.Y), std::move(r.report), in.note};
}

template <class Exec, class AView>
SparseProjectionViews<typename Exec::memory_space> sparse_sign_projection(const Exec& exec, const AView& a, index_t k,
                                                                          SparseProjectionOptions options) {
  const ViewOutputs<Exec> out(exec);
  const Input<AView> in = read(exec, a, "A");
  if (in.transposed)  // A^T holds the same samples, along the other index
    options.layout = options.layout == SampleLayout::Columns ? SampleLayout::Rows : SampleLayout::Columns;
  auto backend = backend_for(exec);
  SparseProjectionResult r = randnla::sparse_sign_projection(*backend, in.matrix, k, options, out.allocator());
  return {out.view(r.Y), std::move(r.report), in.note};
}

template <class Exec, class AView>
TsqrViews<typename Exec::memory_space> tsqr(const Exec& exec, const AView& a, const TsqrOptions& options) {
  const ViewOutputs<Exec> out(exec);
  const Input<AView> in = read(exec, a, "A");
  auto backend = backend_for(exec);
  TsqrResult r = in.transposed ? randnla::tsqr(*backend, Transposed<const float>{in.matrix}, options, out.allocator())
                               : randnla::tsqr(*backend, MatrixView<const float>(in.matrix), options, out.allocator());
  TsqrViews<typename Exec::memory_space> v;
  if (options.form_q && options.q_buffer.empty()) v.Q = out.view(r.Q);
  v.R = out.view(r.R);
  v.report = std::move(r.report);
  v.input = !in.transposed     ? in.note
            : options.form_q ? "A: row-major, transposed into Q's memory and factored there"
                             : "A: row-major, its rows transposed 8 MiB at a time";
  return v;
}

/// "(0, 1, 2)".
inline std::string order_text(const std::vector<int>& order) {
  std::string t;
  for (int k : order) t += (t.empty() ? "(" : ", ") + std::to_string(k);
  return t + ")";
}

/// The core in A's mode order (LayoutLeft, on exec) from the run's core, whose mode k is A's mode
/// order[k] (first index fastest, packed): one permuting copy of its few elements.
template <class CoreView, class Exec>
CoreView core_in_order(const Exec& exec, const TuckerResult& r, const std::vector<int>& order) {
  using Permuted = Kokkos::View<typename CoreView::data_type, Kokkos::LayoutStride, typename Exec::memory_space,
                                Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  constexpr int N = static_cast<int>(CoreView::rank);
  Kokkos::LayoutStride layout;
  std::vector<index_t> extents(N);
  std::size_t stride = 1;
  for (int k = 0; k < N; ++k) {
    const std::size_t j = static_cast<std::size_t>(r.core_extents[k]);
    layout.dimension[order[k]] = j;
    layout.stride[order[k]] = stride;
    extents[order[k]] = r.core_extents[k];
    stride *= j;
  }
  const CoreView core = allocate<CoreView>(exec, "randnla::core", extents, std::make_index_sequence<N>());
  Kokkos::deep_copy(exec, core, Permuted(r.core.data(), layout));
  return core;
}

template <class Exec, class AView>
TuckerViews<typename AView::non_const_data_type, typename Exec::memory_space> rp_hosvd(
    const Exec& exec, const AView& a, const std::vector<index_t>& ranks, const TuckerOptions& options) {
  constexpr int N = static_cast<int>(AView::rank);
  using CoreView = Kokkos::View<typename AView::non_const_data_type, Kokkos::LayoutLeft, typename Exec::memory_space>;
  const ViewOutputs<Exec> out(exec);
  TuckerViews<typename AView::non_const_data_type, typename Exec::memory_space> v;
  std::vector<int> order = packed_order_of(a);
  Kokkos::View<typename AView::non_const_data_type, Kokkos::LayoutLeft, typename AView::memory_space> staged;
  if (order.empty()) {
    staged = layout_left_copy(exec, a, "A");
    for (int k = 0; k < N; ++k) order.push_back(k);
    std::string strides;
    for (int k = 0; k < N; ++k) strides += (k ? ", " : "") + std::to_string(a.stride(k));
    v.input = "A: copied to LayoutLeft (strides (" + strides + "))";
  } else {
    v.input = "A: read in place, modes in the order " + order_text(order);
  }
  std::vector<index_t> run_ranks = ranks;  // ranks.size() != N: rp_hosvd's own check throws
  for (int k = 0; k < N && ranks.size() == static_cast<std::size_t>(N); ++k) run_ranks[k] = ranks[order[k]];
  auto backend = backend_for(exec);
  const auto run = [&](const auto& t) { return randnla::rp_hosvd(*backend, t, run_ranks, options, out.allocator()); };
  TuckerResult r = staged.data() ? run(tensor_view_of(staged, order, "A")) : run(tensor_view_of(a, order, "A"));
  v.core = core_in_order<CoreView>(exec, r, order);
  v.Q.resize(N);
  for (int k = 0; k < N; ++k) v.Q[order[k]] = out.view(r.factors[k]);
  std::vector<index_t> columns = r.report.sketch_columns;
  for (int k = 0; k < N && columns.size() == static_cast<std::size_t>(N); ++k)
    columns[order[k]] = r.report.sketch_columns[k];
  v.report = std::move(r.report);
  v.report.sketch_columns = columns;
  return v;
}

template <class Exec, class AView, class Result, class Run>
RsvdViews<typename Exec::memory_space> distributed_svd(const Exec& exec, const AView& a, DistributedReport* distribution,
                                                       Run run) {
  const ViewOutputs<Exec> out(exec);
  const Input<AView> in = read(exec, a, "A");
  auto backend = backend_for(exec);
  Result r = in.transposed ? run(*backend, Transposed<const float>{in.matrix}, out.allocator())
                           : run(*backend, MatrixView<const float>(in.matrix), out.allocator());
  if (distribution) *distribution = r.distribution;
  return views_of(out, std::move(r), in.note, false);
}

/// The Kokkos entry of the distributed QR factorisation `factor`: Q (this rank's rows) and R as
/// views, the report into `distribution`.
template <class Exec, class AView, class Factor>
TsqrViews<typename Exec::memory_space> distributed_qr(const Exec& exec, const AView& a, Factor factor,
                                                      DistributedReport* distribution) {
  const ViewOutputs<Exec> out(exec);
  const Input<AView> in = read(exec, a, "A");
  auto backend = backend_for(exec);
  const DistributedQrResult r = in.transposed ? factor(*backend, Transposed<const float>{in.matrix}, out.allocator())
                                              : factor(*backend, MatrixView<const float>(in.matrix), out.allocator());
  if (distribution) *distribution = r.report;
  TsqrViews<typename Exec::memory_space> v;
  v.Q = out.view(r.Q);
  v.R = out.view(r.R);
  v.report.backend = backend->description();
  v.report.levels = 1;  // the stack of the ranks' R factors above their local QRs
  v.input = in.transposed ? "A: row-major, transposed into Q's memory and factored there" : in.note;
  return v;
}

template <class Exec, class YView>
Orthonormalizer orthonormalize(const Exec& exec, const YView& y, Orthonormalizer method) {
  const Input<YView> in = read(exec, y, "Y");
  auto backend = backend_for(exec);
  const Orthonormalizer used = in.transposed ? randnla::orthonormalize(*backend, Transposed<float>{in.matrix}, method)
                                             : randnla::orthonormalize(*backend, in.matrix, method);
  if (in.staged.data()) Kokkos::deep_copy(exec, y, in.staged);
  return used;
}

}  // namespace kokkos_api

/// Rank-k randomized SVD of A (m x n, FP32), as rsvd(Backend&, ...) documents it (Halko,
/// Martinsson & Tropp 2011, Algorithms 4.4 and 5.1; Ootomo & Yokota, Algorithm 1), on `exec`.
/// A is a rank-2 view of float or double (const or not) that exec can access; it is not modified.
/// A view of double runs rsvd(Backend&, MatrixView<const double>, ...): FP32 and FP16 sketches, the
/// factors formed in FP64 to FP64 accuracy, U, S and V returned as views of double. Layouts: a
/// column-major A (LayoutLeft, LayoutStride with stride(0) = 1) is read in place; a row-major one
/// (LayoutRight, LayoutStride with stride(1) = 1) is A^T column-major, read in place too: the RSVD
/// runs on A^T (n x m; its Omega is m x (k + p), so its random draws differ from A's) and its U and V
/// swap, so that U is m x k and V n x k as for A; any other strides are copied into a LayoutLeft
/// view first (result.input says which). Another element type or rank fails to compile
/// (static_assert). Throws as rsvd(Backend&, ...).
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space, std::remove_const_t<typename AView::value_type>> rsvd(
    const Exec& exec, const AView& a, index_t k, const RsvdOptions& options = {}) {
  if constexpr (kokkos_api::Fp32OrFp64MatrixInput<Exec, AView>::value) return kokkos_api::rsvd(exec, a, k, options);
  else return {};
}

/// Fixed-accuracy randomized SVD of A (randQB_EI; see rsvd_fixed_accuracy(Backend&, ...)) on
/// `exec`: the rank found is S.extent(0). Views and layouts as rsvd() on views: a row-major A runs
/// as A^T, U and V swapped, without a copy.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> rsvd_fixed_accuracy(const Exec& exec, const AView& a,
                                                           const FixedAccuracyOptions& options) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value) return kokkos_api::rsvd_fixed_accuracy(exec, a, options);
  else return {};
}

/// Principal component analysis of X (m samples x n features, FP32), as pca(Backend&, ...)
/// documents it (Halko, Martinsson & Tropp 2011, Algorithms 4.4 and 5.1, on X - 1 mu^T centred
/// implicitly as in torch.pca_lowrank), on `exec`. X is a rank-2 view of float (const or not)
/// that exec can access; it is read in place, neither copied nor modified, whether column-major
/// (LayoutLeft) or row-major (LayoutRight, the host's default, read through its transpose:
/// pca(Backend&, Transposed<const float>, ...)); other strides are copied into a LayoutLeft view
/// first (result.input says which). Another element type or rank fails to compile. Throws as
/// pca(Backend&, ...).
template <class Exec, class XView, class = kokkos_api::IfExecutionSpace<Exec>>
PcaViews<typename Exec::memory_space> pca(const Exec& exec, const XView& x, index_t k, const PcaOptions& options = {}) {
  if constexpr (kokkos_api::MatrixInput<Exec, XView>::value) return kokkos_api::pca(exec, x, k, options);
  else return {};
}

/// Mixed-precision randomized LRA of A with optional refinement, on the residual with recompression
/// (Baboulin et al. 2024, Algorithms 1, 3-5) or on the subspace (see randomized_lra(Backend&, ...)),
/// on `exec`. A is not modified unless it is passed as options.residual_buffer. A row-major A
/// (LayoutRight, stride(1) = 1) is read in place as A^T: the LRA of A^T ~ X' Y'^T is returned as X =
/// Y', Y = X' (X m x r, Y n x r as for A), so the factor that randomized_lra(Backend&, ...) documents
/// as orthonormal (its X) is Y here, and options.residual_buffer, if given, must be n x m (A^T's
/// shape: transposed_view_of(A) to pass A itself). Other strides are copied into a LayoutLeft view
/// first (result.input says which). Another element type or rank fails to compile.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
LraViews<typename Exec::memory_space> randomized_lra(const Exec& exec, const AView& a, index_t k,
                                                     const LraOptions& options = {}) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value) return kokkos_api::randomized_lra(exec, a, k, options);
  else return {};
}

/// Very sparse random projection Y = S A without storing S (Li, Hastie & Church 2006; see
/// sparse_sign_projection(Backend&, ...)) on `exec`; A is D x b or b x D as options.layout says,
/// in any layout: a row-major A is read in place as A^T with options.layout flipped (the same
/// samples, the same S and Y), other strides are copied into a LayoutLeft view first (result.input
/// says which). Another element type or rank fails to compile.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
SparseProjectionViews<typename Exec::memory_space> sparse_sign_projection(const Exec& exec, const AView& a, index_t k,
                                                                          const SparseProjectionOptions& options = {}) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value) return kokkos_api::sparse_sign_projection(exec, a, k, options);
  else return {};
}

/// Tall-skinny QR A = Q R by a reduction tree (see tsqr(Backend&, ...)) on `exec`. A column-major A
/// is read in place; a row-major one (LayoutRight, stride(1) = 1) is transposed into the memory of
/// the Q returned and factored there (R only: 8 MiB of its rows at a time; tsqr(Backend&,
/// Transposed<const float>, ...)); any other strides are copied into a LayoutLeft view in A's
/// memory space first (m n floats). result.input says which. Another element type or rank fails to
/// compile.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> tsqr(const Exec& exec, const AView& a, const TsqrOptions& options = {}) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value) return kokkos_api::tsqr(exec, a, options);
  else return {};
}

/// Rank-(J_1, ..., J_N) Tucker approximation of the 3- to 5-way view A (float) by random projection
/// (Ootomo & Yokota, Sec. 5.2; see rp_hosvd(Backend&, ...)) on `exec`; ranks holds J_1 .. J_N. A is
/// read in place and not modified where some order of its modes is packed first index fastest
/// (packed_order_of: LayoutLeft as it is, LayoutRight in the reverse order, LayoutStride by its
/// strides): the run takes the modes in that order (so the sequential variant contracts, and the
/// single-pass one slabs, along them) and the results come back in A's own mode order: Q[i] is I_i x
/// J_i, the core J_1 x ... x J_N (its few elements permuted by one copy). Other strides (padding)
/// are copied into a LayoutLeft view first. result.input says which. Another element type, or a
/// rank other than 3 to 5, fails to compile.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TuckerViews<typename AView::non_const_data_type, typename Exec::memory_space> rp_hosvd(
    const Exec& exec, const AView& a, const std::vector<index_t>& ranks, const TuckerOptions& options = {}) {
  if constexpr (kokkos_api::TensorInput<Exec, AView>::value) return kokkos_api::rp_hosvd(exec, a, ranks, options);
  else return {};
}

/// Rank-k randomized SVD of A distributed by rows over `comm` (this rank's rows as a rank-2 view;
/// see distributed_rsvd(Backend&, ...)) on `exec`: U holds this rank's rows of U, S and V are the
/// same on every rank; r.report, and the distribution (transport, ranks, words sent) in
/// `distribution` when non-null. A column-major block is read in place, and so is a row-major one
/// (LayoutRight, stride(1) = 1: A_i^T's memory, every product with the roles swapped; the results
/// are A's, as for a column-major block); any other strides are copied into a LayoutLeft view
/// first (result.input says which). Another element type or rank fails to compile.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> distributed_rsvd(const Exec& exec, Communicator& comm, const AView& a, index_t k,
                                                        const RsvdOptions& options = {},
                                                        DistributedReport* distribution = nullptr) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value) {
    return kokkos_api::distributed_svd<Exec, AView, DistributedRsvdResult>(
        exec, a, distribution, [&](Backend& b, auto m, const MatrixAllocator& outputs) {
          return randnla::distributed_rsvd(b, comm, m, k, options, outputs);
        });
  } else {
    return {};
  }
}

/// Fixed-accuracy randomized SVD of A distributed by rows over `comm` (see
/// distributed_rsvd_fixed_accuracy(Backend&, ...)) on `exec`: the rank found is S's extent on every
/// rank, U holds this rank's rows. Layouts as distributed_rsvd() on views (a row-major block read
/// in place, other strides copied).
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
RsvdViews<typename Exec::memory_space> distributed_rsvd_fixed_accuracy(const Exec& exec, Communicator& comm,
                                                                       const AView& a, const FixedAccuracyOptions& options,
                                                                       DistributedReport* distribution = nullptr) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value) {
    return kokkos_api::distributed_svd<Exec, AView, DistributedRsvdResult>(
        exec, a, distribution, [&](Backend& b, auto m, const MatrixAllocator& outputs) {
          return randnla::distributed_rsvd_fixed_accuracy(b, comm, m, options, outputs);
        });
  } else {
    return {};
  }
}

/// A = Q R for A distributed by rows over `comm` (see distributed_tsqr(Backend&, ...)) on `exec`:
/// Q holds this rank's rows, R is the same on every rank. A column-major block is read in place; a
/// row-major one (LayoutRight, stride(1) = 1) is transposed into the memory of this rank's Q and
/// factored there; any other strides are copied into a LayoutLeft view first (result.input says
/// which).
/// Another element type or rank fails to compile.
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> distributed_tsqr(const Exec& exec, Communicator& comm, const AView& a,
                                                        DistributedReport* distribution = nullptr) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value)
    return kokkos_api::distributed_qr(
        exec, a, [&](Backend& b, auto m, const MatrixAllocator& o) { return randnla::distributed_tsqr(b, comm, m, o); },
        distribution);
  else return {};
}

/// A = Q R for A distributed by rows over `comm` by CholeskyQR2 (see
/// distributed_cholesky_qr2(Backend&, ...)) on `exec`: Q holds this rank's rows, R is the same on
/// every rank. Layouts as distributed_tsqr() on views (a row-major block transposed into Q's memory).
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> distributed_cholesky_qr2(const Exec& exec, Communicator& comm, const AView& a,
                                                                DistributedReport* distribution = nullptr) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value)
    return kokkos_api::distributed_qr(
        exec, a, [&](Backend& b, auto m, const MatrixAllocator& o) { return randnla::distributed_cholesky_qr2(b, comm, m, o); },
        distribution);
  else return {};
}

/// A = Q R for A distributed by rows over `comm` by the sketch-preconditioned CholeskyQR (see
/// distributed_rand_cholesky_qr(Backend&, ...)) on `exec`: Q holds this rank's rows, R is the same
/// on every rank. Layouts as distributed_tsqr() on views (a row-major block transposed into Q's memory).
template <class Exec, class AView, class = kokkos_api::IfExecutionSpace<Exec>>
TsqrViews<typename Exec::memory_space> distributed_rand_cholesky_qr(const Exec& exec, Communicator& comm, const AView& a,
                                                                    DistributedReport* distribution = nullptr) {
  if constexpr (kokkos_api::MatrixInput<Exec, AView>::value)
    return kokkos_api::distributed_qr(
        exec, a, [&](Backend& b, auto m, const MatrixAllocator& o) { return randnla::distributed_rand_cholesky_qr(b, comm, m, o); },
        distribution);
  else return {};
}

/// Y (m x l, m >= l, FP32, not const) := an orthonormal basis of its range, in place, on `exec`;
/// returns the method that produced it (see orthonormalize(Backend&, ...)). A column-major Y is
/// orthonormalised in its own memory, and so is a row-major one (LayoutRight, stride(1) = 1: Y^T's
/// memory; see orthonormalize(Backend&, Transposed<float>, ...): the FP64 CholeskyQR chain with the
/// products' roles swapped); any other strides are copied into a LayoutLeft view (m l floats),
/// orthonormalised there and copied back into Y. Another element type or rank, or a view of const,
/// fails to compile.
template <class Exec, class YView, class = kokkos_api::IfExecutionSpace<Exec>>
Orthonormalizer orthonormalize(const Exec& exec, const YView& y, Orthonormalizer method = Orthonormalizer::Auto) {
  if constexpr (kokkos_api::MatrixInput<Exec, YView>::value) {
    static_assert(!std::is_const<typename YView::value_type>::value,
                  "randnla: Y is orthonormalised in place: the view must not be of const float");
    if constexpr (!std::is_const<typename YView::value_type>::value) return kokkos_api::orthonormalize(exec, y, method);
    else return method;
  } else {
    return method;
  }
}

}  // namespace randnla

// Every algorithm's own Kokkos entry points (algorithms/<name>/kokkos_api.hpp), generated from
// RANDNLA_ALGORITHMS: a new algorithm adds its file, not a line here.
#include "randnla/algorithms.hpp"
