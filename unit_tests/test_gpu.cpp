// GPU tests (label gpu): skipped without a GPU; on the H100 they hold the CUDA backend to the
// portable backend on the host (bit for bit where the arithmetic is defined bit for bit) and to FP64 references.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "randnla/backends.hpp"
#include "lra/randomized_lra.hpp"
#include "orthonormalize/cholesky_qr_ops.hpp"
#include "rsvd/rsvd.hpp"
#include "rsvd/svd_through_gram.hpp"
#include "sparse_projection/sparse_sign_projection.hpp"
#include "tsqr/tsqr.hpp"
#include "tucker/tucker.hpp"
#include "distributed/distributed.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

#define RANDNLA_REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no GPU visible (or built without CUDA)"

using test::Elements;

TEST(Gpu, OmegaOnDeviceEqualsOmegaOnHostBitForBit) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (auto dist : {Distribution::Gaussian, Distribution::Rademacher, Distribution::SparseSign}) {
    const RandomSpec spec{dist, 20261121, 3, 0.05};
    for (index_t rows : {1, 37, 4096}) {
      const index_t cols = rows == 4096 ? 300 : 53;
      Matrix<float> d(*dev, rows, cols), h(*host, rows, cols), back(*host, rows, cols);
      dev->fill_random(spec, d.view());
      host->fill_random(spec, h.view());
      dev->copy(d.view(), back.view());
      ASSERT_EQ(std::memcmp(h.data(), back.data(), sizeof(float) * rows * cols), 0) << rows;
      Matrix<fp16> dh(*dev, rows, cols), hh(*host, rows, cols), backh(*host, rows, cols);
      dev->fill_random(spec, dh.view());
      host->fill_random(spec, hh.view());
      dev->copy(dh.view(), backh.view());
      ASSERT_EQ(std::memcmp(hh.data(), backh.data(), sizeof(fp16) * rows * cols), 0) << rows;
      if (rows < 4) continue;
      // A block of a larger operator in a view one row in: rows not a multiple of four from the
      // operator's start, no element 8- or 16-byte aligned where the whole matrix's are.
      const RandomBlock block{3, 2, rows + 5};
      dev->fill_random(spec, d.view().block(1, 0, rows - 1, cols), block);
      host->fill_random(spec, h.view().block(1, 0, rows - 1, cols), block);
      dev->copy(d.view(), back.view());
      ASSERT_EQ(std::memcmp(h.data(), back.data(), sizeof(float) * rows * cols), 0) << rows << ", a block";
      dev->fill_random(spec, dh.view().block(1, 0, rows - 1, cols), block);
      host->fill_random(spec, hh.view().block(1, 0, rows - 1, cols), block);
      dev->copy(dh.view(), backh.view());
      ASSERT_EQ(std::memcmp(hh.data(), backh.data(), sizeof(fp16) * rows * cols), 0) << rows << ", a block";
    }
  }
}

// The phases' times come from marks in the CUDA stream, not from waiting at every phase: after the
// call the report has every phase once, in the order they first ran, each time finite and not
// negative, adding up to at most the call's wall time; a progress callback gets every lap as it ends.
TEST(Gpu, PhaseReportFromQueueMarksHasEveryPhaseWithinTheCallsTime) {
  RANDNLA_REQUIRE_GPU();
  auto b = make_backend(BackendKind::Cuda);
  std::vector<double> sigma(500);
  for (std::size_t i = 0; i < sigma.size(); ++i) sigma[i] = 1.0 / (1.0 + static_cast<double>(i));
  const Matrix<float> a = test::to_backend(*b, test::matrix_with_spectrum(2000, 500, sigma, 7));
  RsvdOptions o;
  o.power_iterations = 1;
  const auto start = std::chrono::steady_clock::now();
  const RsvdResult r = rsvd(*b, a, 32, o);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::string> names;
  double total = 0.0;
  for (const auto& [phase, ms] : r.report.phases.phases()) {
    names.push_back(phase);
    EXPECT_TRUE(std::isfinite(ms) && ms >= 0.0) << phase << " " << ms;
    total += ms;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"projection", "input check", "orthonormalisation", "Q^T A", "small SVD",
                                             "U = Q Uhat", "error estimate"}));
  EXPECT_GT(total, 0.0);
  EXPECT_LE(total, wall);
  std::vector<std::string> laps;
  o.progress = [&](const std::string& phase, double ms) {
    EXPECT_TRUE(std::isfinite(ms) && ms >= 0.0) << phase;
    laps.push_back(phase);
  };
  rsvd(*b, a, 32, o);
  EXPECT_EQ(laps, (std::vector<std::string>{"projection", "input check", "orthonormalisation", "projection",
                                            "orthonormalisation", "projection", "orthonormalisation", "Q^T A",
                                            "small SVD", "U = Q Uhat", "error estimate"}));
}

// Two backends, each on its own stream, used from two host threads at once (the first launches of
// every kernel included), give the results of one backend alone, bit for bit.
TEST(Gpu, TwoBackendsOnTwoStreamsFromTwoThreadsGiveTheResultsOfOne) {
  RANDNLA_REQUIRE_GPU();
  const index_t m = 3000, n = 2000, k = 64;
  std::vector<double> sigma(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(i + 1.0, -1.5);
  const test::HostMatrix<float> a = test::matrix_with_spectrum(m, n, sigma, 5);
  const auto run = [&](test::HostMatrix<float>& u, test::HostMatrix<float>& s) {
    auto b = make_backend(BackendKind::Cuda);
    const Matrix<float> da = test::to_backend(*b, a);
    RsvdOptions o;
    o.sketch = SketchPrecision::ShgemmFP16;
    const RsvdResult r = rsvd(*b, da, k, o);
    u = test::to_host(*b, r.U);
    s = test::to_host(*b, r.S);
  };
  test::HostMatrix<float> u1, s1, u2, s2, u_alone, s_alone;
  std::thread first([&] { run(u1, s1); }), second([&] { run(u2, s2); });
  first.join();
  second.join();
  run(u_alone, s_alone);
  EXPECT_EQ(s1.data, s_alone.data);
  EXPECT_EQ(s2.data, s_alone.data);
  EXPECT_EQ(u1.data, u_alone.data);
  EXPECT_EQ(u2.data, u_alone.data);
}

// Device memory freed by the library serves its next request of the same size (repeated calls
// reuse their blocks instead of the pool mapping new memory), and what is kept goes back when a
// request of another size would not fit.
TEST(Gpu, FreedDeviceBlocksServeRequestsOfTheirSizeAndGoBackWhenMemoryRunsShort) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  constexpr std::size_t mib = std::size_t(1) << 20;
  const void* freed = dev->allocate(3 * mib).get();
  EXPECT_EQ(dev->allocate(3 * mib).get(), freed);
  std::vector<std::shared_ptr<void>> blocks;
  constexpr std::size_t big = 4096 * mib;
  try {
    for (;;) blocks.push_back(dev->allocate(big));
  } catch (const DeviceError&) {
  }
  ASSERT_GE(blocks.size(), 3u) << "a GPU with at least 12 GiB";
  blocks.clear();  // all kept: together they were in use at once
  std::shared_ptr<void> other;
  EXPECT_NO_THROW(other = dev->allocate(2 * big + mib));
  EXPECT_NE(other, nullptr);
  Matrix<float> x(*dev, 1024, 1);
  dev->fill_random(RandomSpec{}, x.view());  // the memory still works
  EXPECT_TRUE(std::isfinite(dev->frobenius_norm(x.view())));
}

