// GPU tests of the products family: TCEC and SHGEMM against cuBLAS SGEMM and FP64, every Tensor
// Core kernel and operand variant, split tail tiles, the Tensor Core's truncation, Inf and NaN
// (the non-finite epilogue), sums near FLT_MAX, summed and strided-batched products, and the
// split Gram and upper-triangular products.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "randnla/orthonormalize/cholesky_qr_ops.hpp"
#include "gpu_test_support.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace gpu_test;
struct Case {
  index_t m, n, k;
  Op ta, tb;
  float beta;
  index_t pad;  // lda = rows + pad
};

// op(A) op(B) on the device for one variant; returns the relative error against FP64.
double device_error(Backend& dev, const Case& c, Elements e, const std::function<void(MatrixView<const float>,
                    MatrixView<const float>, MatrixView<float>)>& run, double* sgemm_error) {
  const index_t ar = c.ta == Op::N ? c.m : c.k, ac = c.ta == Op::N ? c.k : c.m;
  const index_t br = c.tb == Op::N ? c.k : c.n, bc = c.tb == Op::N ? c.n : c.k;
  auto a = test::random_matrix(ar, ac, e, 21), b = test::random_matrix(br, bc, e, 22);
  auto ref = test::reference_gemm(c.ta, c.tb, a, b);
  // C's old values at the product's scale (RMS), so that beta C neither hides the product's error
  // (exp_rand(-45,-35) products are ~1e-22) nor is hidden by it.
  double sum_sq = 0;
  for (double x : ref.data) sum_sq += x * x;
  const double rms = std::sqrt(sum_sq / static_cast<double>(ref.data.size()));
  auto c0 = test::random_matrix(c.m, c.n, Elements::Normal, 23);
  for (float& x : c0.data) x = static_cast<float>(x * rms);
  for (std::size_t i = 0; i < ref.data.size(); ++i) ref.data[i] += c.beta * static_cast<double>(c0.data[i]);
  // A with a padded leading dimension.
  Matrix<float> a_pad(dev, ar + c.pad, ac);
  MatrixView<float> av = a_pad.view().block(0, 0, ar, ac);
  dev.copy(a.cview(), av);
  auto db = test::to_backend(dev, b);
  double errs[2];
  for (int variant = 0; variant < 2; ++variant) {
    auto dc = test::to_backend(dev, c0);
    if (variant == 0)
      dev.product(c.ta, c.tb, 1.0f, av, db, c.beta, dc, ProductPrecision::fp32());
    else
      run(av, db, dc);
    errs[variant] = test::relative_error(test::to_host(dev, dc), ref);
  }
  *sgemm_error = errs[0];
  return errs[1];
}

void expect_tcec_within_2x_of_sgemm(Elements e) {
  auto dev = make_backend(BackendKind::Cuda);
  const Case cases[] = {{1000, 513, 16, Op::N, Op::N, 0.0f, 0}, {257, 130, 1023, Op::T, Op::N, 0.5f, 3},
                        {192, 160, 4096, Op::N, Op::T, -1.0f, 0}, {128, 136, 16384, Op::T, Op::T, 0.0f, 1}};
  for (const Case& c : cases)
    for (TensorCore tc : {TensorCore::TF32, TensorCore::Auto, TensorCore::FP16}) {
      double e_sgemm = 0;
      ProductReport rep;
      const double e_tcec = device_error(*dev, c, e, [&](auto a, auto b, auto out) {
        dev->product(c.ta, c.tb, 1.0f, a, b, c.beta, out, ProductPrecision::split_in(tc), &rep);
      }, &e_sgemm);
      std::printf("tcec %-4s %-16s k=%-5d error %.3e, SGEMM's %.3e (%.2fx)\n", to_string(tc), test::to_string(e),
                  static_cast<int>(c.k), e_tcec, e_sgemm, e_tcec / e_sgemm);
      EXPECT_LE(e_tcec, 2.0 * e_sgemm) << "tcec " << to_string(tc) << " " << test::to_string(e) << " k=" << c.k
                                       << " used " << to_string(rep.a_format);
    }
}

TEST(Gpu, TcecWithin2xOfCublasSgemm) {
  RANDNLA_REQUIRE_GPU();
  for (Elements e : {Elements::Normal, Elements::ExpRand_m15_15, Elements::ExpRand_m35_m15, Elements::ExpRand_m45_m35})
    expect_tcec_within_2x_of_sgemm(e);
}

// All-positive inputs: each fresh Tensor Core sum is truncated (RZ) downwards before it is added
// outside, and those errors, all of one sign, add up over K where SGEMM's round-to-nearest errors
// cancel (TCEC at 2.1-3.2x SGEMM's error when each K slice had a fresh sum:
// backends/cuda/tc_gemm_notes.md); the wgmma kernel's pairs of slices (tc_gemm_sm90.cu) cancel them.
TEST(Gpu, TcecWithin2xOfCublasSgemmOnUniform01) {
  RANDNLA_REQUIRE_GPU();
  expect_tcec_within_2x_of_sgemm(Elements::Uniform01);
}

