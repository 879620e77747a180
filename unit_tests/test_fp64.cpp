// FP64 data on the host backend: FP64 orthonormalisation and the RSVD of FP64 data with FP32 and
// FP16 sketches, against FP64 references (fp64_cases.hpp; the GPU suite runs the same checks).
#include "fp64_cases.hpp"
#include "randnla/backends.hpp"
#include "randnla/randnla.hpp"

namespace randnla {
namespace {

TEST(Fp64, OrthonormalizeReachesFp64Orthogonality) { fp64_test::check_orthonormalize(*make_backend(BackendKind::Host)); }
TEST(Fp64, RsvdRecoversAnExactlyRankKMatrixToFp64Rounding) {
  fp64_test::check_rsvd_exact_rank(*make_backend(BackendKind::Host));
}
TEST(Fp64, RsvdOfATailBelowFp32RoundingMeetsTheOptimum) {
  fp64_test::check_rsvd_meets_the_optimum(*make_backend(BackendKind::Host));
}
TEST(Fp64, RsvdScalesHugeAndTinyEntriesAndRefusesNonFiniteOnes) {
  fp64_test::check_rsvd_range_and_bad_input(*make_backend(BackendKind::Host));
}

}  // namespace
}  // namespace randnla

namespace randnla {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;

/// A host FP64 matrix in a view of Exec's memory space with the given layout.
template <class Layout>
Kokkos::View<double**, Layout, Exec::memory_space> device_view(const fp64_test::Dense& a) {
  Kokkos::View<double**, Layout, Exec::memory_space> v("A", a.rows, a.cols);
  auto h = Kokkos::create_mirror_view(v);
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) h(i, j) = a(i, j);
  Kokkos::deep_copy(v, h);
  return v;
}

template <class V>
fp64_test::Dense dense_of(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  fp64_test::Dense d(static_cast<index_t>(v.extent(0)), V::rank == 2 ? static_cast<index_t>(v.extent(1)) : 1);
  for (index_t j = 0; j < d.cols; ++j)
    for (index_t i = 0; i < d.rows; ++i) {
      if constexpr (V::rank == 2) d(i, j) = h(i, j);
      else d(i, j) = h(i);
    }
  return d;
}

// The Kokkos entry on views of double, LayoutLeft and LayoutRight (read as A^T, U and V swapped):
// views of double back, an exactly rank-k A recovered to FP64 rounding on the default execution space.
TEST(Fp64, KokkosRsvdOnViewsOfDoubleInEitherLayout) {
  const index_t m = 300, n = 200, k = 10;
  const std::vector<double> sigma = fp64_test::geometric(k, 1e-3);
  const fp64_test::Dense a = fp64_test::with_spectrum(m, n, sigma, 8);
  const auto check = [&](const auto& r, const std::string& input) {
    static_assert(std::is_same<typename std::decay_t<decltype(r.U)>::value_type, double>::value, "FP64 results");
    EXPECT_EQ(r.input, input);
    ASSERT_EQ(static_cast<index_t>(r.U.extent(0)), m);
    ASSERT_EQ(static_cast<index_t>(r.V.extent(0)), n);
    EXPECT_LT(fp64_test::reconstruction_error(a, dense_of(r.U), dense_of(r.S), dense_of(r.V)),
              fp64_test::exact_rank_bound(sigma));
  };
  check(rsvd(Exec(), device_view<Kokkos::LayoutLeft>(a), k), "A: column-major, read in place");
  check(rsvd(Exec(), device_view<Kokkos::LayoutRight>(a), k), "A: row-major, read in place as A^T");
}

}  // namespace
}  // namespace randnla
