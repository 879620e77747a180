// Host emulation of SHGEMM / TCEC-SGEMM against an FP64 reference (SHGEMM paper Fig. 5 inputs,
// TCEC paper exponent classes), and the error measures' ability to fail.
#include "randnla/backends.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using test::Elements;

struct GemmCase {
  index_t m, n, k;
  Op ta, tb;
};

class HostGemm : public ::testing::TestWithParam<Elements> {
 protected:
  std::unique_ptr<Backend> b = make_backend(BackendKind::Host);

  // Errors of SGEMM and of the variant under test on the same inputs.
  // Errors of SGEMM and of the variant under test on the same inputs. With `fp16_b`, B is a
  // Gaussian projection rounded to FP16 (SHGEMM's use); otherwise B is of the class too.
  template <class Run>
  std::pair<double, double> errors(const GemmCase& c, Elements e, bool fp16_b, Run run) {
    const index_t ar = c.ta == Op::N ? c.m : c.k, ac = c.ta == Op::N ? c.k : c.m;
    const index_t br = c.tb == Op::N ? c.k : c.n, bc = c.tb == Op::N ? c.n : c.k;
    auto a = test::random_matrix(ar, ac, e, 11);
    auto bm = test::random_matrix(br, bc, fp16_b ? Elements::Normal : e, 12);
    if (fp16_b)
      for (float& v : bm.data) v = to_float(to_fp16(v));
    test::HostMatrix<float> c0(c.m, c.n), c1(c.m, c.n);
    b->product(c.ta, c.tb, 1.0f, a.cview(), bm.cview(), 0.0f, c0.view(), ProductPrecision::fp32());
    run(c, a, bm, c1);
    const auto ref = test::reference_gemm(c.ta, c.tb, a, bm);
    return {test::relative_error(c0, ref), test::relative_error(c1, ref)};
  }
};

TEST_P(HostGemm, TcecWithin2xOfSgemm) {
  for (TensorCore tc : {TensorCore::TF32, TensorCore::Auto, TensorCore::FP16}) {
    for (GemmCase c : {GemmCase{33, 17, 16, Op::N, Op::N}, GemmCase{64, 48, 1000, Op::T, Op::N},
                       GemmCase{50, 70, 4096, Op::N, Op::T}}) {
      auto [e_sgemm, e_tcec] = errors(c, GetParam(), false, [&](const GemmCase& g, auto& a, auto& bm, auto& out) {
        b->product(g.ta, g.tb, 1.0f, a.cview(), bm.cview(), 0.0f, out.view(), ProductPrecision::split_in(tc));
      });
      EXPECT_LE(e_tcec, 2.0 * e_sgemm + 1e-12) << to_string(tc) << " k=" << c.k;
    }
  }
}

TEST_P(HostGemm, ShgemmWithin2xOfSgemm) {
  for (TensorCore tc : {TensorCore::TF32, TensorCore::Auto, TensorCore::FP16}) {
    const GemmCase c{65, 40, 2048, Op::N, Op::N};
    auto [e_sgemm, e_sh] = errors(c, GetParam(), true, [&](const GemmCase& g, auto& a, auto& bm, auto& out) {
      test::HostMatrix<fp16> bh(bm.rows, bm.cols);
      for (std::size_t i = 0; i < bm.data.size(); ++i) bh.data[i] = to_fp16(bm.data[i]);
      b->product(g.ta, g.tb, 1.0f, a.cview(), bh.cview(), 0.0f, out.view(), ProductPrecision::split_in(tc));
    });
    EXPECT_LE(e_sh, 2.0 * e_sgemm + 1e-12) << to_string(tc);
  }
}