TEST(Gpu, ShgemmAgainstFp64WithFp16Omega) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  for (Elements e : {Elements::Normal, Elements::Uniform01, Elements::ExpRand_m15_15, Elements::ExpRand_m45_m35})
    for (TensorCore tc : {TensorCore::TF32, TensorCore::Auto, TensorCore::FP16})
      for (index_t k : {16, 1000, 16384}) {
        const index_t m = 300, n = 136;
        auto a = test::random_matrix(m, k, e, 31);
        Matrix<fp16> omega(*dev, k, n);
        dev->fill_random(RandomSpec{Distribution::Gaussian, 5, 0}, omega.view());
        auto host = make_backend(BackendKind::Host);
        Matrix<fp16> omega_h(*host, k, n);
        dev->copy(omega.view(), omega_h.view());
        test::HostMatrix<float> b(k, n);
        for (index_t i = 0; i < k * n; ++i) b.data[i] = to_float(omega_h.data()[i]);
        auto ref = test::reference_gemm(Op::N, Op::N, a, b);
        auto da = test::to_backend(*dev, a), db = test::to_backend(*dev, b);
        Matrix<float> c_sh(*dev, m, n), c_s(*dev, m, n);
        dev->product(Op::N, Op::N, 1.0f, da, omega, 0.0f, c_sh, ProductPrecision::split_in(tc));
        dev->product(Op::N, Op::N, 1.0f, da, db, 0.0f, c_s, ProductPrecision::fp32());
        const double e_sh = test::relative_error(test::to_host(*dev, c_sh), ref);
        const double e_s = test::relative_error(test::to_host(*dev, c_s), ref);
        EXPECT_LE(e_sh, 2.0 * e_s) << to_string(tc) << " " << test::to_string(e) << " k=" << k;
      }
}

/// x rounded to FP16 values (kept in FP32), so that an FP16 operand and its FP32 twin agree.
test::HostMatrix<float> fp16_exact(test::HostMatrix<float> x) {
  for (float& v : x.data) v = to_float(fp16{float_to_half_bits(v)});
  return x;
}

// Odd sizes, transposes, beta; the fifth and sixth cases give the wgmma kernel an FP16 operand with
// contiguous K in 16-byte rows, which it reads as it is (as op(B) = B, then as op(A) = A^T); the
// last two, a packed operand of at most 64 rows, its 64-wide tiles.
TEST(Gpu, EveryKernelAndOperandVariantWithin2xOfSgemm) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const Case cases[] = {{1000, 513, 100, Op::N, Op::N, 0.0f, 0},  {257, 130, 1023, Op::T, Op::N, 0.5f, 3},
                        {129, 300, 4100, Op::N, Op::T, -1.0f, 0}, {64, 200, 16384, Op::T, Op::T, 0.0f, 1},
                        {300, 257, 1024, Op::N, Op::N, 0.5f, 0},  {250, 129, 1000, Op::T, Op::T, 0.0f, 0},
                        {2000, 64, 1500, Op::N, Op::N, 0.5f, 0},  {777, 33, 2049, Op::T, Op::N, 0.0f, 2}};
  for (const char* kernel : tensor_core_kernels(*dev)) {
    ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
    for (const Case& c : cases)
      for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32}) {
        const index_t ar = c.ta == Op::N ? c.m : c.k, ac = c.ta == Op::N ? c.k : c.m;
        const index_t br = c.tb == Op::N ? c.k : c.n, bc = c.tb == Op::N ? c.n : c.k;
        const auto a32 = test::random_matrix(ar, ac, Elements::Normal, 41), b32 = test::random_matrix(br, bc, Elements::Normal, 42);
        const auto b16 = fp16_exact(b32);
        const auto c0 = test::random_matrix(c.m, c.n, Elements::Normal, 43);
        struct Variant {
          const char* name;
          const test::HostMatrix<float>& a;
          const test::HostMatrix<float>& b;
        } variants[] = {{"tcec", a32, b32}, {"shgemm", a32, b16}};
        for (const Variant& v : variants) {
          auto ref = test::reference_gemm(c.ta, c.tb, v.a, v.b);
          for (std::size_t i = 0; i < ref.data.size(); ++i) ref.data[i] += c.beta * static_cast<double>(c0.data[i]);
          auto da = test::to_backend(*dev, v.a), db = test::to_backend(*dev, v.b);
          auto ds = test::to_backend(*dev, c0), dc = test::to_backend(*dev, c0);
          dev->product(c.ta, c.tb, 1.0f, da, db, c.beta, ds, ProductPrecision::fp32());
          const std::string name = v.name;
          if (name == "tcec") dev->product(c.ta, c.tb, 1.0f, da, db, c.beta, dc, ProductPrecision::split_in(tc));
          if (name == "shgemm") dev->product(c.ta, c.tb, 1.0f, da, to_device_fp16(*dev, v.b), c.beta, dc, ProductPrecision::split_in(tc));
          const double e = test::relative_error(test::to_host(*dev, dc), ref);
          const double e_sgemm = test::relative_error(test::to_host(*dev, ds), ref);
          EXPECT_LE(e, 2.0 * e_sgemm) << kernel << " " << v.name << " " << to_string(tc) << " m=" << c.m << " n=" << c.n
                                      << " k=" << c.k;
        }
      }
  }
}

