// GPU tests of the element-wise passes and reductions: CholeskyQR's equilibration, column scaling,
// scaled and plain FP16 conversions, exponent histograms, scale and add, against the host's bits.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "randnla/backends.hpp"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
// CholeskyQR's equilibration, the FP64 column scaling and the scaled conversion to FP32 give the
// host's bits.
TEST(Gpu, EquilibrateAndScaleColumnsMatchHostBitForBit) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t n = 37, m = 101;
  Matrix<double> hg(*host, n, n), hd(*host, n, 1), hy(*host, m, n), dg(*dev, n, n), dd(*dev, n, 1), dy(*dev, m, n);
  const auto r = test::random_matrix(m, n, Elements::Normal, 4);
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < m; ++i) hy.view()(i, j) = r(i, j) * std::pow(3.0, static_cast<double>(j % 9) - 4);
    for (index_t i = 0; i < n; ++i) hg.view()(i, j) = r(i, j) * r(j, i) + (i == j ? 1.5 + j : 0.0);
  }
  hg.view()(3, 3) = 0.0;
  hg.view()(5, 5) = -1.0;
  hg.view()(7, 7) = INFINITY;
  dev->copy(MatrixView<const double>(hg.view()), dg.view());
  dev->copy(MatrixView<const double>(hy.view()), dy.view());
  host->ops<CholeskyQrOps>().equilibrate(hg.view(), hd.view());
  dev->ops<CholeskyQrOps>().equilibrate(dg.view(), dd.view());
  Matrix<float> hq(*host, m, n), dq(*dev, m, n), q(*host, m, n);
  host->ops<CholeskyQrOps>().convert_scaled(hy, hd, hq.view());
  dev->ops<CholeskyQrOps>().convert_scaled(dy, dd, dq.view());
  dev->copy(MatrixView<const float>(dq.view()), q.view());
  EXPECT_EQ(0, std::memcmp(q.data(), hq.data(), sizeof(float) * m * n));
  host->scale_columns(hd, hy.view());
  dev->scale_columns(dd, dy.view());
  Matrix<double> g(*host, n, n), d(*host, n, 1), y(*host, m, n);
  dev->copy(MatrixView<const double>(dg.view()), g.view());
  dev->copy(MatrixView<const double>(dd.view()), d.view());
  dev->copy(MatrixView<const double>(dy.view()), y.view());
  EXPECT_EQ(0, std::memcmp(g.data(), hg.data(), sizeof(double) * n * n));
  EXPECT_EQ(0, std::memcmp(d.data(), hd.data(), sizeof(double) * n));
  EXPECT_EQ(0, std::memcmp(y.data(), hy.data(), sizeof(double) * m * n));
  EXPECT_EQ(d.view()(3, 0), 1.0);
  EXPECT_EQ(d.view()(7, 0), 1.0);
}

// The fused FP16 conversion and exponent histogram, the plain conversion and histogram, scale and
// add, on three views with more elements than the kernels' threads: a whole matrix of an odd size
// (read four entries at a time, with a tail), a block of a larger matrix (ld > rows) and the
// columns after the first (contiguous but not 16-byte aligned), both walked entry by entry. Each
// FP16 copy and scaled matrix equals the host's bit for bit, each histogram the host's (zeros left
// out, Inf and NaN counted as non-finite), each sum the host's to the rounding of a fused
// multiply-add (which the device may contract alpha x + beta y into).
TEST(Gpu, SignsOfLargestEqualTheReferenceOnTiesAndBlocks) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  for (const index_t m : {index_t(1), index_t(255), index_t(100003)}) {
    const index_t k = 600;  // past one page-locked read-back (512 floats)
    const std::vector<float> x = test::columns_with_ties(m, k);
    Matrix<float> dx(*dev, m + 3, k);
    dev->copy(MatrixView<const float>(x.data(), m, k, m, MemorySpace::Host), dx.view().block(0, 0, m, k));
    EXPECT_EQ(dev->signs_of_largest(dx.view().block(0, 0, m, k)), test::signs_of_largest_reference(x, m, k)) << "m = " << m;
  }
}