TEST(Gpu, HostFp16ConversionEqualsFloat2HalfRnForAll2To32Patterns) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t chunk = index_t(1) << 28;
  Matrix<float> src(*host, chunk, 1), d_src(*dev, chunk, 1);
  Matrix<fp16> d_out(*dev, chunk, 1), out(*host, chunk, 1);
  for (std::uint64_t base = 0; base < (1ull << 32); base += static_cast<std::uint64_t>(chunk)) {
    for (index_t i = 0; i < chunk; ++i) src.data()[i] = exact::float_of(static_cast<std::uint32_t>(base + i));
    dev->copy(src.view(), d_src.view());
    dev->convert(d_src.view(), d_out.view());  // __float2half_rn
    dev->copy(d_out.view(), out.view());
    index_t mismatches = 0;
    for (index_t i = 0; i < chunk; ++i) mismatches += out.data()[i].bits != float_to_half_bits(src.data()[i]);
    ASSERT_EQ(mismatches, 0) << "chunk at 0x" << std::hex << base;
  }
}

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

/// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

/// The Tensor Core kernels this GPU runs: the mma.sync kernel everywhere, the wgmma one on compute 9.0.
std::vector<const char*> tensor_core_kernels(Backend& dev) {
  std::vector<const char*> k{"mma"};
  if (dev.description().find("sm_90") != std::string::npos) k.push_back("wgmma");
  return k;
}

/// x rounded to FP16 values (kept in FP32), so that an FP16 operand and its FP32 twin agree.
test::HostMatrix<float> fp16_exact(test::HostMatrix<float> x) {
  for (float& v : x.data) v = to_float(fp16{float_to_half_bits(v)});
  return x;
}

Matrix<fp16> to_device_fp16(Backend& dev, const test::HostMatrix<float>& x) {
  auto f = test::to_backend(dev, x);
  Matrix<fp16> h(dev, x.rows, x.cols);
  dev.convert(f.view(), h.view());
  return h;
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

TEST(Gpu, RsvdOnDeviceMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  std::vector<double> sigma(256);
  for (int i = 0; i < 256; ++i) sigma[i] = std::pow(1e-6, i / 255.0);
  const auto a = test::matrix_with_spectrum(4096, 4096, sigma, 2);
  auto da = test::to_backend(*dev, a);
  for (auto s : {SketchPrecision::FP32, SketchPrecision::ShgemmFP16, SketchPrecision::ShgemmTF32, SketchPrecision::Auto}) {
    RsvdOptions o;
    o.sketch = s;
    o.power_iterations = 1;
    auto rd = rsvd(*dev, da, 64, o);
    auto rh = rsvd(*host, a.cview(), 64, o);
    const auto sd = test::to_host(*dev, rd.S);
    for (index_t i = 0; i < 64; ++i) EXPECT_NEAR(sd.data[i], rh.S.data()[i], 1e-4 * rh.S.data()[0]) << i;
    const auto ud = test::to_host(*dev, rd.U), vd = test::to_host(*dev, rd.V);
    const double ed = test::lowrank_relative_error(a.cview(), ud.cview(), sd.cview(), vd.cview());
    const double eh = test::lowrank_relative_error(a.cview(), rh.U.view(), rh.S.view(), rh.V.view());
    EXPECT_LE(ed, 1.1 * eh + 1e-7) << to_string(s);
    EXPECT_LE(ed, 1.5 * test::eckart_young(sigma, 64) / test::eckart_young(sigma, 0)) << to_string(s);
    std::printf("rsvd %s on %s: error %.3e (host %.3e), kernel %s\n", to_string(s), rd.report.backend.c_str(), ed, eh,
                rd.report.sketch_kernel.c_str());
  }
}

// The RSVD's small SVD on the device (cuSOLVER Xsyevd + CholeskyQR) against the same on the host.
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
  for (LraProducts p : {LraProducts::FP32, LraProducts::TF32, LraProducts::FP16, LraProducts::FP16Once,
                        LraProducts::FP16All, LraProducts::Split, LraProducts::Auto})
    for (int steps : {0, 1}) {
      LraOptions o;
      o.products = p, o.refinements = steps, o.recompress = false;
      const double ed = error(*dev, randomized_lra(*dev, da, k, o));
      const double eh = error(*host, randomized_lra(*host, a.cview(), k, o));
      if (p == LraProducts::FP32 && steps == 0) fp32 = ed;
      std::printf("lra %s refined %d: device %.3e, host %.3e\n", to_string(p), steps, ed, eh);
      EXPECT_LE(ed, 2 * eh + 1e-7) << to_string(p) << " " << steps;
      if (steps == 1 && p != LraProducts::FP16All) EXPECT_LE(ed, 2 * fp32 + 1e-7) << to_string(p);
    }
  LraOptions o;
  o.products = LraProducts::FP16Once, o.refinements = 1;
  const double recompressed = error(*dev, randomized_lra(*dev, da, k, o));
  std::printf("lra fp16-once refined, recompressed to rank k: device %.3e\n", recompressed);
  EXPECT_LE(recompressed, 2 * fp32 + 1e-7);
  o.refinement = LraRefinement::Subspace;
  for (LraProducts p : {LraProducts::TF32, LraProducts::FP16Once, LraProducts::FP16All, LraProducts::Split,
                        LraProducts::Auto})
    for (int steps : {1, 2}) {
      o.products = p, o.refinements = steps;
      const LraResult r = randomized_lra(*dev, da, k, o);
      const double ed = error(*dev, r), eh = error(*host, randomized_lra(*host, a.cview(), k, o));
      std::printf("lra %s, %d subspace steps: device %.3e, host %.3e\n", to_string(p), steps, ed, eh);
      EXPECT_EQ(r.X.cols(), k) << to_string(p);
      EXPECT_EQ(r.report.products, p == LraProducts::Auto ? "tf32" : to_string(p));
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

// The sketch-preconditioned CholeskyQR on the device (SHGEMM sketch, cuSOLVER QR of it, FP64
// trsm and CholeskyQR): no fallback and FP32-level orthogonality at cond(Y) = 1e6.
TEST(Gpu, SketchPreconditionedCholeskyQR) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 20000, l = 128;
  std::vector<double> sigma(l);
  for (index_t i = 0; i < l; ++i) sigma[i] = std::pow(1e-6, static_cast<double>(i) / (l - 1));
  const auto y = test::matrix_with_spectrum(m, l, sigma, 71);
  Matrix<float> q = test::to_backend(*dev, y);
  EXPECT_EQ(orthonormalize(*dev, q.view(), Orthonormalizer::RandCholeskyQR), Orthonormalizer::RandCholeskyQR);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, q).cview()), 1e-6);
}