// Products whose last tiles the wgmma kernel splits along K (on the H100's 132 SMs: 136 tiles of
// 128 x 128 are one round of whole tiles and 4 split tiles; one 128 x 136 tile, the 136-wide
// kind, is split alone; eight 128 x 64 tiles, the 64-wide kind, as a rank-48 sketch's are), the
// parts' sums added in a fixed order by the last part to arrive. Each
// must be as accurate as SGEMM, with or without the split (RANDNLA_TC_SPLIT_PARTS = 1 turns it
// off), and identical bit for bit from run to run whichever part finishes last.
TEST(Gpu, SplitTailTilesAreAccurateAndBitwiseRepeatable) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  struct Shape {
    index_t m, n, k;
  } shapes[] = {{136 * 128, 128, 2048}, {128, 136, 8192}, {1024, 48, 16384}};
  for (const Shape& sh : shapes) {
    const auto a = test::random_matrix(sh.m, sh.k, Elements::Normal, 61);
    const auto b = fp16_exact(test::random_matrix(sh.k, sh.n, Elements::Normal, 62));
    const auto c0 = test::random_matrix(sh.m, sh.n, Elements::Normal, 63);
    auto ref = test::reference_gemm(Op::N, Op::N, a, b);
    for (std::size_t i = 0; i < ref.data.size(); ++i) ref.data[i] += 0.5 * static_cast<double>(c0.data[i]);
    auto da = test::to_backend(*dev, a), db = test::to_backend(*dev, b), ds = test::to_backend(*dev, c0);
    const Matrix<fp16> db16 = to_device_fp16(*dev, b);
    dev->product(Op::N, Op::N, 1.0f, da, db, 0.5f, ds, ProductPrecision::fp32());
    const double e_sgemm = test::relative_error(test::to_host(*dev, ds), ref);
    for (const char* parts : {"1", "64"}) {
      ScopedEnv env("RANDNLA_TC_SPLIT_PARTS", parts);
      for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32}) {
        auto c1 = test::to_backend(*dev, c0), c2 = test::to_backend(*dev, c0);
        dev->product(Op::N, Op::N, 1.0f, da, db16, 0.5f, c1, ProductPrecision::split_in(tc));
        dev->product(Op::N, Op::N, 1.0f, da, db, 0.5f, c2, ProductPrecision::split_in(tc));
        const auto h1 = test::to_host(*dev, c1), h2 = test::to_host(*dev, c2);
        const std::string what = "m=" + std::to_string(sh.m) + " parts<=" + parts + " " + to_string(tc);
        EXPECT_LE(test::relative_error(h1, ref), 2.0 * e_sgemm) << "shgemm " << what;
        EXPECT_LE(test::relative_error(h2, ref), 2.0 * e_sgemm) << "tcec " << what;
        for (int run = 0; run < 3; ++run) {
          auto again = test::to_backend(*dev, c0);
          dev->product(Op::N, Op::N, 1.0f, da, db16, 0.5f, again, ProductPrecision::split_in(tc));
          EXPECT_EQ(std::memcmp(test::to_host(*dev, again).data.data(), h1.data.data(), sizeof(float) * h1.data.size()), 0)
              << "shgemm run " << run << " " << what;
        }
      }
    }
  }
}

// The reason for the fresh accumulators (Ootomo & Yokota): the Tensor Core truncates its sum to
// FP32 (round toward zero) where the CUDA cores round to nearest. 1 + 1.75 ulp(1) is 1 + 1 ulp
// truncated and 1 + 2 ulp rounded; both inputs are exact in FP16 and TF32, so the lo parts are zero
// and the product's value is the Tensor Core's own sum.
TEST(Gpu, TensorCoreTruncatesItsSumWhereSgemmRoundsToNearest) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const float ulp = std::ldexp(1.0f, -23), small = 1.75f * ulp;
  test::HostMatrix<float> a(1, 2), b(2, 1);
  a.data = {1.0f, small};
  b.data = {1.0f, 1.0f};
  auto da = test::to_backend(*dev, a), db = test::to_backend(*dev, b);
  Matrix<float> c(*dev, 1, 1);
  dev->product(Op::N, Op::N, 1.0f, da, db, 0.0f, c, ProductPrecision::fp32());
  EXPECT_EQ(test::to_host(*dev, c).data[0], 1.0f + 2 * ulp) << "cuBLAS SGEMM rounds to nearest";
  for (const char* kernel : tensor_core_kernels(*dev)) {
    ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
    for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32}) {
      dev->product(Op::N, Op::N, 1.0f, da, to_device_fp16(*dev, b), 0.0f, c, ProductPrecision::split_in(tc));
      EXPECT_EQ(test::to_host(*dev, c).data[0], 1.0f + ulp) << kernel << " " << to_string(tc) << ": not truncated";
    }
  }
}