// FP16 x FP16 with FP32 sums (the randomized LRA's 16|32): the FP32 product of the exact
// widenings, against FP64, for both ops and beta != 0.
TEST(HostGemmFp16, BothOperandsFp16SumInFp32) {
  auto b = make_backend(BackendKind::Host);
  for (Op ta : {Op::N, Op::T}) {
    const index_t m = 37, n = 29, k = 300;
    auto a = test::random_matrix(ta == Op::N ? m : k, ta == Op::N ? k : m, Elements::Normal, 31);
    auto bm = test::random_matrix(k, n, Elements::Normal, 32);
    test::HostMatrix<fp16> ah(a.rows, a.cols), bh(bm.rows, bm.cols);
    for (std::size_t i = 0; i < a.data.size(); ++i) ah.data[i] = to_fp16(a.data[i]), a.data[i] = to_float(ah.data[i]);
    for (std::size_t i = 0; i < bm.data.size(); ++i) bh.data[i] = to_fp16(bm.data[i]), bm.data[i] = to_float(bh.data[i]);
    test::HostMatrix<float> c(m, n);
    for (float& v : c.data) v = 1.0f;
    b->product(ta, Op::N, 2.0f, ah.cview(), bh.cview(), 0.5f, c.view());
    auto ref = test::reference_gemm(ta, Op::N, a, bm);
    for (double& v : ref.data) v = 2.0 * v + 0.5;
    EXPECT_LT(test::relative_error(c, ref), 1e-6) << (ta == Op::N ? "N" : "T");
  }
}

// FP16 sums and C ("16|16"): every partial sum rounded to FP16 in order of k, as a sequential
// FP16 loop here rounds it (bit for bit), and an FP16-sized error against FP64.
TEST(HostGemmFp16, Fp16SumsAndC) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 23, n = 19, k = 400;
  auto a = test::random_matrix(k, m, Elements::Normal, 41), bm = test::random_matrix(k, n, Elements::Normal, 42);
  test::HostMatrix<fp16> ah(k, m), bh(k, n), c(m, n);
  for (std::size_t i = 0; i < a.data.size(); ++i) ah.data[i] = to_fp16(a.data[i]), a.data[i] = to_float(ah.data[i]);
  for (std::size_t i = 0; i < bm.data.size(); ++i) bh.data[i] = to_fp16(bm.data[i]), bm.data[i] = to_float(bh.data[i]);
  b->product(Op::T, Op::N, 1.0f, ah.cview(), bh.cview(), 0.0f, c.view());
  const auto ref = test::reference_gemm(Op::T, Op::N, a, bm);
  test::HostMatrix<float> widened(m, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      float sum = 0;
      for (index_t t = 0; t < k; ++t) sum = to_float(to_fp16(sum + a(t, i) * bm(t, j)));
      ASSERT_EQ(to_float(c(i, j)), sum) << i << "," << j;
      widened(i, j) = to_float(c(i, j));
    }
  const double error = test::relative_error(widened, ref);
  EXPECT_GT(error, 1e-4);
  EXPECT_LT(error, 2e-2);
}

INSTANTIATE_TEST_SUITE_P(Classes, HostGemm,
                         ::testing::Values(Elements::Normal, Elements::Uniform01, Elements::ExpRand_m15_15,
                                           Elements::ExpRand_m35_m15, Elements::ExpRand_m45_m35),
                         [](const auto& info) {
                           switch (info.param) {
                             case Elements::Normal: return std::string("Normal");
                             case Elements::Uniform01: return std::string("Uniform01");
                             case Elements::ExpRand_m15_15: return std::string("ExpM15To15");
                             case Elements::ExpRand_m35_m15: return std::string("ExpM35ToM15");
                             default: return std::string("ExpM45ToM35");
                           }
                         });

TEST(HostGemmCheck, UncorrectedFp16GemmFailsTheCriterion) {
  // The plain FP16 product (no lo term: a broken split) must miss the 2x-of-SGEMM bound.
  auto b = make_backend(BackendKind::Host);
  auto a = test::random_matrix(64, 512, Elements::Normal, 1), bm = test::random_matrix(512, 32, Elements::Normal, 2);
  test::HostMatrix<float> c0(64, 32), c1(64, 32);
  b->product(Op::N, Op::N, 1.0f, a.cview(), bm.cview(), 0.0f, c0.view(), ProductPrecision::fp32());
  b->product(Op::N, Op::N, 1.0f, a.cview(), bm.cview(), 0.0f, c1.view(), ProductPrecision::fp16());
  const auto ref = test::reference_gemm(Op::N, Op::N, a, bm);
  EXPECT_GT(test::relative_error(c1, ref), 2.0 * test::relative_error(c0, ref) * 10);
}