// The fused CholeskyQR2 (CUDA, up to 64 columns, no FP64 copy of Y): Q orthonormal to FP32
// rounding and spanning range(Y) (both in FP64), and equal to the host's FP64 CholeskyQR2 to FP32
// rounding, at widths 1 to 64 and cond(Y) up to 1e6.
TEST(Gpu, FusedCholeskyQr2MatchesTheFp64Path) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda), host = make_backend(BackendKind::Host);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  ASSERT_EQ(ops.fused_max_columns(), 64);
  EXPECT_TRUE(ops.fused_preferred(1048576, 16) && ops.fused_preferred(1048576, 64));
  EXPECT_FALSE(ops.fused_preferred(1024, 65));
  // Y in storage of ld rows: whole 16-byte quads of rows (64), a last quad cut short (4998 in 5000),
  // and columns not 16-byte aligned (70001), which the sweep copies a row at a time. Up to 2048
  // rows (64, 1500) every pass runs in one kernel on a cluster of blocks, beyond in sweeps.
  for (auto [m, ld] : {std::pair<index_t, index_t>{64, 64}, {1500, 1502}, {4998, 5000}, {70001, 70001}})
    for (index_t l : {1, 5, 16, 17, 40, 48, 64})
      for (double cond : {1.0, 1e3, 1e6}) {
        std::vector<double> sigma(static_cast<std::size_t>(l));
        for (index_t i = 0; i < l; ++i) sigma[i] = l == 1 ? 1.0 : std::pow(cond, -static_cast<double>(i) / (l - 1));
        const auto y = test::matrix_with_spectrum(m, l, sigma, static_cast<std::uint64_t>(m + l));
        test::HostMatrix<float> stored(ld, l);
        for (index_t j = 0; j < l; ++j)
          for (index_t i = 0; i < ld; ++i) stored(i, j) = i < m ? y(i, j) : 7.0f;
        Matrix<float> q = test::to_backend(*dev, stored), qh = test::to_backend(*host, y);
        Matrix<double> work(*dev, ops.fused_workspace(m, l), 1);
        EXPECT_EQ(ops.fused_cholesky_qr(q.view().block(0, 0, m, l), 2, work.view()), 2);
        orthonormalize(*host, qh.view(), Orthonormalizer::CholeskyQR2);
        const auto after = test::to_host(*dev, q), href = test::to_host(*host, qh);
        test::HostMatrix<float> hq(m, l);
        double difference = 0.0;
        bool outside_kept = true;
        for (index_t j = 0; j < l; ++j)
          for (index_t i = 0; i < ld; ++i) {
            if (i >= m) {
              outside_kept = outside_kept && after(i, j) == 7.0f;
              continue;
            }
            hq(i, j) = after(i, j);
            difference = std::max(difference, static_cast<double>(std::fabs(hq(i, j) - href(i, j))));
          }
        const std::string at = std::to_string(m) + " x " + std::to_string(l) + ", cond " + std::to_string(cond);
        EXPECT_TRUE(outside_kept) << at << ": rows beyond the view were written";
        EXPECT_LT(test::orthogonality_loss(hq.cview()), 1e-5) << at;
        EXPECT_LT(test::span_residual(y, hq), 1e-5) << at;
        EXPECT_LT(difference, 1e-5) << at;
      }
}

// Auto on the fused path: columns already orthogonal are only scaled (no Cholesky pass), a well
// conditioned Y takes one pass; a zero column breaks down before Y is written, and orthonormalize
// then falls back to a method that still returns an orthonormal basis.
TEST(Gpu, FusedCholeskyQrScalesOrthogonalColumnsAndReportsBreakdowns) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  const index_t m = 3000, l = 24;
  test::HostMatrix<float> y(m, l);
  for (index_t i = 0; i < m; ++i) y(i, i % l) = static_cast<float>(1 + i % 7) * (i % 2 ? -0.5f : 2.0f);  // disjoint supports
  Matrix<float> q = test::to_backend(*dev, y);
  Matrix<double> work(*dev, ops.fused_workspace(m, l), 1);
  EXPECT_EQ(ops.fused_cholesky_qr(q.view(), 0, work.view()), 0);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, q).cview()), 1e-6);
  EXPECT_EQ(orthonormalize(*dev, test::to_backend(*dev, y).view(), Orthonormalizer::Auto), Orthonormalizer::ColumnScaling);

  // Well conditioned: one Cholesky pass, checked by the Gram sums of its result, is enough; an
  // orthonormal Y is not written at all.
  Matrix<float> g = test::to_backend(*dev, test::random_matrix(m, l, test::Elements::Normal, 5));
  EXPECT_EQ(ops.fused_cholesky_qr(g.view(), 0, work.view()), 1);
  const auto once = test::to_host(*dev, g);
  EXPECT_LT(test::orthogonality_loss(once.cview()), 0x1p-24);
  EXPECT_EQ(ops.fused_cholesky_qr(g.view(), 0, work.view()), 0);
  EXPECT_EQ(test::to_host(*dev, g).data, once.data) << "an orthonormal Y is left as it is";

  // Few rows (RP-HOSVD's 1024 x 64 sketches): after one pass, G's distance from I is mostly the
  // rounding of Y to FP32 (about 2^-24 n / sqrt(m), above 2^-24 here), which Auto accepts as
  // orthonormal: one pass, not two.
  Matrix<float> short_y = test::to_backend(*dev, test::random_matrix(1024, 64, test::Elements::Normal, 6));
  Matrix<double> short_work(*dev, ops.fused_workspace(1024, 64), 1);
  EXPECT_EQ(ops.fused_cholesky_qr(short_y.view(), 0, short_work.view()), 1);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, short_y).cview()), 0x1p-24 * (1 + 2 * 8));

  for (index_t i = 0; i < m; ++i) y(i, 7) = 0.0f;
  q = test::to_backend(*dev, y);
  EXPECT_EQ(ops.fused_cholesky_qr(q.view(), 2, work.view()), -1);
  EXPECT_EQ(test::to_host(*dev, q).data, y.data) << "Y is written only after a pass that did not break down";
  const Orthonormalizer used = orthonormalize(*dev, q.view(), Orthonormalizer::Auto);
  EXPECT_NE(used, Orthonormalizer::Auto) << to_string(used);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, q).cview()), 1e-5) << to_string(used);
  EXPECT_THROW(ops.fused_cholesky_qr(q.view(), 1, work.view()), InvalidArgument);

  // Queued: the verdict says what the wait would have (a breakdown: nothing, no fallback, Y as given).
  q = test::to_backend(*dev, y);
  const OrthonormalizationVerdict broke = orthonormalize_queued(*dev, q.view(), Orthonormalizer::CholeskyQR2);
  EXPECT_FALSE(broke().has_value());
  EXPECT_EQ(test::to_host(*dev, q).data, y.data);
  Matrix<float> fresh = test::to_backend(*dev, test::random_matrix(m, l, test::Elements::Normal, 7));
  const OrthonormalizationVerdict held = orthonormalize_queued(*dev, fresh.view(), Orthonormalizer::Auto);
  EXPECT_EQ(held(), std::optional<Orthonormalizer>(Orthonormalizer::CholeskyQR));
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, fresh).cview()), 0x1p-24);
}

