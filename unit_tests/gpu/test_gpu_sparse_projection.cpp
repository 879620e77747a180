// GPU tests of the sparse sign projection: every kernel against the host and FP64, and as the
// RSVD's Omega.

#include <cstdio>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "randnla/sparse_projection/sparse_sign_projection.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
// The sparse sign projection on the device: S bit for bit the host's (the identity projected)
// for every kernel, very sparse and at Achlioptas's p = 1/3; the row-warp kernel's Y bit for bit
// the host's (it sums in the host's order), the warp-gathers and Tensor Core kernels' within FP32
// rounding, in both layouts, for b below, at and above 32.
TEST(Gpu, SparseProjectionMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const std::vector<SparseKernel> kernels{SparseKernel::RowWarp, SparseKernel::WarpGathers, SparseKernel::TensorCoreTiles};
  SparseProjectionOptions o;
  o.density = SparseDensity::Given;
  test::HostMatrix<float> eye(300, 300);
  for (index_t i = 0; i < 300; ++i) eye(i, i) = 1.0f;
  for (double p : {0.05, 1.0 / 3.0}) {
    o.density_value = p;
    const auto s_host = test::to_host(*host, sparse_sign_projection(*host, eye.cview(), 40, o).Y);
    for (SparseKernel kernel : kernels) {
      o.kernel = kernel;
      EXPECT_EQ(test::to_host(*dev, sparse_sign_projection(*dev, test::to_backend(*dev, eye), 40, o).Y).data,
                s_host.data) << to_string(kernel) << ", p " << p;
    }
  }
  for (double p : {0.0, 1.0 / 3.0})  // 0: very sparse
    for (index_t b : {5, 32, 45})
      for (SampleLayout layout : {SampleLayout::Columns, SampleLayout::Rows}) {
        const index_t d = p > 0 ? 40000 : 300000, k = 257;
        const auto a = layout == SampleLayout::Columns ? test::random_matrix(d, b, test::Elements::Normal, 61)
                                                       : test::random_matrix(b, d, test::Elements::Normal, 61);
        o = {};
        o.layout = layout;
        if (p > 0) o.density = SparseDensity::Achlioptas;
        const auto host_y = test::to_host(*host, sparse_sign_projection(*host, a.cview(), k, o).Y);
        test::HostMatrix<float> samples(d, b);  // A as D x b for the FP64 reference
        for (index_t i = 0; i < d; ++i)
          for (index_t c = 0; c < b; ++c) samples(i, c) = layout == SampleLayout::Columns ? a(i, c) : a(c, i);
        const auto ref = test::sparse_projection_fp64(sparse_sign_operator(k, d, o), samples);
        const auto da = test::to_backend(*dev, a);
        const std::string where = "b " + std::to_string(b) + " " + to_string(layout) + ", p " + std::to_string(p);
        o.kernel = SparseKernel::RowWarp;
        EXPECT_EQ(test::to_host(*dev, sparse_sign_projection(*dev, da, k, o).Y).data, host_y.data) << where;
        for (SparseKernel kernel : {SparseKernel::WarpGathers, SparseKernel::TensorCoreTiles, SparseKernel::Auto}) {
          o.kernel = kernel;
          const auto r = sparse_sign_projection(*dev, da, k, o);
          const double error = test::relative_error(test::to_host(*dev, r.Y), ref);
          if (b == 32) std::printf("%s, %s: error %.2e\n", where.c_str(), r.report.kernel.c_str(), error);
          EXPECT_LT(error, p > 0 ? 4e-6 : 1e-6) << where << ": " << r.report.kernel;  // FP32 sums of 1e4 terms at p = 1/3
        }
      }
  // As the RSVD's Omega: a rank-40 matrix recovered to FP32 level on the device as on the host.
  const auto low = test::gaussian_rank(3000, 2000, 40, 62);
  RsvdOptions ro;
  ro.sketch_operator = SketchOperator::SparseSign, ro.power_iterations = 1;
  for (Backend* be : {dev.get(), host.get()}) {
    const auto r = rsvd(*be, test::to_backend(*be, low), 40, ro);
    const double err = test::lowrank_relative_error(low.cview(), test::to_host(*be, r.U).cview(),
                                                    test::to_host(*be, r.S).cview(), test::to_host(*be, r.V).cview());
    std::printf("rsvd, sparse sign sketch on %s: %.3e (%s)\n", be->description().c_str(), err, r.report.sketch_kernel.c_str());
    EXPECT_LT(err, 1e-5) << be->description();
  }
}

// The warp-gathers kernel over ranges of several segments, with a warp only partly filled with
// rows: k = 4001 at p = 1/sqrt(D), D = 10^6 (16 ranges of 8 segments of 1 MB of A: a lane leads its
// warp's slowest by a segment) and k = 16384 at p = 10^-4, D = 2 10^6 (4 ranges of 4 segments of
// 16 MB: a lane waits at each segment's end). Neither a lane without a row nor one done may hold
// the others back.
TEST(Gpu, SparseProjectionLongRangesMatchFp64) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  struct Case {
    index_t d, k;
    double p;  // 0: very sparse
  };
  const index_t b = 32;
  for (const Case& c : {Case{1000000, 4001, 0.0}, Case{2000000, 16384, 1e-4}}) {
    const auto a = test::random_matrix(b, c.d, test::Elements::Normal, 63);
    SparseProjectionOptions o;
    o.layout = SampleLayout::Rows;
    o.kernel = SparseKernel::WarpGathers;
    if (c.p > 0) o.density = SparseDensity::Given, o.density_value = c.p;
    const auto r = sparse_sign_projection(*dev, test::to_backend(*dev, a), c.k, o);
    test::HostMatrix<float> samples(c.d, b);
    for (index_t i = 0; i < c.d; ++i)
      for (index_t j = 0; j < b; ++j) samples(i, j) = a(j, i);
    const auto ref = test::sparse_projection_fp64(sparse_sign_operator(c.k, c.d, o), samples);
    EXPECT_LT(test::relative_error(test::to_host(*dev, r.Y), ref), 1e-6) << "D " << c.d << ": " << r.report.kernel;
  }
}

}  // namespace
}  // namespace randnla