TEST(Gpu, ElementwisePassesEqualTheHostsOnEveryLayout) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t ld = 1003, n = 701;
  Matrix<float> hx(*host, ld, n), dx(*dev, ld, n);
  const auto r = test::random_matrix(ld, n, Elements::Normal, 12);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < ld; ++i)
      hx.view()(i, j) = static_cast<float>(r(i, j) * std::ldexp(1.0, static_cast<int>((i * 7 + j) % 61) - 30));
  hx.view()(0, 2) = 0.0f, hx.view()(5, 3) = INFINITY, hx.view()(9, 400) = NAN, hx.view()(996, 700) = -1e30f;
  dev->copy(MatrixView<const float>(hx.view()), dx.view());
  struct Case {
    const char* name;
    index_t i0, j0, rows, cols;
  };
  for (const Case& c : {Case{"whole", 0, 0, ld, n}, Case{"ld > rows", 0, 0, 997, n}, Case{"unaligned", 0, 1, ld, n - 1}}) {
    const MatrixView<const float> hb = hx.view().block(c.i0, c.j0, c.rows, c.cols);
    const MatrixView<const float> db = dx.view().block(c.i0, c.j0, c.rows, c.cols);
    Matrix<fp16> hh(*host, c.rows, c.cols), dh(*dev, c.rows, c.cols), dh2(*dev, c.rows, c.cols), h(*host, c.rows, c.cols);
    host->convert(hb, hh.view());
    const ExponentHistogram want = host->exponent_histogram(hb);
    const ExponentHistogram got = dev->convert_measured(db, dh.view());
    const ExponentHistogram separate = dev->exponent_histogram(db);
    dev->copy(MatrixView<const fp16>(dh.view()), h.view());
    EXPECT_EQ(0, std::memcmp(h.data(), hh.data(), sizeof(fp16) * c.rows * c.cols)) << c.name;
    dev->convert(db, dh2.view());
    dev->copy(MatrixView<const fp16>(dh2.view()), h.view());
    EXPECT_EQ(0, std::memcmp(h.data(), hh.data(), sizeof(fp16) * c.rows * c.cols)) << c.name;
    EXPECT_EQ(0, std::memcmp(got.count, want.count, sizeof(want.count))) << c.name;
    EXPECT_EQ(0, std::memcmp(separate.count, want.count, sizeof(want.count))) << c.name;
    EXPECT_EQ(want.nonfinite(), 2) << c.name;
    for (int e : {-9, 17}) {  // scaled on the way: the host's FP16 bits, and the unscaled histogram
      host->convert_measured(hb, hh.view(), e);
      EXPECT_EQ(0, std::memcmp(dev->convert_measured(db, dh.view(), e).count, want.count, sizeof(want.count))) << c.name;
      dev->copy(MatrixView<const fp16>(dh.view()), h.view());
      EXPECT_EQ(0, std::memcmp(h.data(), hh.data(), sizeof(fp16) * c.rows * c.cols)) << c.name << " exponent " << e;
    }
    std::int64_t counted = 0;
    for (std::int64_t k : got.count) counted += k;
    EXPECT_EQ(counted, c.rows * c.cols - 1) << c.name;

    Matrix<float> hy(*host, ld, n), dy(*dev, ld, n), y(*host, ld, n), hs(*host, ld, n), ds(*dev, ld, n);
    const auto ry = test::random_matrix(ld, n, Elements::Normal, 13);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < ld; ++i) hy.view()(i, j) = static_cast<float>(ry(i, j));
    dev->copy(MatrixView<const float>(hy.view()), dy.view());
    host->copy(MatrixView<const float>(hx.view()), hs.view());
    dev->copy(MatrixView<const float>(dx.view()), ds.view());
    host->add(0.75f, hb, -1.5f, hy.view().block(c.i0, c.j0, c.rows, c.cols));
    dev->add(0.75f, db, -1.5f, dy.view().block(c.i0, c.j0, c.rows, c.cols));
    host->scale(-3.0f, hs.view().block(c.i0, c.j0, c.rows, c.cols));
    dev->scale(-3.0f, ds.view().block(c.i0, c.j0, c.rows, c.cols));
    dev->copy(MatrixView<const float>(dy.view()), y.view());
    const auto same = [](float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    int far = 0;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < ld; ++i) {
        const float want_y = hy.view()(i, j), got_y = y.view()(i, j);
        const double bound = 0x1p-23 * (0.75 * std::fabs(hx.view()(i, j)) + 1.5 * std::fabs(ry(i, j)));
        if (!(same(got_y, want_y) || std::fabs(double(got_y) - double(want_y)) <= bound)) ++far;
      }
    EXPECT_EQ(far, 0) << c.name << ": add";
    dev->copy(MatrixView<const float>(ds.view()), y.view());
    int differ = 0;
    for (index_t e = 0; e < ld * n; ++e) differ += !same(y.data()[e], hs.data()[e]);
    EXPECT_EQ(differ, 0) << c.name << ": scale";
  }
}

}  // namespace
}  // namespace randnla