TEST(HostGemmCheck, AlphaBetaOddShapesAndReport) {
  auto b = make_backend(BackendKind::Host);
  auto a = test::random_matrix(31, 7, Elements::Normal, 3), bm = test::random_matrix(9, 7, Elements::Normal, 4);
  test::HostMatrix<float> c(31, 9), c_ref(31, 9);
  for (std::size_t i = 0; i < c.data.size(); ++i) c.data[i] = c_ref.data[i] = static_cast<float>(i % 5);
  ProductReport r;
  b->product(Op::N, Op::T, 2.0f, a.cview(), bm.cview(), -0.5f, c.view(), ProductPrecision::split_in(TensorCore::Auto), &r);
  EXPECT_EQ(r.mode, ProductMode::Split);
  EXPECT_EQ(r.a_format, TensorCore::FP16);
  const auto ab = test::reference_gemm(Op::N, Op::T, a, bm);
  test::HostMatrix<double> expect(31, 9);
  for (std::size_t i = 0; i < c.data.size(); ++i) expect.data[i] = 2.0 * ab.data[i] - 0.5 * c_ref.data[i];
  EXPECT_LT(test::relative_error(c, expect), 1e-6);
  test::HostMatrix<float> wrong(30, 9);
  EXPECT_THROW(b->product(Op::N, Op::T, 1.0f, a.cview(), bm.cview(), 0.0f, wrong.view(), ProductPrecision::split_in(TensorCore::Auto)),
               InvalidArgument);
}

TEST(HostGemmCheck, Fp16BaselineFallsBackInsteadOfOverflowing) {
  auto b = make_backend(BackendKind::Host);
  auto a = test::random_matrix(16, 16, Elements::Normal, 3), bm = test::random_matrix(16, 16, Elements::Normal, 4);
  a(1, 2) = 1e6f;  // beyond FP16's 65504
  test::HostMatrix<float> c(16, 16);
  b->product(Op::N, Op::N, 1.0f, a.cview(), bm.cview(), 0.0f, c.view(), ProductPrecision::fp16());
  const auto ref = test::reference_gemm(Op::N, Op::N, a, bm);
  for (float v : c.data) ASSERT_TRUE(std::isfinite(v));
  EXPECT_LT(test::relative_error(c, ref), 1e-3);
}

TEST(HostGemmCheck, NonFiniteInputPropagatesAndChoosesTf32) {
  auto b = make_backend(BackendKind::Host);
  auto a = test::random_matrix(8, 8, Elements::Normal, 3), bm = test::random_matrix(8, 8, Elements::Normal, 4);
  a(2, 3) = std::numeric_limits<float>::infinity();
  test::HostMatrix<float> c(8, 8);
  ProductReport r;
  b->product(Op::N, Op::N, 1.0f, a.cview(), bm.cview(), 0.0f, c.view(), ProductPrecision::split_in(TensorCore::FP16), &r);
  EXPECT_EQ(r.a_format, TensorCore::TF32);
  for (index_t j = 0; j < 8; ++j) EXPECT_FALSE(std::isfinite(c(2, j)));
  EXPECT_TRUE(std::isfinite(c(1, 1)));
}

