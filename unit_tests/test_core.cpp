// core/: errors, views, FP16/TF32 rounding, splits, exponent statistics, Kokkos adapters.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>

#include "randnla/backends.hpp"
#include "randnla/version.hpp"
#include "randnla/kokkos_compat.hpp"
#include "randnla/philox.hpp"
#include "randnla/precision.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

template <class F>
std::string invalid_message(F f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no InvalidArgument thrown";
}

TEST(MatrixView, BadExtentsAndLeadingDimensionThrowNamingParameterAndValue) {
  float x[16] = {};
  EXPECT_NE(invalid_message([&] { MatrixView<float>(x, -1, 2, 4, MemorySpace::Host, "A"); }).find("A.rows = -1"),
            std::string::npos);
  EXPECT_NE(invalid_message([&] { MatrixView<float>(x, 2, -3, 4, MemorySpace::Host, "A"); }).find("A.cols = -3"),
            std::string::npos);
  EXPECT_NE(invalid_message([&] { MatrixView<float>(x, 5, 2, 3, MemorySpace::Host, "A"); }).find("A.ld = 3"),
            std::string::npos);
  EXPECT_NE(invalid_message([&] { MatrixView<float>(nullptr, 2, 2, 2, MemorySpace::Host, "B"); }).find("B.data"),
            std::string::npos);
  EXPECT_NO_THROW(MatrixView<float>(nullptr, 0, 5, 1, MemorySpace::Host));
  MatrixView<float> v(x, 4, 4, 4, MemorySpace::Host);
  EXPECT_THROW(v.block(2, 0, 3, 1), InvalidArgument);
  EXPECT_EQ(&v.block(1, 2, 2, 2)(0, 0), &x[1 + 2 * 4]);
}

// Matrix::aligned: ld is the rows rounded up to 16 bytes, and each column starts on a 16-byte
// boundary; the elements are written and read where ld puts them.
TEST(Matrix, AlignedColumnsStartOn16ByteBoundaries) {
  auto host = make_backend(BackendKind::Host);
  for (index_t rows : {0, 1, 5, 8, 117659}) {
    const Matrix<float> f = Matrix<float>::aligned(*host, rows, 3, "F");
    const Matrix<double> d = Matrix<double>::aligned(*host, rows, 3, "D");
    EXPECT_EQ(f.view().ld(), (std::max<index_t>(rows, 1) + 3) / 4 * 4) << rows;
    EXPECT_EQ(d.view().ld(), (std::max<index_t>(rows, 1) + 1) / 2 * 2) << rows;
    for (index_t j = 0; j < 3; ++j) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&f.data()[j * f.view().ld()]) % 16, 0u) << rows;
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&d.data()[j * d.view().ld()]) % 16, 0u) << rows;
    }
  }
  Matrix<float> a = Matrix<float>::aligned(*host, 5, 2, "A");
  const float x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  host->copy(MatrixView<const float>(x, 5, 2, 5, MemorySpace::Host), a.view());
  EXPECT_EQ(a.data()[8], 6.0f);
  EXPECT_EQ(a.view()(4, 1), 10.0f);
}

TEST(KokkosAdapter, LayoutLeftAcceptedLayoutRightRejected) {
  Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace> left("L", 7, 3);
  const auto v = view_of(left);
  EXPECT_EQ(v.rows(), 7);
  EXPECT_EQ(v.cols(), 3);
  EXPECT_EQ(v.space(), MemorySpace::Host);
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> right("R", 7, 3);
  EXPECT_NE(invalid_message([&] { view_of(right, "A"); }).find("A.layout"), std::string::npos);
  auto sub = Kokkos::subview(left, Kokkos::make_pair(1, 5), Kokkos::ALL());
  const auto s = view_of(sub);
  EXPECT_EQ(s.rows(), 4);
  EXPECT_EQ(s.ld(), 7);
}

