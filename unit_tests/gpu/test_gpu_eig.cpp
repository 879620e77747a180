// GPU test of the CUDA backend's symmetric eigensolver against LAPACK.

#include <cstdio>
#include <string>

#include "randnla/backends.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
// The CUDA backend's symmetric_eig (its own cluster tridiagonalisation and divide and conquer up
// to the order a cluster's shared memory holds: 464 in 8 blocks, 654 in 16 on the H100; cuSOLVER
// at 700) against LAPACK dsyevd:
// eigenvalues, orthogonality and residual ||G V - V diag(w)|| to 1e-12 of ||G||_2.
TEST(Gpu, SymmetricEigMatchesLapackOnEverySpectrum) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (index_t n : {3, 4, 33, 272, 301, 460, 520, 700}) {
    for (const std::string kind : {"graded", "cluster", "random", "zero", "multiple", "tiny", "huge"}) {
      const test::HostMatrix<double> g = test::symmetric_test_matrix(kind, n);
      Matrix<double> hg(*host, n, n), hw(*host, n, 1), dg(*dev, n, n), dw(*dev, n, 1), v(*host, n, n), w(*host, n, 1);
      host->copy(g.cview(), hg.view());
      dev->copy(g.cview(), dg.view());
      host->symmetric_eig(hg.view(), hw.view());
      dev->symmetric_eig(dg.view(), dw.view());
      dev->copy(MatrixView<const double>(dg.view()), v.view());
      dev->copy(MatrixView<const double>(dw.view()), w.view());
      for (index_t i = 1; i < n; ++i) EXPECT_GE(w.view()(i - 1, 0), w.view()(i, 0)) << kind << " " << n << " " << i;
      const test::EigenErrors err = test::eigen_errors(g, v, w, hw);
      const double norm = err.norm, value = err.value, orth = err.orthogonality, resid = err.residual;
      const std::string what = kind + " n = " + std::to_string(n);
      EXPECT_LE(value, 1e-12 * norm) << what;
      EXPECT_LT(orth, 1e-12) << what;
      EXPECT_LE(resid, 1e-12 * norm) << what;
      std::printf("%-8s n = %3ld  max|w - w_lapack| / ||G|| %.1e  orthogonality %.1e  residual / ||G|| %.1e\n",
                  kind.c_str(), static_cast<long>(n), norm > 0 ? value / norm : value, orth, norm > 0 ? resid / norm : resid);
    }
  }
}

}  // namespace
}  // namespace randnla
