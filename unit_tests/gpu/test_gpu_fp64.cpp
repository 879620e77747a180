// GPU tests of FP64 data: the host suite's checks (fp64_cases.hpp) on the CUDA backend, whose FP64
// path runs cuSOLVER's Dgeqrf/Dorgqr, DGEMM and the FP32 range finder on the Tensor Cores.
#include "fp64_cases.hpp"
#include "gpu_test_support.hpp"

namespace randnla {
namespace {

TEST(Gpu, Fp64OrthonormalizeReachesFp64Orthogonality) {
  RANDNLA_REQUIRE_GPU();
  fp64_test::check_orthonormalize(*make_backend(BackendKind::Cuda));
}
TEST(Gpu, Fp64RsvdRecoversAnExactlyRankKMatrixToFp64Rounding) {
  RANDNLA_REQUIRE_GPU();
  fp64_test::check_rsvd_exact_rank(*make_backend(BackendKind::Cuda));
}
TEST(Gpu, Fp64RsvdOfATailBelowFp32RoundingMeetsTheOptimum) {
  RANDNLA_REQUIRE_GPU();
  fp64_test::check_rsvd_meets_the_optimum(*make_backend(BackendKind::Cuda));
}
TEST(Gpu, Fp64RsvdScalesHugeAndTinyEntriesAndRefusesNonFiniteOnes) {
  RANDNLA_REQUIRE_GPU();
  fp64_test::check_rsvd_range_and_bad_input(*make_backend(BackendKind::Cuda));
}

}  // namespace
}  // namespace randnla