// storage_of reads each layout from its strides, deterministically where both readings hold, and
// transposed_view_of maps a row-major view onto A^T in the same memory.
TEST(KokkosAdapter, StorageOfEveryLayoutAndItsCornerCases) {
  using Strided = Kokkos::View<float**, Kokkos::LayoutStride, Kokkos::HostSpace>;
  float x[64] = {};
  Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace> right("R", 7, 3);
  EXPECT_EQ(storage_of(right), ViewStorage::RowMajor);
  const auto t = transposed_view_of(right, "A");
  EXPECT_EQ(t.rows(), 3);
  EXPECT_EQ(t.cols(), 7);
  EXPECT_EQ(&t(2, 5), &right(5, 2));
  EXPECT_EQ(storage_of(Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace>("L", 7, 3)), ViewStorage::ColumnMajor);
  EXPECT_EQ(storage_of(Strided(x, Kokkos::LayoutStride(4, 1, 3, 9))), ViewStorage::ColumnMajor);  // ld 9
  EXPECT_EQ(transposed_view_of(Strided(x, Kokkos::LayoutStride(4, 5, 3, 1))).ld(), 5);           // A^T's ld 5
  EXPECT_EQ(storage_of(Strided(x, Kokkos::LayoutStride(4, 2, 3, 8))), ViewStorage::Strided);
  EXPECT_EQ(storage_of(Strided(x, Kokkos::LayoutStride(4, 1, 3, 2))), ViewStorage::Strided);  // columns overlap
  // 1 x n, n x 1, 1 x 1 and empty views read both ways: column-major, always.
  EXPECT_EQ(storage_of(Strided(x, Kokkos::LayoutStride(1, 5, 6, 1))), ViewStorage::ColumnMajor);
  EXPECT_EQ(storage_of(Strided(x, Kokkos::LayoutStride(6, 1, 1, 1))), ViewStorage::ColumnMajor);
  EXPECT_EQ(storage_of(Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>("R", 1, 6)), ViewStorage::ColumnMajor);
  EXPECT_EQ(storage_of(Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>("R", 0, 6)), ViewStorage::ColumnMajor);
  EXPECT_EQ(view_of(Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::HostSpace>("R", 1, 6)).ld(), 1);
  // A column of a row-major matrix (n x 1, stride n) is row-major: A^T is 1 x n.
  EXPECT_EQ(storage_of(Strided(x, Kokkos::LayoutStride(6, 3, 1, 1))), ViewStorage::RowMajor);
  EXPECT_NE(invalid_message([&] { view_of(Strided(x, Kokkos::LayoutStride(4, 2, 3, 8)), "A"); }).find("strides (2, 8)"),
            std::string::npos);
}