// The reduction-tree TSQR on the device (batched on-chip leaves, five levels): A = Q R and Q^T Q = I to
// FP32 rounding, R upper triangular.
TEST(Gpu, TsqrFactorsOnTheDevice) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 60000, n = 64;
  const auto a = test::random_matrix(m, n, test::Elements::Normal, 73);
  TsqrOptions o;
  o.leaf_rows = 256;
  const TsqrResult r = tsqr(*dev, test::to_backend(*dev, a), o);
  const auto q = test::to_host(*dev, r.Q), rr = test::to_host(*dev, r.R);
  EXPECT_EQ(r.report.levels, 5);  // 60000 -> 235 leaves of 256 rows -> 15040 -> 3776 -> 960 -> 256 rows
  EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5);
  test::HostMatrix<float> qr(m, n);
  test::HostMatrix<double> exact(m, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      double s = 0;
      for (index_t p = 0; p <= j; ++p) s += static_cast<double>(q(i, p)) * rr(p, j);
      qr(i, j) = static_cast<float>(s), exact(i, j) = a(i, j);
    }
  EXPECT_LT(test::relative_error(qr, exact), 1e-6);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = j + 1; i < n; ++i) ASSERT_EQ(rr(i, j), 0.0f);
}

/// max over rows i of ||R_a(i, :) - s_i R_b(i, :)|| / ||R_b||_F, s_i = the sign that matches row i's
/// diagonal entries: R up to the signs of its rows.
double r_distance_up_to_row_signs(const test::HostMatrix<float>& ra, const test::HostMatrix<float>& rb) {
  double norm = 0, worst = 0;
  for (float x : rb.data) norm += static_cast<double>(x) * x;
  for (index_t i = 0; i < ra.rows; ++i) {
    const double sign = (ra(i, i) < 0) == (rb(i, i) < 0) ? 1.0 : -1.0;
    double d = 0;
    for (index_t j = 0; j < ra.cols; ++j) d += std::pow(ra(i, j) - sign * rb(i, j), 2);
    worst = std::max(worst, std::sqrt(d / norm));
  }
  return worst;
}

/// A = Q R against FP64 (||A - Q R||_F / ||A||_F < 1e-6), Q orthonormal to FP32 rounding, and R
/// LAPACK's one-block Householder R (on the host) up to the signs of its rows.
void expect_factors_of(Backend& host, const test::HostMatrix<float>& a, const test::HostMatrix<float>& q,
                       const test::HostMatrix<float>& r) {
  const index_t n = r.rows;
  EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5);
  test::HostMatrix<float> rt(n, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) rt(i, j) = r(j, i);
  EXPECT_LT(test::factor_relative_error(a.cview(), q.cview(), rt.cview()), 1e-6);
  TsqrOptions one_block;
  one_block.leaf_rows = a.rows;
  one_block.form_q = false;
  const auto lapack_r = test::to_host(host, tsqr(host, test::to_backend(host, a), one_block).R);
  EXPECT_LT(r_distance_up_to_row_signs(r, lapack_r), 1e-5);
}

/// ||A - Q R||_F / ||A||_F and ||Q^T Q - I||_F, FP64 sums.
std::pair<double, double> qr_errors(const test::HostMatrix<float>& a, const test::HostMatrix<float>& q,
                                    const test::HostMatrix<float>& r) {
  test::HostMatrix<float> rt(r.cols, r.rows);
  for (index_t j = 0; j < r.cols; ++j)
    for (index_t i = 0; i < r.rows; ++i) rt(j, i) = r(i, j);
  return {test::factor_relative_error(a.cview(), q.cview(), rt.cview()), test::orthogonality_loss(q.cview())};
}