/// The IEEE class of x as the non-finite tests compare it: 0 finite, +-1 +-Inf, 2 NaN.
int kind(float x) { return std::isnan(x) ? 2 : std::isinf(x) ? (x > 0 ? 1 : -1) : 0; }

// Inf and NaN in the FP32 operand give the C that SGEMM gives, element by element: +-Inf where
// an infinity meets a nonzero, NaN for Inf * 0, NaN, or opposite infinities (the FP16 split
// saturates hi so that lo carries the infinity, instead of lo = Inf - Inf = NaN).
TEST(Gpu, InfAndNanPropagateAsInSgemm) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 200, n = 140, k = 300;
  auto a = test::random_matrix(m, k, Elements::Normal, 51);
  auto b = fp16_exact(test::random_matrix(k, n, Elements::Normal, 52));
  a(3, 5) = INFINITY, a(7, 9) = -INFINITY, a(11, 2) = NAN, a(13, 5) = INFINITY, a(13, 200) = -INFINITY;
  b(5, 0) = 0.0f;  // Inf * 0 in column 0 of rows 3 and 13
  auto da = test::to_backend(*dev, a), db = test::to_backend(*dev, b);
  const auto b16 = to_device_fp16(*dev, b);
  Matrix<float> ref(*dev, m, n), c(*dev, m, n);
  dev->product(Op::N, Op::N, 1.0f, da, db, 0.0f, ref, ProductPrecision::fp32());
  const auto r = test::to_host(*dev, ref);
  int non_finite = 0;
  for (float x : r.data) non_finite += kind(x) != 0;
  ASSERT_EQ(non_finite, 4 * n) << "rows 3, 7, 11 and 13 of SGEMM's C are non-finite";
  for (const char* kernel : tensor_core_kernels(*dev)) {
    ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
    for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32, TensorCore::Auto})
      for (const char* variant : {"shgemm", "tcec"}) {
        if (std::string(variant) == "shgemm")
          dev->product(Op::N, Op::N, 1.0f, da, b16, 0.0f, c, ProductPrecision::split_in(tc));
        else
          dev->product(Op::N, Op::N, 1.0f, da, db, 0.0f, c, ProductPrecision::split_in(tc));
        const auto h = test::to_host(*dev, c);
        int mismatches = 0;
        for (std::size_t i = 0; i < h.data.size(); ++i) mismatches += kind(h.data[i]) != kind(r.data[i]);
        EXPECT_EQ(mismatches, 0) << kernel << " " << variant << " " << to_string(tc);
      }
  }
}

// The non-finite epilogue keeps beta C: C := alpha op(A) op(B) + beta C with Inf and NaN in A
// gives SGEMM's kinds where they reach and SGEMM's values elsewhere, with beta = 0.5 and an
// old C that is finite except one NaN (which must stay NaN) and one Inf in a reached row.
TEST(Gpu, NonFiniteProductsKeepBetaC) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 260, n = 140, k = 300;
  auto a = test::random_matrix(m, k, Elements::Normal, 61);
  const auto b = fp16_exact(test::random_matrix(k, n, Elements::Normal, 62));
  auto c0 = test::random_matrix(m, n, Elements::Normal, 63);
  a(3, 5) = INFINITY, a(7, 9) = NAN, a(200, 17) = -INFINITY;
  c0(10, 4) = NAN, c0(3, 6) = -INFINITY;  // row 3: +-Inf + -Inf
  const auto da = test::to_backend(*dev, a), db = test::to_backend(*dev, b);
  const auto b16 = to_device_fp16(*dev, b);
  auto ref = test::to_backend(*dev, c0);
  dev->product(Op::N, Op::N, 2.0f, da, db, 0.5f, ref, ProductPrecision::fp32());
  const auto r = test::to_host(*dev, ref);
  for (const char* kernel : tensor_core_kernels(*dev)) {
    ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
    for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32})
      for (bool shgemm : {true, false}) {
        auto c = test::to_backend(*dev, c0);
        if (shgemm)
          dev->product(Op::N, Op::N, 2.0f, da, b16, 0.5f, c, ProductPrecision::split_in(tc));
        else
          dev->product(Op::N, Op::N, 2.0f, da, db, 0.5f, c, ProductPrecision::split_in(tc));
        const auto h = test::to_host(*dev, c);
        int wrong = 0;
        for (std::size_t e = 0; e < h.data.size(); ++e)
          wrong += kind(h.data[e]) != kind(r.data[e]) ||
                   (kind(r.data[e]) == 0 && !(std::fabs(h.data[e] - r.data[e]) <= 1e-4f * (1.0f + std::fabs(r.data[e]))));
        EXPECT_EQ(wrong, 0) << kernel << (shgemm ? " shgemm " : " tcec ") << to_string(tc);
      }
  }
}

