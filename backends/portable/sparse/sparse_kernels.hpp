// The sparse algorithms' operations (algorithms/sparse/sparse_ops.hpp) on the portable backend's
// execution space: Kokkos Kernels' spmv on rank-2 views for the products, Kokkos loops for the checks.
#pragma once

#include <KokkosSparse_CrsMatrix.hpp>
// Kokkos Kernels 3.4's transpose functor leaves a member GCC sees as maybe uninitialised (it is set
// before use): not ours to fix, and it would flood every build that includes the portable backend.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <KokkosSparse_spmv.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <string>

#include "portable/kernels.hpp"
#include "randnla/sparse/sparse_ops.hpp"

namespace randnla {
namespace portable {

/// A as an unmanaged KokkosSparse::CrsMatrix over the caller's arrays (int offsets and indices, as
/// KokkosSparse::CrsMatrix<float, int, Device, void, int>); Kokkos Kernels only reads them, so the
/// const_casts its non-const view types need write nothing.
template <class Exec>
auto crs_matrix(const CsrView& a) {
  using Crs = KokkosSparse::CrsMatrix<float, std::int32_t, DeviceOf<Exec>, Kokkos::MemoryTraits<Kokkos::Unmanaged>,
                                      std::int32_t>;
  const auto nnz = static_cast<std::size_t>(a.nnz);
  typename Crs::values_type values(const_cast<float*>(a.values), nnz);
  typename Crs::row_map_type row_map(a.row_ptr, static_cast<std::size_t>(a.rows + 1));
  typename Crs::index_type entries(const_cast<std::int32_t*>(a.col_idx), nnz);
  return Crs("A", static_cast<std::int32_t>(a.rows), static_cast<std::int32_t>(a.cols),
             static_cast<std::int32_t>(a.nnz), values, row_map, entries);
}

/// Y := op(A) X by KokkosSparse::spmv on rank-2 views, called without an instance (the form Kokkos
/// Kernels 3.4 and 4.x share), so it is ordered after and before exec's work by fences.
template <class Exec>
void csr_spmm(const Exec& exec, const CsrView& a, Op op, MatrixView<const float> x, MatrixView<float> y) {
  const auto crs = crs_matrix<Exec>(a);
  exec.fence();
  KokkosSparse::spmv(op == Op::N ? "N" : "T", 1.0f, crs, kokkos_view<Exec>(x), 0.0f, kokkos_view<Exec>(y));
  typename Exec::execution_space().fence();
}

/// Y := A Omega (SparseOps::sparse_sign_sketch): a thread per row of A, block by block of Omega's
/// columns, each Y(i, c) summed in the order of row i's entries and then scaled.
template <class Exec>
void csr_sparse_sign_sketch(const Exec& exec, const CsrView& a, const SparseSignSketch& omega, MatrixView<float> y) {
  const std::int32_t *row_ptr = a.row_ptr, *col_idx = a.col_idx;
  const float* values = a.values;
  float* out = y.data();
  const index_t ld = y.ld();
  Kokkos::parallel_for(
      "randnla::portable::csr_sparse_sign_sketch", Policy<Exec>(exec, 0, a.rows), KOKKOS_LAMBDA(index_t i) {
        for (std::int32_t c = 0; c < omega.cols; ++c) out[i + c * ld] = 0.0f;
        for (int t = 0; t < omega.nonzeros; ++t)
          for (std::int32_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
            const SparseSignSketch::Entry e = omega.entry(col_idx[p], t);
            out[i + e.column * ld] += e.negative ? -values[p] : values[p];
          }
        for (std::int32_t c = 0; c < omega.cols; ++c) out[i + c * ld] *= omega.value;
      });
}

/// SparseOps::first_defects' offset: the first bad row_ptr[i], i in 0 .. rows, or -1.
template <class Exec>
index_t first_bad_csr_offset(const Exec& exec, const CsrView& a) {
  const std::int32_t* row_ptr = a.row_ptr;
  const std::int64_t nnz = a.nnz;
  const index_t rows = a.rows;
  index_t first = 0;
  Kokkos::parallel_reduce(
      "randnla::portable::first_bad_csr_offset", Policy<Exec>(exec, 0, rows + 1),
      KOKKOS_LAMBDA(index_t i, index_t & found) {
        const std::int32_t o = row_ptr[i];
        const bool bad = i == 0 ? o != 0 : o < row_ptr[i - 1] || o > nnz || (i == rows && o != nnz);
        if (bad && i < found) found = i;
      },
      Kokkos::Min<index_t>(first));
  return first == Kokkos::reduction_identity<index_t>::min() ? -1 : first;
}

/// SparseOps::first_defects' entry: the first bad position in a row with bounds in order within
/// 0 .. nnz (v - v is 0 exactly for finite v), or -1.
template <class Exec>
index_t first_bad_csr_entry(const Exec& exec, const CsrView& a) {
  const std::int32_t *row_ptr = a.row_ptr, *col_idx = a.col_idx;
  const float* values = a.values;
  const std::int32_t cols = static_cast<std::int32_t>(a.cols);
  const std::int64_t nnz = a.nnz;
  index_t first = 0;
  Kokkos::parallel_reduce(
      "randnla::portable::first_bad_csr_entry", Policy<Exec>(exec, 0, a.rows),
      KOKKOS_LAMBDA(index_t i, index_t & found) {
        const std::int32_t begin = row_ptr[i], end = row_ptr[i + 1];
        if (begin < 0 || end < begin || end > nnz) return;
        for (std::int32_t j = begin; j < end; ++j) {
          const std::int32_t c = col_idx[j];
          const bool bad = c < 0 || c >= cols || (j > begin && c <= col_idx[j - 1]) || !(values[j] - values[j] == 0.0f);
          if (bad) {
            if (j < found) found = j;
            return;
          }
        }
      },
      Kokkos::Min<index_t>(first));
  return first == Kokkos::reduction_identity<index_t>::min() ? -1 : first;
}

/// p[i] copied to the host.
template <class Exec, class T>
T element_at(const T* p, index_t i) {
  const Kokkos::View<const T*, DeviceOf<Exec>, Kokkos::MemoryTraits<Kokkos::Unmanaged>> all(p, static_cast<std::size_t>(i + 1));
  Kokkos::View<T, Kokkos::HostSpace> h("randnla::element");
  Kokkos::deep_copy(h, Kokkos::subview(all, static_cast<std::size_t>(i)));
  return h();
}

template <class Exec>
class SparseKernels final : public SparseOps {
 public:
  SparseKernels(const Exec& exec, MemorySpace space) : SparseOps(space), exec_(exec) {}