// The Tensor Core TSQR variants on the GPU (wmma, one warp per block of 32 x 16; 40 columns in
// panels of 16), cond 1e2 and 1e7: fp16-refined within 10x of FP32 Householder (LAPACK, one block)
// on both measures, its R equal to LAPACK's up to row signs and to the host's emulation of the same
// arithmetic (test_tsqr) to FP32 rounding; tf32 and fp16 at their unit roundoff's level (2^-11).
TEST(Gpu, TensorCoreTsqrVariants) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (const auto& [n, cond] : {std::pair<index_t, double>{16, 1e2}, {16, 1e7}, {40, 1e2}}) {
    std::vector<double> sigma(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(cond, -static_cast<double>(i) / (n - 1));
    const auto a = test::matrix_with_spectrum(4000, n, sigma, 9);
    TsqrOptions one_block;
    one_block.leaf_rows = a.rows;
    const TsqrResult lapack = tsqr(*host, test::to_backend(*host, a), one_block);
    const auto lapack_r = test::to_host(*host, lapack.R);
    const auto [lapack_residual, lapack_loss] = qr_errors(a, test::to_host(*host, lapack.Q), lapack_r);
    for (TsqrArithmetic arithmetic : {TsqrArithmetic::FP16Refined, TsqrArithmetic::TF32, TsqrArithmetic::FP16}) {
      TsqrOptions o;
      o.arithmetic = arithmetic;
      const TsqrResult t = tsqr(*dev, test::to_backend(*dev, a), o);
      SCOPED_TRACE("n " + std::to_string(n) + " cond " + std::to_string(cond) + " " + to_string(arithmetic));
      EXPECT_NE(t.report.blocks.find("Tensor Cores"), std::string::npos) << t.report.blocks;
      const auto r = test::to_host(*dev, t.R);
      const auto [residual, loss] = qr_errors(a, test::to_host(*dev, t.Q), r);
      if (arithmetic != TsqrArithmetic::FP16Refined) {
        EXPECT_LT(residual, 4e-3);
        EXPECT_LT(loss, 4e-3);
        continue;
      }
      EXPECT_LT(residual, 10 * lapack_residual);
      EXPECT_LT(loss, 10 * lapack_loss);
      EXPECT_LT(r_distance_up_to_row_signs(r, lapack_r), 1e-5);
      if (n > 16) continue;  // the host takes 40 columns in one block, the GPU in panels
      const TsqrResult emulated = tsqr(*host, test::to_backend(*host, a), o);
      EXPECT_LT(r_distance_up_to_row_signs(r, test::to_host(*host, emulated.R)), 1e-5);
    }
  }
}

// The batched on-chip TSQR: rows not a multiple of the blocks, n from 1 to the tree's 128, Q to FP32
// orthogonality, A = Q R against FP64, R equal to LAPACK's one-block Householder R up to row signs,
// R alone equal to R with Q, Q written over A equal to Q apart, bit for bit.
TEST(Gpu, BatchedTsqrMatchesLapack) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (index_t n : {1, 16, 64, 128}) {
    const index_t m = 40009;
    const auto a = test::random_matrix(m, n, Elements::Normal, 500 + n);
    Matrix<float> da = test::to_backend(*dev, a);
    const TsqrResult r = tsqr(*dev, da);
    SCOPED_TRACE("n " + std::to_string(n) + ", " + std::to_string(r.report.leaves) + " leaves");
    EXPECT_EQ(r.report.blocks, "batched on chip");
    EXPECT_GE(r.report.levels, 2);
    const auto q = test::to_host(*dev, r.Q), rr = test::to_host(*dev, r.R);
    expect_factors_of(*host, a, q, rr);
    TsqrOptions r_only;
    r_only.form_q = false;
    EXPECT_EQ(test::to_host(*dev, tsqr(*dev, da, r_only).R).data, rr.data);
    TsqrOptions in_place;
    in_place.q_buffer = da.view();
    tsqr(*dev, da, in_place);
    EXPECT_EQ(test::to_host(*dev, da).data, q.data);
  }
}

// Rank deficiency and non-finite data reach R's diagonal: a zero column gives an exact zero there
// and a finite Q; a NaN gives a NaN. Leaf blocks beyond shared memory and panels wider than the
// blocks are refused, naming the option.
TEST(Gpu, BatchedTsqrReportsDeficiencyAndLimits) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 20000, n = 32;
  auto a = test::random_matrix(m, n, Elements::Normal, 41);
  for (index_t i = 0; i < m; ++i) a(i, 5) = 0.0f;
  const TsqrResult r = tsqr(*dev, test::to_backend(*dev, a));
  const auto q = test::to_host(*dev, r.Q), rr = test::to_host(*dev, r.R);
  EXPECT_EQ(rr(5, 5), 0.0f);
  for (float x : q.data) ASSERT_TRUE(std::isfinite(x));
  a(777, 9) = std::nanf("");
  EXPECT_TRUE(std::isnan(test::to_host(*dev, tsqr(*dev, test::to_backend(*dev, a)).R)(9, 9)));
  TsqrOptions o;
  o.leaf_rows = m;
  EXPECT_NE(test::invalid_argument_message([&] { tsqr(*dev, test::to_backend(*dev, a), o); }).find("leaf_rows = 20000"),
            std::string::npos);
  o.leaf_rows = 0;
  o.panel_columns = 129;
  EXPECT_NE(test::invalid_argument_message([&] { tsqr(*dev, test::to_backend(*dev, a), o); }).find("panel_columns = 129"),
            std::string::npos);
}

// A wider than the on-chip blocks: panels of 128 columns, BCGS2 between them; A = Q R against FP64,
// Q orthonormal, R LAPACK's up to row signs.
TEST(Gpu, TsqrPanelsBeyondTheBlocksWidth) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t m = 30000, n = 300;
  const auto a = test::random_matrix(m, n, Elements::Normal, 43);
  const TsqrResult w = tsqr(*dev, test::to_backend(*dev, a));
  EXPECT_EQ(w.report.blocks, "batched on chip");
  EXPECT_EQ(w.report.panels, 3);
  expect_factors_of(*host, a, test::to_host(*dev, w.Q), test::to_host(*dev, w.R));
}

TEST(Gpu, SvdThroughGramMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  const index_t m = 4096, n = 272;
  std::vector<double> sigma(n);
  for (index_t i = 0; i < n; ++i) sigma[i] = std::pow(1e-5, static_cast<double>(i) / (n - 1));
  const auto a = test::matrix_with_spectrum(m, n, sigma, 23);
  auto da = test::to_backend(*dev, a);
  Matrix<float> du(*dev, m, n), ds(*dev, n, 1), dv(*dev, n, n), hu(*host, m, n), hs(*host, n, 1), hv(*host, n, n);
  const Orthonormalizer used = svd_through_gram(*dev, da, du, ds, dv);
  svd_through_gram(*host, a.cview(), hu, hs, hv);
  const auto u = test::to_host(*dev, du), s = test::to_host(*dev, ds), v = test::to_host(*dev, dv);
  for (index_t i = 0; i < n; ++i) EXPECT_NEAR(s.data[i], hs.data()[i], 1e-6 * hs.data()[0]) << i;
  EXPECT_LT(test::lowrank_relative_error(a.cview(), u.cview(), s.cview(), v.cview()), 1e-6);
  EXPECT_LT(test::orthogonality_loss(u.cview()), 1e-5) << to_string(used);
  EXPECT_LT(test::orthogonality_loss(v.cview()), 1e-6);
}

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