// Many infinities, in both operands and either op: 0.4% of A's entries +-Inf, a row of op(A) with
// more infinities (200) than the epilogue lists per line, columns of op(B) holding an Inf, a
// NaN, or zeros that meet A's infinities. Every element's kind must be SGEMM's. At k = 300 the
// epilogue joins a row's terms through op(B)'s sign bits; at m = 24, k = 2000 those would exceed
// C's left-element bytes and it reads op(B) itself.
void expect_many_infinities_join_as_in_sgemm(index_t m, index_t n, index_t k) {
  auto dev = make_backend(BackendKind::Cuda);
  auto a = test::random_matrix(m, k, Elements::Normal, 71);
  auto b = fp16_exact(test::random_matrix(k, n, Elements::Normal, 72));
  const auto coin = test::random_matrix(m, k, Elements::Uniform01, 73);
  for (index_t i = 0; i < m; ++i)
    for (index_t q = 0; q < k; ++q)
      if (coin(i, q) < 0.004f) a(i, q) = coin(i, q) < 0.002f ? INFINITY : -INFINITY;
  for (index_t q = 0; q < 200; ++q) a(17, q) = INFINITY;
  for (index_t q = 0; q < k; q += 3) b(q, 9) = 0.0f;
  for (index_t q = 0; q < k; ++q) b(q, 50) = std::fabs(b(q, 50));  // row 17 meets only +Inf terms here
  b(40, 20) = -INFINITY, b(41, 30) = NAN;
  auto transposed = [](const test::HostMatrix<float>& x) {
    test::HostMatrix<float> t(x.cols, x.rows);
    for (index_t i = 0; i < x.rows; ++i)
      for (index_t j = 0; j < x.cols; ++j) t(j, i) = x(i, j);
    return t;
  };
  for (Op op : {Op::N, Op::T}) {
    const auto da = test::to_backend(*dev, op == Op::N ? a : transposed(a));
    const auto hb = op == Op::N ? b : transposed(b);
    const auto db = test::to_backend(*dev, hb);
    const auto b16 = to_device_fp16(*dev, hb);
    Matrix<float> ref(*dev, m, n), c(*dev, m, n);
    dev->product(op, op, 1.0f, da, db, 0.0f, ref, ProductPrecision::fp32());
    const auto r = test::to_host(*dev, ref);
    for (const char* kernel : tensor_core_kernels(*dev)) {
      ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
      for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32})
        for (bool shgemm : {true, false}) {
          if (shgemm)
            dev->product(op, op, 1.0f, da, b16, 0.0f, c, ProductPrecision::split_in(tc));
          else
            dev->product(op, op, 1.0f, da, db, 0.0f, c, ProductPrecision::split_in(tc));
          const auto h = test::to_host(*dev, c);
          int wrong = 0, finite = 0;
          for (std::size_t e = 0; e < h.data.size(); ++e) wrong += kind(h.data[e]) != kind(r.data[e]);
          for (float x : r.data) finite += kind(x) == 0;
          EXPECT_EQ(wrong, 0) << m << " x " << n << " x " << k << " " << kernel << (shgemm ? " shgemm " : " tcec ")
                              << to_string(tc) << (op == Op::N ? " N" : " T") << " (" << finite
                              << " finite elements in SGEMM's C)";
        }
    }
  }
}

TEST(Gpu, ManyInfinitiesInEitherOperandJoinAsInSgemm) {
  RANDNLA_REQUIRE_GPU();
  expect_many_infinities_join_as_in_sgemm(180, 140, 300);
  expect_many_infinities_join_as_in_sgemm(24, 140, 2000);
}