TEST(HostProducts, AutoRunsFp32WithoutTensorCoresAndSaysWhy) {
  auto b = make_backend(BackendKind::Host);
  auto a = test::random_matrix(40, 300, Elements::ExpRand_m15_15, 5), bm = test::random_matrix(300, 20, Elements::Normal, 6);
  test::HostMatrix<float> c(40, 20), c32(40, 20);
  ProductReport r;
  b->product(Op::N, Op::N, 1.0f, a.cview(), bm.cview(), 0.0f, c.view(), ProductPrecision::automatic(), &r);
  b->product(Op::N, Op::N, 1.0f, a.cview(), bm.cview(), 0.0f, c32.view(), ProductPrecision::fp32());
  EXPECT_EQ(r.mode, ProductMode::FP32);
  EXPECT_NE(r.why.find("no Tensor Cores"), std::string::npos) << r.why;
  EXPECT_EQ(c.data, c32.data);
}

TEST(HostProducts, Fp16OperandOutsideSplitIsWidenedExactly) {
  // A non-split product with an FP16 B multiplies B's exact FP32 values: SGEMM's result on them.
  auto b = make_backend(BackendKind::Host);
  auto a = test::random_matrix(33, 64, Elements::Normal, 7), bm = test::random_matrix(64, 12, Elements::Normal, 8);
  test::HostMatrix<fp16> bh(64, 12);
  for (std::size_t i = 0; i < bm.data.size(); ++i) bh.data[i] = to_fp16(bm.data[i]), bm.data[i] = to_float(bh.data[i]);
  test::HostMatrix<float> c(33, 12), c32(33, 12);
  b->product(Op::N, Op::N, 1.0f, a.cview(), bh.cview(), 0.0f, c.view(), ProductPrecision::fp32());
  b->product(Op::N, Op::N, 1.0f, a.cview(), bm.cview(), 0.0f, c32.view(), ProductPrecision::fp32());
  EXPECT_EQ(c.data, c32.data);
  const auto ref = test::reference_gemm(Op::N, Op::N, a, bm);
  EXPECT_LT(test::relative_error(c, ref), 1e-6);
}

TEST(HostProducts, StridedBatchEqualsOneProductPerMatrix) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 9, n = 5, k = 7, count = 4;
  // A: count blocks k x m side by side in an 8-row matrix (ld 8 > k), used transposed; B shared.
  auto a = test::random_matrix(8, m * count, Elements::Normal, 9), bm = test::random_matrix(k, n, Elements::Normal, 10);
  test::HostMatrix<float> c(m, n * count), one(m, n);
  const MatrixView<const float> a0 = a.cview().block(0, 0, k, m), b0 = bm.cview();
  b->product_strided_batched(Op::T, Op::N, 1.0f, StridedBatch<const float>{a0, 8 * m, count},
                             StridedBatch<const float>{b0, 0, count}, 0.0f,
                             StridedBatch<float>{c.view().block(0, 0, m, n), m * n, count}, ProductPrecision::fp32());
  for (index_t i = 0; i < count; ++i) {
    b->product(Op::T, Op::N, 1.0f, a.cview().block(0, i * m, k, m), b0, 0.0f, one.view(), ProductPrecision::fp32());
    for (index_t j = 0; j < n; ++j)
      for (index_t r = 0; r < m; ++r) ASSERT_EQ(c(r, i * n + j), one(r, j)) << "matrix " << i;
  }
  EXPECT_THROW(b->product_strided_batched(Op::T, Op::N, 1.0f, StridedBatch<const float>{a0, 8 * m, count},
                                          StridedBatch<const float>{b0, 0, count}, 0.0f,
                                          StridedBatch<float>{c.view().block(0, 0, m, n), m, count}),
               InvalidArgument);  // outputs would overlap
  EXPECT_THROW(b->product_strided_batched(Op::T, Op::N, 1.0f, StridedBatch<const float>{a0, 8 * m, count - 1},
                                          StridedBatch<const float>{b0, 0, count}, 0.0f,
                                          StridedBatch<float>{c.view().block(0, 0, m, n), m * n, count}),
               InvalidArgument);  // counts differ
}