  // Public: nvcc takes no extended lambda in a protected member function.
  std::string do_spmm(const CsrView& a, Op op, MatrixView<const float> x, MatrixView<float> y) override {
    csr_spmm(exec_, a, op, x, y);
    return std::string("csr spmm (Kokkos Kernels spmv on rank-2 views, Kokkos ") + Exec::name() + ")";
  }
  std::string do_sparse_sign_sketch(const CsrView& a, const SparseSignSketch& omega, MatrixView<float> y) override {
    csr_sparse_sign_sketch(exec_, a, omega, y);
    return std::string("sparse sign sketch (a thread per row, Kokkos ") + Exec::name() + ")";
  }
  CsrDefects do_first_defects(const CsrView& a) override {
    return CsrDefects{first_bad_csr_offset(exec_, a), first_bad_csr_entry(exec_, a)};
  }
  CsrEntry do_entry(const CsrView& a, index_t row, index_t position) override {
    exec_.fence();
    CsrEntry e;
    e.row_begin = element_at<Exec>(a.row_ptr, row);
    e.row_end = element_at<Exec>(a.row_ptr, row + 1);
    if (position >= 0) {
      e.column = element_at<Exec>(a.col_idx, position);
      e.value = element_at<Exec>(a.values, position);
    }
    return e;
  }

 private:
  Exec exec_;
};

}  // namespace portable
}  // namespace randnla