// Strided batches (cuBLAS's strided-batched GEMM for FP32, TF32 and FP64; one split product per
// matrix otherwise) give what one product per matrix gives, to the order of summation, and Auto
// runs the split product on the GPU.
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

/// R^{-1} of the Cholesky factor of G (potrf, then trsm on the identity), or potrf's info.
int inverse_cholesky_factor(Backend& b, MatrixView<double> g, MatrixView<double> rinv) {
  if (const int info = b.cholesky(g)) return info;
  b.scale(0.0, rinv);
  b.add_to_diagonal(rinv, 1.0);
  b.triangular_solve(Side::Left, Op::N, 1.0, g, rinv);
  return 0;
}

/// max |R - R_ref| / max |R_ref| of two n x n host matrices; R's strict lower triangle must be zero.
double relative_difference_of_upper_factors(const Matrix<double>& r, const Matrix<double>& ref) {
  const index_t n = ref.view().rows();
  double worst = 0, scale = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      worst = std::max(worst, std::abs(r.view()(i, j) - ref.view()(i, j)));
      scale = std::max(scale, std::abs(ref.view()(i, j)));
      if (i > j) EXPECT_EQ(r.view()(i, j), 0.0) << n << " " << i << " " << j;
    }
  return worst / scale;
}

// The inverse Cholesky factor (cuSOLVER potrf + cuBLAS trsm) against LAPACK and Kokkos Kernels on
// the host, and a breakdown's pivot index.
TEST(Gpu, InverseCholeskyFactorMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  for (index_t n : {1, 3, 17, 272, 600}) {
    const auto x = test::random_matrix(n + 9, n, Elements::Normal, 13);
    Matrix<double> hg(*host, n, n), hr(*host, n, n), dg(*dev, n, n), dr(*dev, n, n), r(*host, n, n);
    host->copy(test::reference_gemm(Op::T, Op::N, x, x).cview(), hg.view());
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    ASSERT_EQ(inverse_cholesky_factor(*host, hg, hr), 0);
    ASSERT_EQ(inverse_cholesky_factor(*dev, dg, dr), 0) << n;
    dev->copy(MatrixView<const double>(dr.view()), r.view());
    EXPECT_LT(relative_difference_of_upper_factors(r, hr), 1e-10) << n;
  }
  for (index_t n : {40, 600}) {  // a negative last diagonal entry: the last pivot is negative
    const auto x = test::random_matrix(n + 9, n, Elements::Normal, 14);
    Matrix<double> hg(*host, n, n), dg(*dev, n, n), dr(*dev, n, n);
    host->copy(test::reference_gemm(Op::T, Op::N, x, x).cview(), hg.view());
    hg.view()(n - 1, n - 1) = -1.0;
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    EXPECT_EQ(inverse_cholesky_factor(*dev, dg, dr), n) << n;
  }
}

// The one-launch inverse Cholesky factor (CholeskyQrOps::inverse_cholesky_factor) against LAPACK on
// the host at orders around its 32 x 32 tiles up to its largest, G left as it was, and each kind of
// breakdown reported at its pivot.
TEST(Gpu, InverseCholeskyKernelMatchesHost) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  auto kernel = [&](MatrixView<const double> g, MatrixView<double> rinv) {
    Matrix<double> work(*dev, ops.inverse_cholesky_workspace(g.rows()), 1);
    return ops.inverse_cholesky_factor(g, rinv, work.view());
  };
  for (index_t n : std::vector<index_t>{1, 31, 32, 33, 100, 272, 512, ops.inverse_cholesky_max_order()}) {
    const auto x = test::random_matrix(n + 9, n, Elements::Normal, 15);
    Matrix<double> hg(*host, n, n), hr(*host, n, n), dg(*dev, n, n), dr(*dev, n, n), r(*host, n, n), g(*host, n, n);
    host->copy(test::reference_gemm(Op::T, Op::N, x, x).cview(), hg.view());
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    dev->scale(std::nan(""), dr.view());  // every entry must be written
    ASSERT_EQ(kernel(dg, dr), 0) << n;
    dev->copy(MatrixView<const double>(dr.view()), r.view());
    dev->copy(MatrixView<const double>(dg.view()), g.view());
    EXPECT_EQ(std::memcmp(g.view().data(), hg.view().data(), sizeof(double) * n * n), 0) << n;  // G not written
    ASSERT_EQ(inverse_cholesky_factor(*host, hg, hr), 0);
    EXPECT_LT(relative_difference_of_upper_factors(r, hr), 1e-11) << n;
  }
  const index_t n = 600;
  const auto x = test::random_matrix(n + 9, n, Elements::Normal, 16);
  const auto g0 = test::reference_gemm(Op::T, Op::N, x, x);
  struct Broken {
    index_t i, j;
    double value;
    int pivot;
  };
  for (const Broken& c : {Broken{5, 5, -1.0, 6}, Broken{n - 1, n - 1, 0.0, static_cast<int>(n)},
                          Broken{300, 40, std::nan(""), 301}, Broken{64, 64, HUGE_VAL, 65}}) {
    Matrix<double> hg(*host, n, n), dg(*dev, n, n), dr(*dev, n, n);
    host->copy(g0.cview(), hg.view());
    hg.view()(c.i, c.j) = c.value;
    dev->copy(MatrixView<const double>(hg.view()), dg.view());
    EXPECT_EQ(kernel(dg, dr), c.pivot) << c.i << " " << c.j;
  }
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

/// ||Q^T Q - I||_F in FP64 on the host.
double frobenius_orthogonality_loss(const test::HostMatrix<float>& q) {
  const auto g = test::reference_gemm(Op::T, Op::N, q, q);
  double sum = 0;
  for (index_t j = 0; j < q.cols; ++j)
    for (index_t i = 0; i < q.cols; ++i) {
      const double e = g(i, j) - (i == j ? 1.0 : 0.0);
      sum += e * e;
    }
  return std::sqrt(sum);
}