// C := alpha sum_i op(A_i) B_i + beta C, K running over count slices of A (a middle-mode unfolding
// times a sketch), both op(A) layouts, B FP32 and FP16, in several waves of partial sums: equal to
// the FP64 sum over all of K.
TEST(HostProducts, SummedProductRunsKOverTheSlices) {
  auto b = make_backend(BackendKind::Host);
  const index_t slice_k = 8, m = 5, n = 3, count = 40;  // |A| / 16 = 100 elements: 6 partial sums, 7 waves
  const auto bm = test::random_matrix(slice_k * count, n, Elements::Normal, 12);
  test::HostMatrix<fp16> bh(slice_k * count, n);
  test::HostMatrix<float> bw(slice_k * count, n);  // the FP16 values, widened
  for (std::size_t e = 0; e < bm.data.size(); ++e) bh.data[e] = to_fp16(bm.data[e]), bw.data[e] = to_float(bh.data[e]);
  for (Op ta : {Op::T, Op::N}) {
    const index_t rows = ta == Op::T ? slice_k : m, cols = ta == Op::T ? m : slice_k;
    const auto a = test::random_matrix(rows, cols * count, Elements::Normal, 11);
    const StridedBatch<const float> slices{a.cview().block(0, 0, rows, cols), rows * cols, count};
    const auto c0 = test::random_matrix(m, n, Elements::Normal, 13);
    for (ProductPrecision p : {ProductPrecision::fp32(), ProductPrecision::split_in(TensorCore::FP16)})
      for (bool half : {false, true}) {
        test::HostMatrix<float> c = c0;
        if (half)
          b->product_summed(ta, Op::N, 2.0f, slices, StridedBatch<const fp16>{bh.cview().block(0, 0, slice_k, n), slice_k, count},
                            0.5f, c.view(), p);
        else
          b->product_summed(ta, Op::N, 2.0f, slices, StridedBatch<const float>{bm.cview().block(0, 0, slice_k, n), slice_k, count},
                            0.5f, c.view(), p);
        const test::HostMatrix<float>& bref = half ? bw : bm;
        double num = 0, den = 0;
        for (index_t j = 0; j < n; ++j)
          for (index_t r = 0; r < m; ++r) {
            double s = 0;
            for (index_t i = 0; i < count; ++i)
              for (index_t q = 0; q < slice_k; ++q)
                s += double(ta == Op::T ? a(q, i * m + r) : a(r, i * slice_k + q)) * bref(q + i * slice_k, j);
            const double ref = 2 * s + 0.5 * c0(r, j);
            num += (c(r, j) - ref) * (c(r, j) - ref), den += ref * ref;
          }
        EXPECT_LT(std::sqrt(num / den), 1e-6) << (ta == Op::T ? "T " : "N ") << to_string(p.mode) << (half ? " fp16 B" : "");
      }
  }
  test::HostMatrix<float> c(m, n);
  EXPECT_THROW(b->product_summed(Op::T, Op::N, 1.0f, StridedBatch<const float>{bm.cview().block(0, 0, slice_k, m), 0, 2},
                                 StridedBatch<const float>{bm.cview().block(0, 0, slice_k, n), slice_k, 3}, 0.0f, c.view()),
               InvalidArgument);  // counts differ
}

// Y := alpha X + beta Y on every portable backend; beta = 0 ignores a NaN that Y held.
TEST(Elementwise, AddIsAxpby) {
  const auto x = test::random_matrix(17, 9, Elements::Normal, 51);
  const auto y = test::random_matrix(17, 9, Elements::Normal, 52);
  for (const auto& [name, b] : test::portable_backends()) {
    for (float beta : {0.0f, -0.5f}) {
      auto start = y;
      start(3, 4) = beta == 0.0f ? NAN : start(3, 4);
      Matrix<float> dy = test::to_backend(*b, start);
      b->add(2.0f, test::to_backend(*b, x), beta, dy.view());
      const auto got = test::to_host(*b, dy);
      for (index_t j = 0; j < 9; ++j)
        for (index_t i = 0; i < 17; ++i) ASSERT_EQ(got(i, j), 2.0f * x(i, j) + beta * y(i, j)) << name << " " << i;
    }
  }
}

}  // namespace
}  // namespace randnla
