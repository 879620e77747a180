// GPU test of the randomized low-rank approximation (and the FP16 x FP16 products it uses).

#include <cstdio>

#include "randnla/backends.hpp"
#include "randnla/lra/randomized_lra.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
// The randomized LRA on the device, every product variant with and without one refinement step:
// within 2x of the host's error on the paper's rank-k matrices (the same Omega on both), and the
// refined 32|32 and 16|32 variants at the FP32 baseline, subspace refinement too (one step or two,
// from five sketches, Auto's in TF32); the FP16 x FP16 products it uses for 16|32
// (FP32 sums) and 16|16 (FP16 sums and C) against FP64.
TEST(Gpu, LraOnDeviceMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t m = 2000, n = 1500, k = 32;
  const auto a = test::gaussian_rank(m, n, k, 81);
  const auto da = test::to_backend(*dev, a);
  auto error = [&](Backend& b, const LraResult& r) {
    return test::factor_relative_error(a.cview(), test::to_host(b, r.X).cview(), test::to_host(b, r.Y).cview());
  };
  double fp32 = 0;
  for (ProductPrecision p : {ProductPrecision::fp32(), ProductPrecision::tf32(), ProductPrecision::fp16(), ProductPrecision::fp16_once(),
                        ProductPrecision::fp16_all(), ProductPrecision::split_in(TensorCore::Auto), ProductPrecision::automatic()})
    for (int steps : {0, 1}) {
      LraOptions o;
      o.products = p, o.refinements = steps, o.recompress = false;
      const double ed = error(*dev, randomized_lra(*dev, da, k, o));
      const double eh = error(*host, randomized_lra(*host, a.cview(), k, o));
      if (p == ProductPrecision::fp32() && steps == 0) fp32 = ed;
      std::printf("lra %s refined %d: device %.3e, host %.3e\n", to_string(p), steps, ed, eh);
      EXPECT_LE(ed, 2 * eh + 1e-7) << to_string(p) << " " << steps;
      if (steps == 1 && p != ProductPrecision::fp16_all()) EXPECT_LE(ed, 2 * fp32 + 1e-7) << to_string(p);
    }
  LraOptions o;
  o.products = ProductPrecision::fp16_once(), o.refinements = 1;
  const double recompressed = error(*dev, randomized_lra(*dev, da, k, o));
  std::printf("lra fp16-once refined, recompressed to rank k: device %.3e\n", recompressed);
  EXPECT_LE(recompressed, 2 * fp32 + 1e-7);
  o.refinement = LraRefinement::Subspace;
  for (ProductPrecision p : {ProductPrecision::tf32(), ProductPrecision::fp16_once(), ProductPrecision::fp16_all(), ProductPrecision::split_in(TensorCore::Auto),
                        ProductPrecision::automatic()})
    for (int steps : {1, 2}) {
      o.products = p, o.refinements = steps;
      const LraResult r = randomized_lra(*dev, da, k, o);
      const double ed = error(*dev, r), eh = error(*host, randomized_lra(*host, a.cview(), k, o));
      std::printf("lra %s, %d subspace steps: device %.3e, host %.3e\n", to_string(p), steps, ed, eh);
      EXPECT_EQ(r.X.cols(), k) << to_string(p);
      // Auto's choice comes with its reason: "tf32 (auto: ...)".
      const std::string ran = r.report.products.substr(0, r.report.products.find(' '));
      EXPECT_EQ(ran, p == ProductPrecision::automatic() ? "tf32" : to_string(p)) << r.report.products;
      EXPECT_LE(ed, 2 * fp32 + 1e-7) << to_string(p) << " " << steps;
      EXPECT_LE(ed, 2 * eh + 1e-7) << to_string(p) << " " << steps;
    }
  const index_t pm = 300, pn = 200, pk = 1000;
  auto pa = test::random_matrix(pm, pk, Elements::Normal, 83), pb = test::random_matrix(pk, pn, Elements::Normal, 84);
  for (float& v : pa.data) v = to_float(to_fp16(v));
  for (float& v : pb.data) v = to_float(to_fp16(v));
  Matrix<float> c(*dev, pm, pn);
  dev->product(Op::N, Op::N, 1.0f, to_device_fp16(*dev, pa), to_device_fp16(*dev, pb), 0.0f, c);
  const auto reference = test::reference_gemm(Op::N, Op::N, pa, pb);
  EXPECT_LT(test::relative_error(test::to_host(*dev, c), reference), 1e-6);
  Matrix<fp16> c16(*dev, pm, pn);
  dev->product(Op::N, Op::N, 1.0f, to_device_fp16(*dev, pa), to_device_fp16(*dev, pb), 0.0f, c16.view());
  dev->convert(c16, c.view());
  const double half_sums = test::relative_error(test::to_host(*dev, c), reference);
  std::printf("FP16 sums and C: relative error %.3e\n", half_sums);
  EXPECT_GT(half_sums, 1e-4) << "C must be FP16";
  EXPECT_LT(half_sums, 3e-2);
}

}  // namespace
}  // namespace randnla