// Auto's Tensor Core CholeskyQR (64 < l <= 1024 on the GPU) against FP64 on the host: one pass on a
// well-conditioned Y, and at every condition number up to 1e6 (two passes, or the FP64 path where
// the split Gram matrix is too coarse) orthogonality within its bound 2^-20 sqrt(l) and range(Y) kept.
TEST(Gpu, AutoTensorCoreCholeskyQrKeepsFp32Orthogonality) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const index_t m = 8192, l = 300;
  ASSERT_TRUE(dev->ops<CholeskyQrOps>().split_preferred(m, l));
  for (double cond : {1.0, 1e2, 1e4, 1e6}) {
    std::vector<double> sigma(static_cast<std::size_t>(l));
    for (index_t j = 0; j < l; ++j) sigma[j] = std::pow(cond, -static_cast<double>(j) / static_cast<double>(l - 1));
    const auto y = test::matrix_with_spectrum(m, l, sigma, 21);
    Matrix<float> d(*dev, m, l);
    dev->copy(y.cview(), d.view());
    const Orthonormalizer ran = orthonormalize(*dev, d.view(), Orthonormalizer::Auto);
    const auto q = test::to_host(*dev, d.view());
    EXPECT_LE(frobenius_orthogonality_loss(q), 0x1p-20 * std::sqrt(static_cast<double>(l))) << cond;
    EXPECT_LT(test::span_residual(y, q), 1e-5) << cond;
    if (cond == 1.0) EXPECT_EQ(ran, Orthonormalizer::CholeskyQR);
  }
}

// The orthogonality probe (FP64 sums of W^T (W Omega) - Omega) against ||W^T W - I||_F in FP64 on
// the host, for an orthonormal W and one 1e-4 away, and its copy of W: row by row (an odd ld),
// four rows at a time (W 16-byte aligned; a last chunk of 4 rows; the widest W it takes), and
// four at a time with a last partial four (ld = m + 1).
TEST(Gpu, OrthogonalityProbeEstimatesTheLossAndCopies) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  CholeskyQrOps& ops = dev->ops<CholeskyQrOps>();
  const index_t probes = 8;
  struct Shape {
    index_t m, l, pad;
  } shapes[] = {{4999, 200, 0}, {2100, 1024, 0}, {3003, 136, 1}};
  for (const Shape& sh : shapes) {
    Matrix<float> w_rows(*dev, sh.m + sh.pad, sh.l), e(*dev, sh.m, sh.l), copy_rows(*dev, sh.m + sh.pad, sh.l);
    Matrix<float> omega(*dev, sh.l, probes);
    Matrix<double> work(*dev, ops.orthogonality_probe_workspace(sh.m, sh.l, probes), 1);
    const MatrixView<float> w = w_rows.view().block(0, 0, sh.m, sh.l), copy = copy_rows.view().block(0, 0, sh.m, sh.l);
    dev->fill_random(RandomSpec{Distribution::Gaussian, 31, 0}, w);
    dev->fill_random(RandomSpec{Distribution::Gaussian, 32, 0}, e.view());
    dev->fill_random(RandomSpec{Distribution::Gaussian, 33, 0}, omega.view());
    orthonormalize(*dev, w, Orthonormalizer::Householder);
    const std::string shape = std::to_string(sh.m) + " x " + std::to_string(sh.l) + ", ld " + std::to_string(w.ld());
    for (float away : {0.0f, 1e-4f}) {
      if (away > 0) dev->add(away, MatrixView<const float>(e.view()), 1.0f, w);
      const auto hw = test::to_host(*dev, w);
      const double exact = frobenius_orthogonality_loss(hw);
      const double estimate = std::sqrt(ops.orthogonality_probe(w, omega, copy, work) / probes);
      EXPECT_GT(estimate, 0.5 * exact) << shape << ", " << away;
      EXPECT_LT(estimate, 1.5 * exact) << shape << ", " << away;
      const auto hc = test::to_host(*dev, copy);
      EXPECT_EQ(std::memcmp(hc.data.data(), hw.data.data(), sizeof(float) * sh.m * sh.l), 0) << shape;
    }
  }
}

// Inf and NaN in A reach the sketch through every Tensor Core kernel, where the RSVD's check reads them.
TEST(Gpu, RsvdRejectsNonFiniteInputThroughEveryKernel) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto a = test::random_matrix(700, 600, Elements::Normal, 8);
  for (const char* kernel : tensor_core_kernels(*dev)) {
    ScopedEnv env("RANDNLA_TC_KERNEL", kernel);
    for (float bad : {INFINITY, -INFINITY, NAN}) {
      a(123, 456) = bad;
      auto da = test::to_backend(*dev, a);
      for (auto sk : {SketchPrecision::ShgemmFP16, SketchPrecision::ShgemmTF32, SketchPrecision::Auto}) {
        RsvdOptions o;
        o.sketch = sk;
        try {
          rsvd(*dev, da, 8, o);
          ADD_FAILURE() << bad << " accepted by " << kernel << " " << to_string(sk);
        } catch (const InvalidArgument& e) {
          EXPECT_NE(std::string(e.what()).find("1 non-finite"), std::string::npos) << e.what();
        }
      }
    }
  }
}

/// One rank: the collectives are the identity (the sums still stage device buffers through host memory).
class SingleRank final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string host_transport() const override { return "one rank"; }

 protected:
  void sum(float*, std::size_t) override {}
  void sum(double*, std::size_t) override {}
  void broadcast(float*, std::size_t, int) override {}
  void allgather(const std::int64_t* mine, std::size_t n, std::int64_t* all) override { std::copy(mine, mine + n, all); }
};

