// The portable backend's loops: Kokkos parallel loops on any execution space, one element (i, j)
// per work item, i fastest (Iterate::Left), so that device execution spaces read column-major data
// coalesced, and every result but a reduction's summation order is independent of the thread count.
// Free function templates: nvcc accepts extended lambdas only in functions with external linkage
// that are not private class members.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "randnla/backend.hpp"
#include "randnla/kokkos_compat.hpp"

namespace randnla {
namespace portable {

template <class Exec>
using Policy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>;

/// The elements (i, j) of a matrix, i fastest: no division per element, which a flat index needs.
template <class Exec>
using ElementPolicy =
    Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>, Kokkos::IndexType<index_t>>;

/// The memory space whose data Exec's kernels read (its own).
template <class Exec>
using DeviceOf = Kokkos::Device<Exec, typename Exec::memory_space>;

/// An unmanaged rank-2 LayoutLeft Kokkos view of a randnla view in Exec's memory space (a row range
/// of an ld x cols view, so the leading dimension is kept).
template <class Exec, class T>
auto kokkos_view(const MatrixView<T>& v) {
  using Full = Kokkos::View<T**, Kokkos::LayoutLeft, DeviceOf<Exec>, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Full full(v.data(), static_cast<std::size_t>(v.ld()), static_cast<std::size_t>(v.cols()));
  return Kokkos::subview(full, Kokkos::make_pair<std::size_t, std::size_t>(0, static_cast<std::size_t>(v.rows())),
                         Kokkos::ALL());
}

/// Runs f(i, j) for every element of a rows x cols matrix on exec.
template <class Exec, class F>
void for_each_element(const Exec& exec, index_t rows, index_t cols, const F& f) {
  if (rows == 0 || cols == 0) return;
  Kokkos::parallel_for("randnla::portable::for_each_element", ElementPolicy<Exec>(exec, {0, 0}, {rows, cols}),
                       KOKKOS_LAMBDA(const index_t i, const index_t j) { f(i, j); });
}

KOKKOS_INLINE_FUNCTION void assign(float& d, float v) { d = v; }
KOKKOS_INLINE_FUNCTION void assign(fp16& d, float v) { d = to_fp16(v); }

/// Element conversions, as functors so that host and device code share them.
struct ToDouble {
  KOKKOS_INLINE_FUNCTION double operator()(float v) const { return static_cast<double>(v); }
};
struct ToFloat {
  KOKKOS_INLINE_FUNCTION float operator()(double v) const { return static_cast<float>(v); }
  KOKKOS_INLINE_FUNCTION float operator()(fp16 v) const { return to_float(v); }
};
struct ToHalf {
  float scale = 1.0f;  ///< a power of two, so the product is exact before the one rounding
  KOKKOS_INLINE_FUNCTION fp16 operator()(float v) const { return to_fp16(v * scale); }
};
struct RoundToTf32 {
  KOKKOS_INLINE_FUNCTION float operator()(float v) const { return round_to_tf32(v); }
};
struct RoundToHalf {
  KOKKOS_INLINE_FUNCTION float operator()(float v) const { return to_float(to_fp16(v)); }
};

/// D(i, j) := f(S(i, j)).
template <class Exec, class S, class D, class F>
void map(const Exec& exec, MatrixView<S> s, MatrixView<D> d, F f) {
  for_each_element(exec, s.rows(), s.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { d(i, j) = f(s(i, j)); });
}

}  // namespace portable
}  // namespace randnla