// After a product whose epilogue listed many infinities, products of other shapes on the same
// backend (the same workspace, its parts now elsewhere) are exact where finite and SGEMM's
// kinds where not: the epilogue leaves its state zero.
TEST(Gpu, NonFiniteEpilogueLeavesItsStateZero) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  struct Shape { index_t m, n, k; bool infinities; };
  // 250 x 248 x 64 puts its row counts where 300 x 200 x 400 left its first lists.
  for (const Shape& sh : {Shape{300, 200, 400, true}, Shape{250, 248, 64, true}, Shape{64, 96, 700, false},
                          Shape{120, 40, 260, true}}) {
    auto a = test::random_matrix(sh.m, sh.k, Elements::Normal, 81);
    const auto coin = test::random_matrix(sh.m, sh.k, Elements::Uniform01, 82);
    for (index_t i = 0; sh.infinities && i < sh.m; ++i)
      for (index_t q = 0; q < sh.k; ++q)
        if (coin(i, q) < 0.02f) a(i, q) = coin(i, q) < 0.01f ? INFINITY : -INFINITY;
    const auto b = fp16_exact(test::random_matrix(sh.k, sh.n, Elements::Normal, 83));
    const auto da = test::to_backend(*dev, a), db = test::to_backend(*dev, b);
    Matrix<float> ref(*dev, sh.m, sh.n), c(*dev, sh.m, sh.n);
    dev->product(Op::N, Op::N, 1.0f, da, db, 0.0f, ref, ProductPrecision::fp32());
    dev->product(Op::N, Op::N, 1.0f, da, to_device_fp16(*dev, b), 0.0f, c, ProductPrecision::split_in(TensorCore::FP16));
    const auto r = test::to_host(*dev, ref), h = test::to_host(*dev, c);
    int wrong = 0;
    for (std::size_t e = 0; e < h.data.size(); ++e)
      wrong += kind(h.data[e]) != kind(r.data[e]) ||
               (kind(r.data[e]) == 0 && !(std::fabs(h.data[e] - r.data[e]) <= 1e-4f * (1.0f + std::fabs(r.data[e]))));
    EXPECT_EQ(wrong, 0) << sh.m << " x " << sh.n << " x " << sh.k;
  }
}

// Sums near FLT_MAX: the wgmma kernel adds two K slices' Tensor Core sums u = s_0 and
// v = u - s_1 as u (w_0 + w_1) - v w_1, which overflows where u exceeds FLT_MAX / 2 though
// s_0 + s_1 does not (here 2e38 - 1e38 in TF32, whose products are not scaled); every element
// must still be the finite value SGEMM gives.
TEST(Gpu, SumsNearFltMaxStayFiniteAsInSgemm) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 130, n = 136, k = 64, second = 40;  // column 40: in the second TF32 slice of 32
  test::HostMatrix<float> a(m, k), b(k, n), a_sh(m, k), b_sh(k, n);
  for (index_t i = 0; i < m; ++i) a(i, 0) = 2e19f, a(i, second) = -1e19f, a_sh(i, 0) = 2e34f, a_sh(i, second) = -1e34f;
  for (index_t j = 0; j < n; ++j) b(0, j) = b(second, j) = 1e19f, b_sh(0, j) = b_sh(second, j) = 1e4f;
  const auto da = test::to_backend(*dev, a), db = test::to_backend(*dev, b), da_sh = test::to_backend(*dev, a_sh);
  const auto b16 = to_device_fp16(*dev, b_sh);
  Matrix<float> c(*dev, m, n);
  for (const char* kernel : tensor_core_kernels(*dev)) {
    ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
    for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32, TensorCore::Auto})
      for (const char* variant : {"shgemm", "tcec"}) {
        const bool shgemm = std::string(variant) == "shgemm";
        if (shgemm)
          dev->product(Op::N, Op::N, 1.0f, da_sh, b16, 0.0f, c, ProductPrecision::split_in(tc));
        else
          dev->product(Op::N, Op::N, 1.0f, da, db, 0.0f, c, ProductPrecision::split_in(tc));
        const auto h = test::to_host(*dev, c);
        int wrong = 0;
        for (float x : h.data) wrong += !(std::fabs(x / 1e38f - 1.0f) <= 1e-6f);
        EXPECT_EQ(wrong, 0) << kernel << " " << variant << " " << to_string(tc) << ": C(0, 0) = " << h.data[0]
                            << ", SGEMM's is 1e38";
      }
  }
}

