// The portable backend's kernels: Kokkos parallel loops on any execution space, one element (i, j)
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

/// X(i, j) := draw.at(i, j), rounded to T: dense, a Philox block (up to four elements of a column)
/// per work item.
template <class Exec, class T>
void fill_random(const Exec& exec, const RandomDraw& draw, MatrixView<T> x) {
  if (!draw.sparse()) {
    const index_t rows = x.rows();
    for_each_element(exec, RandomDraw::blocks_per_column(rows), x.cols(), KOKKOS_LAMBDA(index_t q, index_t j) {
      draw.visit_block(q, j, rows, [&](std::int64_t i, float v) { assign(x(i, j), v); });
    });
    return;
  }
  for_each_element(exec, x.rows(), x.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { assign(x(i, j), 0.0f); });
  const std::int64_t row0 = draw.block.row0, col0 = draw.block.col0, row_end = row0 + x.rows();
  Kokkos::parallel_for("randnla::portable::fill_sparse_columns", Policy<Exec>(exec, 0, x.cols()),
                       KOKKOS_LAMBDA(index_t j) {
                         draw.walk_sparse_column(col0 + j, row_end, [&](std::int64_t row, float v) {
                           if (row >= row0) assign(x(row - row0, j), v);
                         });
                       });
}

/// D(i, j) := f(S(i, j)).
template <class Exec, class S, class D, class F>
void map(const Exec& exec, MatrixView<S> s, MatrixView<D> d, F f) {
  for_each_element(exec, s.rows(), s.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { d(i, j) = f(s(i, j)); });
}

template <class Exec>
void transpose(const Exec& exec, MatrixView<const float> s, MatrixView<float> d) {
  for_each_element(exec, s.rows(), s.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { d(j, i) = s(i, j); });
}

/// X(i, j) *= s[i] (by_row) or s[j]; s is a vector (n x 1 or 1 x n) of contiguous elements.
template <class Exec, class T>
void scale(const Exec& exec, MatrixView<const T> s, MatrixView<T> x, bool by_row) {
  const T* sv = s.data();
  for_each_element(exec, x.rows(), x.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { x(i, j) *= sv[by_row ? i : j]; });
}

template <class Exec>
void add_to_diagonal(const Exec& exec, MatrixView<double> g, double shift) {
  Kokkos::parallel_for("randnla::portable::add_to_diagonal", Policy<Exec>(exec, 0, g.rows()),
                       KOKKOS_LAMBDA(index_t i) { g(i, i) += shift; });
}

/// Y := alpha X + beta Y.
template <class Exec>
void add(const Exec& exec, float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) {
  for_each_element(exec, y.rows(), y.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    y(i, j) = alpha * x(i, j) + (beta == 0.0f ? 0.0f : beta * y(i, j));
  });
}

/// C := beta C (BLAS's k = 0 case; beta = 0 writes zeros, whatever C held).
template <class Exec, class T>
void scale_all(const Exec& exec, T beta, MatrixView<T> c) {
  for_each_element(exec, c.rows(), c.cols(),
                   KOKKOS_LAMBDA(index_t i, index_t j) { c(i, j) = beta == T(0) ? T(0) : beta * c(i, j); });
}

/// C := alpha op(A) op(B) + beta C with each partial sum rounded to FP16, in order of k: the
/// reference for an FP16-accumulating product (FP16 x FP16 products are exact in FP32).
template <class Exec>
void half_sum_product(const Exec& exec, Op ta, Op tb, float alpha, MatrixView<const fp16> a,
                      MatrixView<const fp16> b, float beta, MatrixView<fp16> c) {
  const index_t k = op_cols(ta, a.rows(), a.cols());
  const bool at = ta == Op::T, bt = tb == Op::T;
  for_each_element(exec, c.rows(), c.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    float sum = 0.0f;
    for (index_t t = 0; t < k; ++t)
      sum = to_float(to_fp16(sum + to_float(at ? a(t, i) : a(i, t)) * to_float(bt ? b(j, t) : b(t, j))));
    c(i, j) = to_fp16(alpha * sum + (beta == 0.0f ? 0.0f : beta * to_float(c(i, j))));
  });
}

/// Counts per FP32 exponent, in unsigned 64-bit counters: the type GPUs add atomically in hardware
/// (a signed 64-bit atomic add is a compare-and-swap loop there, which a million elements falling
/// into a handful of bins turns into minutes).
template <class Exec>
ExponentHistogram exponent_histogram(const Exec& exec, MatrixView<const float> x) {
  using Count = unsigned long long;
  Kokkos::View<Count*, DeviceOf<Exec>> counts(Kokkos::view_alloc(exec, "randnla::histogram"), kExponentBins);
  for_each_element(exec, x.rows(), x.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    const float v = x(i, j);
    if (v != 0.0f) Kokkos::atomic_add(&counts(biased_exponent(v)), Count(1));
  });
  auto host = Kokkos::create_mirror_view(counts);
  Kokkos::deep_copy(exec, host, counts);
  exec.fence();
  ExponentHistogram h;
  for (int b = 0; b < kExponentBins; ++b) h.count[b] = static_cast<std::int64_t>(host(b));
  return h;
}

template <class Exec, class T>
double sum_of_squares(const Exec& exec, MatrixView<const T> x) {
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "randnla::portable::sum_of_squares", ElementPolicy<Exec>(exec, {0, 0}, {x.rows(), x.cols()}),
      KOKKOS_LAMBDA(const index_t i, const index_t j, double& acc) {
        const double v = static_cast<double>(x(i, j));
        acc += v * v;
      },
      sum);
  return sum;
}

/// hi and lo of each element of X as exact FP32 values (FP16 or TF32 numbers); X scaled by 2^s for FP16.
template <class Exec>
void split(const Exec& exec, MatrixView<const float> x, OperandPlan plan, MatrixView<float> hi, MatrixView<float> lo) {
  for_each_element(exec, x.rows(), x.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    if (plan.use_fp16) {
      fp16 h, l;
      split_halfhalf(x(i, j), plan.scale_exponent, h, l);
      hi(i, j) = to_float(h);
      lo(i, j) = to_float(l);
    } else {
      split_tf32(x(i, j), hi(i, j), lo(i, j));
    }
  });
}

/// C := unscale * (main + corr * 2^-11) + beta * C: the split products' terms summed as the
/// mma.sync kernel sums them.
template <class Exec>
void combine_split_terms(const Exec& exec, MatrixView<const float> main, MatrixView<const float> corr, float unscale,
                         float beta, MatrixView<float> c) {
  for_each_element(exec, c.rows(), c.cols(), KOKKOS_LAMBDA(index_t i, index_t j) {
    const float sum = main(i, j) + corr(i, j) * kSplitShiftInverse;
    c(i, j) = beta == 0.0f ? unscale * sum : unscale * sum + beta * c(i, j);
  });
}

}  // namespace portable
}  // namespace randnla