// The distributed RSVD, TSQR, CholeskyQR2 and preconditioned CholeskyQR on device data (one rank: the device buffers take the host-staged
// path of every collective) equal the one-process runs on the device.
TEST(Gpu, DistributedAlgorithmsOnDeviceData) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  SingleRank comm;
  std::vector<double> sigma(200);
  for (std::size_t i = 0; i < sigma.size(); ++i) sigma[i] = std::pow(0.97, static_cast<double>(i));
  const auto a = test::matrix_with_spectrum(3000, 400, sigma, 5);
  const Matrix<float> da = test::to_backend(*dev, a);
  RsvdOptions o;
  o.error_probes = 0;
  const DistributedRsvdResult d = distributed_rsvd(*dev, comm, da, 32, o);
  const RsvdResult whole = rsvd(*dev, da, 32, o);
  const auto ds = test::to_host(*dev, d.S), ws = test::to_host(*dev, whole.S);
  for (index_t i = 0; i < 32; ++i) EXPECT_NEAR(ds(i, 0), ws(i, 0), 1e-5 * ws(0, 0)) << i;
  EXPECT_LT(test::lowrank_relative_error(a.cview(), test::to_host(*dev, d.U).cview(), ds.cview(),
                                         test::to_host(*dev, d.V).cview()),
            1.01 * test::lowrank_relative_error(a.cview(), test::to_host(*dev, whole.U).cview(), ws.cview(),
                                                test::to_host(*dev, whole.V).cview()));
  const MatrixView<const float> panel = MatrixView<const float>(da.view()).block(0, 0, 3000, 64);
  const DistributedQrResult t = distributed_tsqr(*dev, comm, panel);
  EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, t.Q).cview()), 1e-5);
  // The CholeskyQR variants: the Q of the one-process orthonormaliser, to rounding.
  const std::pair<Orthonormalizer, DistributedQrResult> variants[] = {
      {Orthonormalizer::RandCholeskyQR, distributed_rand_cholesky_qr(*dev, comm, panel)},
      {Orthonormalizer::CholeskyQR2, distributed_cholesky_qr2(*dev, comm, panel)}};
  for (const auto& [method, c] : variants) {
    SCOPED_TRACE(to_string(method));
    Matrix<float> one(*dev, 3000, 64);
    dev->copy(panel, one.view());
    orthonormalize(*dev, one.view(), method);
    const auto cq = test::to_host(*dev, c.Q), oq = test::to_host(*dev, one);
    EXPECT_LT(test::orthogonality_loss(cq.cview()), 1e-5);
    double worst = 0;
    for (std::size_t i = 0; i < cq.data.size(); ++i) worst = std::max(worst, double(std::fabs(cq.data[i] - oq.data[i])));
    EXPECT_LT(worst, 1e-5);
  }
}

// RP-HOSVD on the device: with FP32 sketches every variant's approximation equals the host's to
// rounding (the same Omega from the same seed); the SHGEMM sketches on Tensor Cores stay within
// 1.1x of FP32's error on the device, 3-way and 4-way.
TEST(Gpu, TuckerMatchesHostAndShgemmKeepsFp32Error) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  auto host = make_backend(BackendKind::Host);
  struct Case {
    std::vector<index_t> dims, ranks;
  };
  for (const Case& c : {Case{{96, 80, 64}, {16, 12, 10}}, Case{{24, 20, 18, 16}, {6, 5, 5, 4}}}) {
    test::HostTensor t = test::paper_tensor(c.dims, c.ranks, 0, 17);
    std::mt19937_64 rng(3);
    std::normal_distribution<double> gauss(0.0, 1e-3);
    for (double& x : t.data) x += gauss(rng);
    test::HostMatrix<float> a(c.dims[0], t.size() / c.dims[0]);
    for (std::size_t i = 0; i < t.data.size(); ++i) a.data[i] = static_cast<float>(t.data[i]);
    const Matrix<float> da = test::to_backend(*dev, a);
    const PackedTensor on_dev{da.data(), c.dims, MemorySpace::Device}, on_host{a.data.data(), c.dims, MemorySpace::Host};
    for (TuckerVariant v : {TuckerVariant::TwoPass, TuckerVariant::SequentiallyTruncated, TuckerVariant::SinglePass}) {
      SCOPED_TRACE(std::string(to_string(v)) + " N = " + std::to_string(c.dims.size()));
      TuckerOptions o;
      o.variant = v;
      o.oversampling = 4;
      o.sketch = SketchPrecision::FP32;
      const TuckerResult hr = rp_hosvd(*host, on_host, c.ranks, o), dr = rp_hosvd(*dev, on_dev, c.ranks, o);
      const test::HostMatrix<float> xh = test::to_host(*host, tucker_reconstruct(*host, hr));
      const test::HostMatrix<float> xd = test::to_host(*dev, tucker_reconstruct(*dev, dr));
      double diff = 0, norm = 0;
      for (std::size_t i = 0; i < a.data.size(); ++i)
        diff += std::pow(double(xh.data[i]) - xd.data[i], 2), norm += std::pow(double(a.data[i]), 2);
      EXPECT_LT(std::sqrt(diff / norm), 1e-4);
      // The errors agree to the rounding of the FP32 factors and reconstruction: 0.1%, or a few
      // units of 2^-24 (the error is relative to ||A||) where the error itself is that small.
      const double fp32 = tucker_relative_error(*dev, on_dev, dr);
      EXPECT_NEAR(fp32, tucker_relative_error(*host, on_host, hr), 1e-3 * fp32 + 0x1p-22);
      for (SketchPrecision s : {SketchPrecision::ShgemmFP16, SketchPrecision::ShgemmTF32, SketchPrecision::Auto}) {
        o.sketch = s;
        const TuckerResult r = rp_hosvd(*dev, on_dev, c.ranks, o);
        EXPECT_LT(tucker_relative_error(*dev, on_dev, r), 1.1 * fp32) << to_string(s);
        // Named at the end of the run, from the first sketch's plan on the device.
        EXPECT_EQ(r.report.sketch_kernel, s == SketchPrecision::ShgemmTF32 ? "shgemm tf32-TC" : "shgemm fp16-TC");
      }
    }
  }
}

// RP-HOSVD on the device queues its orthonormalisations and checks them at the end; where one did
// not hold it runs again, waiting at each step: a zero tensor (every sketch zero: CholeskyQR breaks
// down) gets the fallback's orthonormal factors, a non-finite one the input error.
TEST(Gpu, TuckerRunsAgainWhereAQueuedOrthonormalisationBrokeDown) {
  RANDNLA_REQUIRE_GPU();
  auto dev = make_backend(BackendKind::Cuda);
  const std::vector<index_t> dims{40, 36, 32}, ranks{6, 5, 4};
  test::HostMatrix<float> a(dims[0], dims[1] * dims[2]);
  Matrix<float> zero = test::to_backend(*dev, a);
  const PackedTensor t{zero.data(), dims, MemorySpace::Device};
  TuckerOptions o;
  o.variant = TuckerVariant::SequentiallyTruncated;
  const TuckerResult r = rp_hosvd(*dev, t, ranks, o);
  ASSERT_EQ(r.report.orthonormalizers.size(), 3u);
  for (int n = 0; n < 3; ++n) {
    EXPECT_NE(r.report.orthonormalizers[n], to_string(Orthonormalizer::CholeskyQR2));
    EXPECT_LT(test::orthogonality_loss(test::to_host(*dev, r.factors[n]).cview()), 1e-5) << r.report.orthonormalizers[n];
  }
  a(5, 7) = std::numeric_limits<float>::quiet_NaN();
  Matrix<float> nan = test::to_backend(*dev, a);
  try {
    rp_hosvd(*dev, PackedTensor{nan.data(), dims, MemorySpace::Device}, ranks, o);
    ADD_FAILURE() << "no error for a NaN in A";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace randnla