// The Tensor Core kernel's K over A's slices (a 3-D tensor map of the streamed operand): both
// layouts of op(A), SHGEMM and TCEC, against the FP64 sum; K per slice of 100 falls back to partial
// sums; an Inf and a NaN in a slice give C what SGEMM gives (the non-finite epilogue reads slices).
TEST(Gpu, SummedProductRunsKOverTheSlices) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 200, n = 40, count = 37;
  for (index_t slice_k : {128, 100})
    for (Op ta : {Op::T, Op::N})
      for (bool special : {false, true}) {
        const index_t rows = ta == Op::T ? slice_k : m, cols = ta == Op::T ? m : slice_k;
        auto a = test::random_matrix(rows, cols * count, test::Elements::Normal, 81);
        const auto bm = test::random_matrix(slice_k * count, n, test::Elements::Normal, 82);
        const auto at = [&](index_t i, index_t r, index_t q) -> float& {  // op(A_i)(r, q)
          return ta == Op::T ? a(q, i * m + r) : a(r, i * slice_k + q);
        };
        if (special) at(3, 7, 5) = INFINITY, at(20, 11, 9) = NAN;
        test::HostMatrix<fp16> bh(slice_k * count, n);
        for (std::size_t e = 0; e < bm.data.size(); ++e) bh.data[e] = to_fp16(bm.data[e]);
        const Matrix<float> da = test::to_backend(*dev, a), dbf = test::to_backend(*dev, bm);
        Matrix<fp16> dbh(*dev, slice_k * count, n);
        dev->copy(bh.cview(), dbh.view());
        const StridedBatch<const float> slices{MatrixView<const float>(da.view()).block(0, 0, rows, cols), rows * cols, count};
        for (TensorCore f : {TensorCore::FP16, TensorCore::TF32})
          for (bool half : {true, false}) {
            Matrix<float> c(*dev, m, n);
            const ProductPrecision p = ProductPrecision::split_in(f);
            if (half)
              dev->product_summed(ta, Op::N, 1.0f, slices,
                                  StridedBatch<const fp16>{MatrixView<const fp16>(dbh.view()).block(0, 0, slice_k, n), slice_k, count},
                                  0.0f, c.view(), p);
            else
              dev->product_summed(ta, Op::N, 1.0f, slices,
                                  StridedBatch<const float>{MatrixView<const float>(dbf.view()).block(0, 0, slice_k, n), slice_k, count},
                                  0.0f, c.view(), p);
            const auto hc = test::to_host(*dev, c);
            double num = 0, den = 0;
            for (index_t j = 0; j < n; ++j)
              for (index_t r = 0; r < m; ++r) {
                double s = 0;
                for (index_t i = 0; i < count; ++i)
                  for (index_t q = 0; q < slice_k; ++q)
                    s += double(at(i, r, q)) * (half ? double(to_float(bh(q + i * slice_k, j))) : double(bm(q + i * slice_k, j)));
                const std::string where = std::string(ta == Op::T ? "T" : "N") + " K/slice " + std::to_string(slice_k) + " " +
                                          to_string(f) + (half ? " fp16 B" : " fp32 B");
                if (!std::isfinite(s)) {
                  ASSERT_TRUE(std::isnan(s) ? std::isnan(hc(r, j)) : hc(r, j) == s) << where << " at " << r << ", " << j;
                  continue;
                }
                num += (hc(r, j) - s) * (hc(r, j) - s), den += s * s;
              }
            EXPECT_LT(std::sqrt(num / den), 1e-5) << (ta == Op::T ? "T " : "N ") << slice_k << " " << to_string(f);
          }
      }
}

// Strided batches (cuBLAS's strided-batched GEMM for FP32, TF32 and FP64; one split product per
// matrix otherwise) give what one product per matrix gives, to the order of summation, and Auto
// runs the split product on the GPU.
TEST(Gpu, StridedBatchedProductsEqualOneProductPerMatrix) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 70, n = 33, k = 129, count = 5;
  const auto a = test::random_matrix(k, m * count, Elements::Normal, 71), bm = test::random_matrix(k, n, Elements::Normal, 72);
  const Matrix<float> da = test::to_backend(*dev, a), db = test::to_backend(*dev, bm);
  Matrix<float> c(*dev, m, n * count), one(*dev, m, n);
  for (ProductPrecision p : {ProductPrecision::fp32(), ProductPrecision::tf32(), ProductPrecision::split_in(TensorCore::FP16)}) {
    dev->product_strided_batched(Op::T, Op::N, 1.0f, StridedBatch<const float>{da.view().block(0, 0, k, m), k * m, count},
                                 StridedBatch<const float>{db.view(), 0, count}, 0.0f,
                                 StridedBatch<float>{c.view().block(0, 0, m, n), m * n, count}, p);
    const auto hc = test::to_host(*dev, c);
    // TF32: cuBLAS may run one of the two without Tensor Cores; the gap is then TF32's own error.
    const float tolerance = p.mode == ProductMode::TF32 ? 2e-2f : 1e-5f;
    for (index_t i = 0; i < count; ++i) {
      dev->product(Op::T, Op::N, 1.0f, MatrixView<const float>(da.view()).block(0, i * m, k, m), db, 0.0f, one.view(), p);
      const auto h1 = test::to_host(*dev, one);
      for (index_t j = 0; j < n; ++j)
        for (index_t r = 0; r < m; ++r)  // batched and single calls may sum in different orders, and
          ASSERT_LE(std::abs(hc(r, i * n + j) - h1(r, j)), tolerance * (1.0f + std::abs(h1(r, j))))  // TF32 may
              << to_string(p.mode) << " matrix " << i;                                             // skip TF32
    }
  }
  Matrix<double> ad(*dev, k, m * count), bd(*dev, k, n), cd(*dev, m, n * count), oned(*dev, m, n);
  dev->convert(da, ad.view());
  dev->convert(db, bd.view());
  dev->product_strided_batched(Op::T, Op::N, 1.0, StridedBatch<const double>{ad.view().block(0, 0, k, m), k * m, count},
                               StridedBatch<const double>{bd.view(), 0, count}, 0.0,
                               StridedBatch<double>{cd.view().block(0, 0, m, n), m * n, count});
  Matrix<float> cf(*dev, m, n * count);
  dev->convert(cd, cf.view());
  const auto ref = test::reference_gemm(Op::T, Op::N, a, bm);  // the first matrix: a(:, 0:m)^T B
  const auto hcf = test::to_host(*dev, cf);
  double worst = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t r = 0; r < m; ++r) worst = std::max(worst, std::abs(hcf(r, j) - ref(r, j)) / (1.0 + std::abs(ref(r, j))));
  EXPECT_LT(worst, 1e-6);
  ProductReport report;
  dev->product(Op::T, Op::N, 1.0f, MatrixView<const float>(da.view()).block(0, 0, k, m), db, 0.0f, one.view(),
               ProductPrecision::automatic(), &report);
  EXPECT_EQ(report.mode, ProductMode::Split);
}