// packed_order_of: the order of the modes in which a tensor view's memory is packed.
TEST(KokkosAdapter, PackedOrderOfEveryLayout) {
  using Strided = Kokkos::View<float***, Kokkos::LayoutStride, Kokkos::HostSpace>;
  float x[128] = {};
  EXPECT_EQ(packed_order_of(Kokkos::View<float***, Kokkos::LayoutLeft, Kokkos::HostSpace>("L", 2, 3, 4)),
            (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(packed_order_of(Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace>("R", 2, 3, 4)),
            (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(packed_order_of(Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace>("R", 5, 1, 4)),
            (std::vector<int>{2, 1, 0}));  // the extent-1 mode's stride ties
  EXPECT_EQ(packed_order_of(Strided(x, Kokkos::LayoutStride(2, 3, 3, 1, 4, 6))), (std::vector<int>{1, 0, 2}));
  EXPECT_TRUE(packed_order_of(Strided(x, Kokkos::LayoutStride(2, 1, 3, 3, 4, 9))).empty());  // padded
}

// Rank-3 to rank-5 LayoutLeft Kokkos views map onto tensor views of the same memory, element for
// element; the mode-0 unfolding and the last mode's columns are matrix views of it.
template <class KV>
void expect_same_elements(const KV& v) {
  const auto t = tensor_view_of(v, "X");
  EXPECT_EQ(t.data(), v.data());
  EXPECT_EQ(t.size(), static_cast<index_t>(v.size()));
  for (int k = 0; k < t.rank(); ++k) EXPECT_EQ(t.extent(k), static_cast<index_t>(v.extent(k)));
}

TEST(TensorView, KokkosRank3To5LayoutLeftViewsMapWithoutACopy) {
  Kokkos::View<float***, Kokkos::LayoutLeft, Kokkos::HostSpace> a("a", 4, 3, 5);
  Kokkos::View<float****, Kokkos::LayoutLeft, Kokkos::HostSpace> b("b", 2, 3, 4, 5);
  Kokkos::View<double*****, Kokkos::LayoutLeft, Kokkos::HostSpace> c("c", 2, 2, 3, 2, 3);
  expect_same_elements(a);
  expect_same_elements(b);
  expect_same_elements(c);
  const auto t = tensor_view_of(b, "B");
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < 5; ++l) ASSERT_EQ(&t(i, j, k, l), &b(i, j, k, l));
  const auto m0 = tensor_view_of(a).mode0_unfolding();  // A_(0): 4 x 15, column j + 3 k
  EXPECT_EQ(m0.rows(), 4);
  EXPECT_EQ(m0.cols(), 15);
  EXPECT_EQ(&m0(1, 2 + 3 * 4), &a(1, 2, 4));
  const auto last = tensor_view_of(a).last_mode_columns();  // 12 x 5: row i + 4 j
  EXPECT_EQ(last.rows(), 12);
  EXPECT_EQ(&last(3 + 4 * 2, 1), &a(3, 2, 1));
  // A subview that skips slices of the last mode keeps the mode-0 unfolding only where it packs.
  const auto every_other = Kokkos::subview(a, Kokkos::ALL(), Kokkos::make_pair(0, 2), Kokkos::ALL());
  EXPECT_THROW(tensor_view_of(every_other).mode0_unfolding(), InvalidArgument);
  EXPECT_EQ(tensor_view_of(every_other).last_mode_columns().ld(), 12);
}

TEST(TensorView, LayoutRightAndOverlappingStridesAreRefused) {
  Kokkos::View<float***, Kokkos::LayoutRight, Kokkos::HostSpace> right("r", 3, 4, 5);
  try {
    tensor_view_of(right, "T");
    ADD_FAILURE() << "LayoutRight accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "T.mode1.stride");  // 5 < 3 x 20: mode 1 overlaps mode 0's slices
  }
  float x[64];
  EXPECT_THROW((TensorView<float, 3>(x, {4, 4, 4}, {1, 3, 16}, MemorySpace::Host, "T")), InvalidArgument);  // overlap
  EXPECT_THROW((TensorView<float, 3>(x, {4, 4, 4}, {4, 1, 16}, MemorySpace::Host, "T")), InvalidArgument);  // row-major
  EXPECT_NO_THROW((TensorView<float, 3>(x, {4, 4, 4}, {1, 4, 16}, MemorySpace::Host, "T")));
}

TEST(Errors, HierarchyAndParsers) {
  EXPECT_THROW(parse_enum<BackendKind>("gpu", "backend"), InvalidArgument);
  try {
    parse_enum<BackendKind>("gpu", "--backend");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--backend = gpu"), std::string::npos);
  }
#if !defined(RANDNLA_HAVE_CUDA)
  EXPECT_THROW(make_backend(BackendKind::Cuda), UnsupportedConfiguration);
#endif
}

// A build with CUDA whose module cannot be loaded runs Auto on the host only where no GPU is
// present (elsewhere Auto says why it cannot use the GPU), its status says why, and asking for
// the GPU names every path tried. Run by the ctest entry cuda_module_missing, which points
// RANDNLA_CUDA_MODULE at a file that does not exist (the module is looked up once per process).
TEST(CudaModule, MissingModuleIsReportedAndNamesThePathTried) {
  const std::string missing = "/nonexistent/librandnla_cuda.so";
  const char* path = std::getenv("RANDNLA_CUDA_MODULE");
  if (!path || path != missing) GTEST_SKIP() << "run with RANDNLA_CUDA_MODULE=" << missing;
  EXPECT_FALSE(cuda_available());
  const CudaModuleStatus status = cuda_module_status();
  EXPECT_TRUE(status.built);
  EXPECT_FALSE(status.loaded);
  EXPECT_TRUE(status.path.empty()) << status.path;
  EXPECT_NE(status.reason.find(missing), std::string::npos) << status.reason;
  if (status.gpu_present) {
    try {
      make_backend(BackendKind::Auto);
      ADD_FAILURE() << "Auto ran on the host although a GPU is present and the module is missing";
    } catch (const UnsupportedConfiguration& e) {
      EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
    }
  } else {
    EXPECT_NE(make_backend(BackendKind::Auto), nullptr);
  }
  try {
    make_backend(BackendKind::Cuda);
    ADD_FAILURE() << "make_backend(Cuda) returned without the module";
  } catch (const UnsupportedConfiguration& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

// Without CUDA in the build, the status says so and names this build.
TEST(CudaModule, StatusOfThisBuild) {
  const CudaModuleStatus status = cuda_module_status();
  EXPECT_EQ(status.build_id, RANDNLA_BUILD_ID);
#if !defined(RANDNLA_HAVE_CUDA)
  EXPECT_FALSE(status.built);
  EXPECT_FALSE(status.loaded);
  EXPECT_NE(status.reason.find("RANDNLA_ENABLE_CUDA=OFF"), std::string::npos) << status.reason;
#else
  if (!std::getenv("RANDNLA_CUDA_MODULE")) EXPECT_TRUE(status.loaded) << status.reason;
#endif
}

// The nearest FP16 to x, found by brute force over FP16 neighbours: an independent reference.
bool is_correctly_rounded(float x, std::uint16_t h) {
  if (std::isnan(x)) return h == 0x7fff;
  const double xd = x, hv = half_bits_to_float(h);
  if (std::isinf(hv)) return std::abs(xd) >= 65520.0 && std::signbit(x) == std::signbit(hv);
  if (hv == 0.0 && std::signbit(x) != std::signbit(hv)) return false;
  const double err = std::abs(hv - xd);
  for (int d : {-1, 1}) {
    const std::uint16_t mag = h & 0x7fff, sign = h & 0x8000;
    if ((mag == 0 && d < 0) || mag + d >= 0x7c00) continue;
    const double other = half_bits_to_float(static_cast<std::uint16_t>(sign | (mag + d)));
    const double oerr = std::abs(other - xd);
    if (oerr < err) return false;
    if (oerr == err && (h & 1)) return false;  // a tie must go to even
  }
  return true;
}

TEST(Fp16, RoundToNearestEvenAgainstBruteForceOnEdgesAndASample) {
  std::vector<float> edges = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e-8f, 2.98e-8f, 2.9802322e-8f,
                              5.96e-8f, 6.1035156e-5f, 6.1e-5f, 1.0f + 0x1p-11f, 1.0f + 0x1p-11f + 0x1p-23f,
                              1.0f + 3 * 0x1p-11f, std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::denorm_min(), 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f};
  for (float x : edges) EXPECT_TRUE(is_correctly_rounded(x, float_to_half_bits(x))) << x;
  // Every FP16 value and every midpoint between neighbours round-trips / ties to even.
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {
    const float v = half_bits_to_float(static_cast<std::uint16_t>(h));
    ASSERT_EQ(float_to_half_bits(v), h);
    ASSERT_EQ(float_to_half_bits(-v), h | 0x8000);
    const float mid = static_cast<float>((static_cast<double>(v) + half_bits_to_float(static_cast<std::uint16_t>(h + 1))) / 2);
    ASSERT_TRUE(is_correctly_rounded(mid, float_to_half_bits(mid))) << h;
  }
  // 2^24 patterns spread over all 2^32 (stride 257 covers every exponent and low bit pattern).
  for (std::uint64_t p = 0; p < (1ull << 32); p += 257) {
    const float x = exact::float_of(static_cast<std::uint32_t>(p));
    ASSERT_TRUE(is_correctly_rounded(x, float_to_half_bits(x))) << std::hex << p;
  }
}

TEST(Fp16, BrokenRoundingIsCaught) {
  // A truncating conversion must fail the reference: the check can fail.
  const float x = 1.0f + 0x1p-11f + 0x1p-20f;
  const std::uint16_t truncated = static_cast<std::uint16_t>(float_to_half_bits(x) - 1);
  EXPECT_FALSE(is_correctly_rounded(x, truncated));
}

// convert_measured(src, dst, e) rounds 2^e src to FP16 once (the reference: the exact value in
// double against FP16's neighbours), and its histogram is src's own, unscaled.
TEST(Fp16, ConvertMeasuredScalesByAPowerOfTwoBeforeItsOneRounding) {
  auto b = make_backend(BackendKind::Host);
  const auto r = test::random_matrix(37, 29, test::Elements::Normal, 7);
  Matrix<float> x(*b, 37, 29, "X");
  for (index_t j = 0; j < 29; ++j)
    for (index_t i = 0; i < 37; ++i) x.view()(i, j) = static_cast<float>(r(i, j)) * (1.0f + 0x1p-12f);
  x.view()(0, 0) = 1.0f + 0x1p-11f + 0x1p-20f;  // just above a tie after any power of two
  Matrix<fp16> h(*b, 37, 29, "H");
  for (int e : {0, -7, 9, -20}) {
    const ExponentHistogram got = b->convert_measured(x, h.view(), e);
    for (index_t j = 0; j < 29; ++j)
      for (index_t i = 0; i < 37; ++i) {
        const float scaled = std::ldexp(x.view()(i, j), e);
        ASSERT_TRUE(is_correctly_rounded(scaled, h.view()(i, j).bits)) << "exponent " << e << " at " << i << "," << j;
      }
    const ExponentHistogram want = b->exponent_histogram(x);
    EXPECT_EQ(0, std::memcmp(got.count, want.count, sizeof(want.count))) << "exponent " << e;
  }
  EXPECT_NE(invalid_message([&] { b->convert_measured(x, h.view(), 128); }).find("exponent"), std::string::npos);
  EXPECT_NE(invalid_message([&] { b->convert_measured(x, h.view(), -127); }).find("-127"), std::string::npos);
}

TEST(Reductions, SignsOfLargestFollowNumpysArgmaxOnTiesZerosAndLastRows) {
  auto b = make_backend(BackendKind::Host);
  const index_t m = 1000, k = 24;
  std::vector<float> x = test::columns_with_ties(m, k);
  const std::vector<float> want = test::signs_of_largest_reference(x, m, k);
  EXPECT_EQ(b->signs_of_largest(MatrixView<const float>(x.data(), m, k, m, MemorySpace::Host)), want);
  EXPECT_EQ(want[0], -1.0f);  // j = 0: -2 in the last row
  EXPECT_EQ(want[1], 1.0f);   // the zero column
  EXPECT_EQ(want[5], -1.0f);  // j = 5: -2 first, then +2
  // A block with ld > rows sees only its rows (column 0 loses its -2 in the last row).
  std::vector<float> packed;
  for (index_t j = 0; j < k; ++j) packed.insert(packed.end(), x.begin() + j * m, x.begin() + j * m + m - 1);
  const std::vector<float> block = b->signs_of_largest(MatrixView<const float>(x.data(), m - 1, k, m, MemorySpace::Host));
  EXPECT_EQ(block, test::signs_of_largest_reference(packed, m - 1, k));
  EXPECT_TRUE(b->signs_of_largest(MatrixView<const float>(x.data(), 0, 3, 1, MemorySpace::Host)) == std::vector<float>(3, 1.0f));
}

TEST(Tf32, RoundToNearestTiesAway) {
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f);  // tie rounds away
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-12f), 1.0f);
  EXPECT_EQ(round_to_tf32(-1.0f - 0x1p-11f), -1.0f - 0x1p-10f);
  EXPECT_TRUE(std::isinf(round_to_tf32(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(exact::bits_of(round_to_tf32(3.14159f)) & 0x1fffu, 0u);
}

TEST(Split, HalfhalfAndTf32RecoverAbout22Bits) {
  const auto a = test::random_matrix(1, 20000, test::Elements::Normal, 5);
  for (float x : a.data) {
    fp16 hi, lo;
    split_halfhalf(x, 3, hi, lo);
    const double back = (to_float(hi) + to_float(lo) * 0x1p-11) * 0x1p-3;
    EXPECT_LE(std::abs(back - x), std::abs(x) * 0x1p-21 + 0x1p-40) << x;
    float th, tl;
    split_tf32(x, th, tl);
    EXPECT_LE(std::abs(th + tl * 0x1p-11 - static_cast<double>(x)), std::abs(x) * 0x1p-21) << x;
  }
  // Infinities: the largest finite hi, the infinity in lo (an infinite hi would meet lo_b = 0).
  const float inf = std::numeric_limits<float>::infinity();
  fp16 hi, lo;
  split_halfhalf(inf, 0, hi, lo);
  EXPECT_EQ(hi.bits, 0x7bff);
  EXPECT_EQ(lo.bits, 0x7c00);
  split_halfhalf(-inf, 5, hi, lo, 1.0f);
  EXPECT_EQ(hi.bits, 0xfbff);
  EXPECT_EQ(lo.bits, 0xfc00);
  float th, tl;
  split_tf32(-inf, th, tl);
  EXPECT_EQ(th, -0x1.ffcp127f);
  EXPECT_EQ(tl, -inf);
  const double big = std::numeric_limits<float>::max();  // rounds beyond TF32's range: hi saturates
  split_tf32(std::numeric_limits<float>::max(), th, tl, 1.0f);
  EXPECT_EQ(th, 0x1.ffcp127f);
  EXPECT_LE(std::abs(static_cast<double>(th) + tl - big), big * 0x1p-21);
  split_halfhalf(std::numeric_limits<float>::quiet_NaN(), 0, hi, lo);
  EXPECT_TRUE(std::isnan(to_float(hi)) && std::isnan(to_float(lo)));
}

TEST(ExponentHistogram, PlanChoosesScaledFp16OrTf32) {
  ExponentHistogram h;
  h.count[biased_exponent(3.0f)] = 10;
  h.count[biased_exponent(1e-5f)] = 5;
  OperandPlan p = plan_operand(h, TensorCore::Auto);
  EXPECT_TRUE(p.use_fp16);
  EXPECT_EQ(p.scale_exponent, 13);  // 3 = 1.5 * 2^1 -> 2^14
  h.count[biased_exponent(1e-12f)] = 1;  // 2^-40 is 41 binades below the max: lost in FP16
  EXPECT_FALSE(plan_operand(h, TensorCore::Auto).use_fp16);
  EXPECT_TRUE(plan_operand(h, TensorCore::FP16).use_fp16);
  EXPECT_FALSE(plan_operand(h, TensorCore::TF32).use_fp16);
  h.count[255] = 1;  // NaN/Inf: TF32 even when FP16 is asked for
  EXPECT_FALSE(plan_operand(h, TensorCore::FP16).use_fp16);
  EXPECT_EQ(h.count_below(biased_exponent(1.0f)), 6);
  EXPECT_EQ(h.max_biased_exponent(), biased_exponent(3.0f));
}

}  // namespace
}  // namespace randnla
