// Calls of the Kokkos entries that must not compile, one per CASE_* macro (run.cmake compiles each
// and requires the first error to be the library's static_assert, "randnla: ..."); CASE_VALID must
// compile, so that the compiler and its flags are known to work.
#include <Kokkos_Core.hpp>

#include <randnla/randnla.hpp>

void call() {
  const Kokkos::DefaultHostExecutionSpace exec;
#if defined(CASE_VALID)
  randnla::rsvd(exec, Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>("A", 8, 8), 2);
  randnla::rp_hosvd(exec, Kokkos::View<float***, Kokkos::HostSpace>("A", 4, 4, 4), {2, 2, 2});
  randnla::rsvd(exec, Kokkos::View<double**, Kokkos::HostSpace>("A", 8, 8), 2);  // FP64 data
#elif defined(CASE_DOUBLE_VIEW)
  randnla::pca(exec, Kokkos::View<double**, Kokkos::HostSpace>("X", 8, 8), 2);
#elif defined(CASE_INT_RSVD)
  randnla::rsvd(exec, Kokkos::View<int**, Kokkos::HostSpace>("A", 8, 8), 2);
#elif defined(CASE_INT_VIEW)
  randnla::pca(exec, Kokkos::View<int**, Kokkos::HostSpace>("X", 8, 8), 2);
#elif defined(CASE_RANK1_VIEW)
  randnla::rsvd(exec, Kokkos::View<float*, Kokkos::HostSpace>("A", 8), 2);
#elif defined(CASE_RANK3_VIEW)
  randnla::tsqr(exec, Kokkos::View<float***, Kokkos::HostSpace>("A", 8, 8, 8));
#elif defined(CASE_RANK2_TUCKER)
  randnla::rp_hosvd(exec, Kokkos::View<float**, Kokkos::HostSpace>("A", 8, 8), {2, 2});
#elif defined(CASE_CONST_ORTHONORMALIZE)
  randnla::orthonormalize(exec, Kokkos::View<const float**, Kokkos::LayoutLeft, Kokkos::HostSpace>());
#endif
}