/// ||tril(G - R)||_F / ||tril(R)||_F: the lower triangles, the diagonal included.
double lower_relative_error(const test::HostMatrix<float>& g, const test::HostMatrix<double>& r) {
  double err = 0, ref = 0;
  for (index_t j = 0; j < r.cols; ++j)
    for (index_t i = j; i < r.rows; ++i) {
      const double d = g(i, j) - r(i, j);
      err += d * d, ref += r(i, j) * r(i, j);
    }
  return std::sqrt(err / ref);
}

// The split Gram matrix's lower triangle, its tiles alone computed, against FP64, as accurate as
// SGEMM's: one tile, 128- and 136-wide tiles (272 = 2 x 136 columns over 3 row tiles), 4 x 4
// tiles, and a Y of a wide exponent range.
TEST(Gpu, SplitGramLowerTriangleIsAsAccurateAsSgemm) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  struct Shape {
    index_t m, n;
    Elements e;
  } shapes[] = {{3000, 70, Elements::Normal},
                {4000, 200, Elements::Normal},
                {2500, 272, Elements::Normal},
                {20000, 512, Elements::Normal},
                {3000, 300, Elements::ExpRand_m15_15}};
  for (const Shape& sh : shapes) {
    const auto y = test::random_matrix(sh.m, sh.n, sh.e, 71);
    const auto ref = test::reference_gemm(Op::T, Op::N, y, y);
    auto dy = test::to_backend(*dev, y);
    Matrix<float> g(*dev, sh.n, sh.n), s(*dev, sh.n, sh.n);
    ops.split_gram(dy, g);
    dev->product(Op::T, Op::N, 1.0f, dy, dy, 0.0f, s, ProductPrecision::fp32());
    const double e_split = lower_relative_error(test::to_host(*dev, g.view()), ref);
    const double e_sgemm = lower_relative_error(test::to_host(*dev, s.view()), ref);
    EXPECT_LE(e_split, 2.0 * e_sgemm) << sh.m << " x " << sh.n << " " << test::to_string(sh.e);
  }
}

// The split product with an upper triangular R, each column tile's K cut at its last column,
// against FP64, as accurate as SGEMM's: one tile, 128- and 136-wide tiles, 4 tiles.
TEST(Gpu, SplitUpperTriangularProductIsAsAccurateAsSgemm) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  for (const auto& [m, n] : {std::pair<index_t, index_t>{3001, 70}, {4000, 200}, {2500, 272}, {20000, 512}}) {
    const auto y = test::random_matrix(m, n, Elements::Normal, 72);
    auto r = test::random_matrix(n, n, Elements::Normal, 73);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = j + 1; i < n; ++i) r(i, j) = 0.0f;
    const auto ref = test::reference_gemm(Op::N, Op::N, y, r);
    auto dy = test::to_backend(*dev, y), dr = test::to_backend(*dev, r);
    Matrix<float> q(*dev, m, n), s(*dev, m, n);
    ops.split_multiply_upper_triangular(dy, dr, q);
    dev->product(Op::N, Op::N, 1.0f, dy, dr, 0.0f, s, ProductPrecision::fp32());
    const double e_split = test::relative_error(test::to_host(*dev, q.view()), ref);
    const double e_sgemm = test::relative_error(test::to_host(*dev, s.view()), ref);
    EXPECT_LE(e_split, 2.0 * e_sgemm) << m << " x " << n;
  }
}

}  // namespace
}  // namespace randnla
