// The portable reduction family: Kokkos parallel reductions (sums in FP64, histograms in unsigned 64-bit counters).
#pragma once

#include <cmath>
#include <vector>

#include "portable/context/portable_context.hpp"
#include "randnla/ops/reductions.hpp"

namespace randnla {
namespace portable {

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

/// One work item per column, each scanning its column in order (so ties keep the first entry): k-way
/// parallel, enough on the host spaces this backend is for.
template <class Exec>
std::vector<float> signs_of_largest(const Exec& exec, MatrixView<const float> x) {
  const index_t m = x.rows(), k = x.cols();
  Kokkos::View<float*, DeviceOf<Exec>> signs(Kokkos::view_alloc(exec, "randnla::signs"), static_cast<std::size_t>(k));
  Kokkos::parallel_for("randnla::portable::signs_of_largest", Policy<Exec>(exec, 0, k), KOKKOS_LAMBDA(const index_t j) {
    float best = x(0, j);
    for (index_t i = 1; i < m; ++i)
      if ((x(i, j) < 0.0f ? -x(i, j) : x(i, j)) > (best < 0.0f ? -best : best)) best = x(i, j);
    signs(j) = best < 0.0f ? -1.0f : 1.0f;
  });
  auto host = Kokkos::create_mirror_view(signs);
  Kokkos::deep_copy(exec, host, signs);
  exec.fence();
  return std::vector<float>(host.data(), host.data() + k);
}

template <class Exec>
class PortableReductions : public virtual ReductionOps, public virtual PortableContext<Exec> {
 public:
  using PortableContext<Exec>::exec_;

  ExponentHistogram do_exponent_histogram(MatrixView<const float> x) override { return portable::exponent_histogram(exec_, x); }
  double do_frobenius_norm(MatrixView<const float> x) override { return std::sqrt(portable::sum_of_squares(exec_, x)); }
  double do_frobenius_norm(MatrixView<const double> x) override { return std::sqrt(portable::sum_of_squares(exec_, x)); }
  std::vector<float> do_signs_of_largest(MatrixView<const float> x) override { return portable::signs_of_largest(exec_, x); }
};

}  // namespace portable
}  // namespace randnla
