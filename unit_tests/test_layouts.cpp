// The Kokkos entries on every layout, on the default execution space (Serial, OpenMP or Cuda):
// LayoutRight, and LayoutStride views with a non-unit leading dimension (every other column of a
// larger LayoutLeft matrix), row-major with padding, and with neither stride 1, give the LayoutLeft
// call's accuracy against FP64 references; each result says how its input was read, and the entries
// that read a row-major A as A^T say that they did so in place.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "randnla/randnla.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Space = Exec::memory_space;

/// A host matrix or tensor (first index fastest) copied into a flat view of this space at the given
/// strides, then viewed as `View` (LayoutLeft, LayoutRight or LayoutStride) over that memory.
template <class View>
struct StoredAs {
  Kokkos::View<float*, Space> store;
  View view;
};

template <class View, std::size_t... I>
View wrap(float* data, const std::vector<index_t>& extents, std::index_sequence<I...>) {
  return View(data, static_cast<std::size_t>(extents[I])...);
}

template <class View>
StoredAs<View> stored_as(const std::vector<index_t>& extents, const std::vector<float>& first_fastest,
                         const std::vector<index_t>& strides) {
  const std::size_t n = extents.size();
  index_t span = 1;
  for (std::size_t k = 0; k < n; ++k) span += (extents[k] - 1) * strides[k];
  StoredAs<View> s{Kokkos::View<float*, Space>("store", static_cast<std::size_t>(span)), View()};
  auto h = Kokkos::create_mirror_view(s.store);
  for (std::size_t e = 0; e < first_fastest.size(); ++e) {
    index_t rest = static_cast<index_t>(e), offset = 0;
    for (std::size_t k = 0; k < n; ++k) offset += (rest % extents[k]) * strides[k], rest /= extents[k];
    h(offset) = first_fastest[e];
  }
  Kokkos::deep_copy(s.store, h);
  Kokkos::LayoutStride layout;
  for (std::size_t k = 0; k < n; ++k) {
    layout.dimension[k] = static_cast<std::size_t>(extents[k]);
    layout.stride[k] = static_cast<std::size_t>(strides[k]);
  }
  if constexpr (std::is_same<typename View::array_layout, Kokkos::LayoutStride>::value)
    s.view = View(s.store.data(), layout);
  else
    s.view = wrap<View>(s.store.data(), extents, std::make_index_sequence<static_cast<std::size_t>(View::rank)>());
  return s;
}

using Left = Kokkos::View<float**, Kokkos::LayoutLeft, Space>;
using Right = Kokkos::View<float**, Kokkos::LayoutRight, Space>;
using Strided = Kokkos::View<float**, Kokkos::LayoutStride, Space>;

/// Runs f(name, view, storage) on A (m x n) in each layout: LayoutLeft, LayoutRight, every other
/// column of an m x 2n LayoutLeft matrix (strides (1, 2m)), row-major with ld = n + 2 (strides
/// (n + 2, 1)), and every other row of a 2m x n LayoutLeft matrix (strides (2, 2m): neither is 1).
template <class F>
void for_each_layout(const test::HostMatrix<float>& a, F&& f) {
  const index_t m = a.rows, n = a.cols;
  f("LayoutLeft", stored_as<Left>({m, n}, a.data, {1, m}).view, ViewStorage::ColumnMajor);
  f("LayoutRight", stored_as<Right>({m, n}, a.data, {n, 1}).view, ViewStorage::RowMajor);
  const auto columns = stored_as<Strided>({m, n}, a.data, {1, 2 * m});
  f("every other column", columns.view, ViewStorage::ColumnMajor);
  const auto rows = stored_as<Strided>({m, n}, a.data, {n + 2, 1});
  f("row-major, ld n + 2", rows.view, ViewStorage::RowMajor);
  const auto neither = stored_as<Strided>({m, n}, a.data, {2, 2 * m});
  f("every other row", neither.view, ViewStorage::Strided);
}

/// What result.input must say for a view of `storage` where the entry reads a row-major view as
/// A^T (swaps) or copies it.
std::string expected_input(ViewStorage storage, bool swaps, const std::string& strides, const std::string& name = "A") {
  if (storage == ViewStorage::ColumnMajor) return name + ": column-major, read in place";
  if (storage == ViewStorage::RowMajor && swaps) return name + ": row-major, read in place as " + name + "^T";
  return name + ": copied to LayoutLeft (strides " + strides + ")";
}

template <class V>
std::string strides(const V& v) {
  return strides_of(v);
}

std::vector<double> decaying(index_t n) {
  std::vector<double> s(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) s[i] = std::pow(i + 1.0, -2.0);
  return s;
}

template <class V>
test::HostMatrix<float> column(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  test::HostMatrix<float> c(static_cast<index_t>(v.extent(0)), 1);
  for (index_t i = 0; i < c.rows; ++i) c(i, 0) = h(i);
  return c;
}

TEST(Layouts, RsvdAndFixedAccuracyOnEveryLayoutAtTheLayoutLeftAccuracy) {
  const index_t m = 300, n = 200, k = 12;
  const std::vector<double> sigma = decaying(n);
  const test::HostMatrix<float> a = test::matrix_with_spectrum(m, n, sigma, 11);
  const double optimum = test::eckart_young(sigma, k) / test::eckart_young(sigma, 0);
  double left_error = -1;
  for_each_layout(a, [&](const std::string& name, const auto& view, ViewStorage storage) {
    SCOPED_TRACE(name);
    const auto r = rsvd(Exec(), view, k);
    EXPECT_EQ(r.input, expected_input(storage, true, strides(view)));
    ASSERT_EQ(r.U.extent(0), static_cast<std::size_t>(m));
    ASSERT_EQ(r.U.extent(1), static_cast<std::size_t>(k));
    ASSERT_EQ(r.V.extent(0), static_cast<std::size_t>(n));
    const auto u = test::from_kokkos(r.U), v = test::from_kokkos(r.V), s = column(r.S);
    const double err = test::lowrank_relative_error(a.cview(), u.cview(), s.cview(), v.cview());
    if (left_error < 0) left_error = err;
    EXPECT_LE(err, 1.05 * optimum);
    EXPECT_NEAR(err, left_error, 0.05 * optimum);
    for (index_t i = 0; i < k; ++i) EXPECT_NEAR(s(i, 0), sigma[i], 1e-3 * sigma[i]) << i;
    EXPECT_LT(test::orthogonality_loss(u.cview()), 1e-5);
    EXPECT_LT(test::orthogonality_loss(v.cview()), 1e-5);

    FixedAccuracyOptions o;
    o.tolerance = 1e-2;
    o.block_size = 8;
    const auto f = rsvd_fixed_accuracy(Exec(), view, o);
    EXPECT_EQ(f.input, r.input);
    ASSERT_EQ(f.U.extent(0), static_cast<std::size_t>(m));
    ASSERT_EQ(f.V.extent(0), static_cast<std::size_t>(n));
    EXPECT_LE(test::lowrank_relative_error(a.cview(), test::from_kokkos(f.U).cview(), column(f.S).cview(),
                                           test::from_kokkos(f.V).cview()),
              1e-2);
  });
}

// PCA of X (m samples x n features) stored row-major: the same operator as for LayoutLeft (X read
// through its transpose, the same Omega), so the same components; the mean and the singular values
// against FP64.
TEST(Layouts, PcaOnEveryLayoutMatchesTheLayoutLeftCallAndFp64) {
  const index_t m = 300, n = 80, k = 6;
  test::HostMatrix<float> x = test::matrix_with_spectrum(m, n, decaying(n), 11);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) x(i, j) += 0.01f * static_cast<float>(j);
  test::HostMatrix<float> centred = x;
  std::vector<double> mean(static_cast<std::size_t>(n));
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < m; ++i) mean[j] += x(i, j);
    mean[j] /= m;
    for (index_t i = 0; i < m; ++i) centred(i, j) = static_cast<float>(x(i, j) - mean[j]);
  }
  const std::vector<double> sigma = test::singular_values(centred.cview());
  PcaOptions o;
  o.scores = true;
  test::HostMatrix<float> left_components;
  for_each_layout(x, [&](const std::string& name, const auto& view, ViewStorage storage) {
    SCOPED_TRACE(name);
    const auto v = pca(Exec(), view, k, o);
    EXPECT_EQ(v.input, expected_input(storage, true, strides(view), "X"));
    ASSERT_EQ(v.components.extent(0), static_cast<std::size_t>(k));
    ASSERT_EQ(v.components.extent(1), static_cast<std::size_t>(n));
    ASSERT_EQ(v.scores.extent(0), static_cast<std::size_t>(m));
    const auto mu = column(v.mean), s = column(v.singular_values);
    for (index_t j = 0; j < n; ++j) EXPECT_NEAR(mu(j, 0), mean[j], 1e-6) << j;
    for (index_t i = 0; i < k; ++i) EXPECT_NEAR(s(i, 0), sigma[i], 1e-3 * sigma[i]) << i;
    const auto c = test::from_kokkos(v.components);
    if (left_components.data.empty()) left_components = c;
    for (std::size_t e = 0; e < c.data.size(); ++e) ASSERT_NEAR(c.data[e], left_components.data[e], 1e-4) << e;
    if (storage == ViewStorage::RowMajor)
      EXPECT_NE(v.report.sketch_kernel.find("row-major: the transpose"), std::string::npos) << v.report.sketch_kernel;
  });
}

// The LRA of a row-major A runs on A^T with X and Y swapped: the same accuracy against the
// Eckart-Young optimum; the factor that recompression leaves orthonormal is Y for a column-major A,
// X for a row-major one (the run's Y).
TEST(Layouts, LraOnEveryLayoutNearTheOptimumWithTheFactorsSwappedForRowMajor) {
  const index_t m = 300, n = 200, k = 10;
  const std::vector<double> sigma = decaying(n);
  const test::HostMatrix<float> a = test::matrix_with_spectrum(m, n, sigma, 5);
  const double optimum = test::eckart_young(sigma, k) / test::eckart_young(sigma, 0);
  LraOptions o;
  o.products = ProductPrecision::fp32();
  o.refinements = 1;
  for_each_layout(a, [&](const std::string& name, const auto& view, ViewStorage storage) {
    SCOPED_TRACE(name);
    const auto r = randomized_lra(Exec(), view, k, o);
    EXPECT_EQ(r.input, expected_input(storage, true, strides(view)));
    ASSERT_EQ(r.X.extent(0), static_cast<std::size_t>(m));
    ASSERT_EQ(r.Y.extent(0), static_cast<std::size_t>(n));
    const auto x = test::from_kokkos(r.X), y = test::from_kokkos(r.Y);
    EXPECT_LE(test::factor_relative_error(a.cview(), x.cview(), y.cview()), 1.1 * optimum);
    // Recompression leaves the second factor of the run orthonormal: Y for A, X for A^T's run.
    EXPECT_LT(test::orthogonality_loss((storage == ViewStorage::RowMajor ? x : y).cview()), 1e-5);
  });
}

// Y = S A for A's samples as columns (D x b) or rows (b x D), in every layout: the FP64 product with
// the same S, whichever way the memory runs.
TEST(Layouts, SparseSignProjectionOnEveryLayoutEqualsTheFp64Product) {
  const index_t d = 600, b = 40, k = 32;
  const test::HostMatrix<float> samples = test::random_matrix(d, b, test::Elements::Normal, 3);  // D x b
  test::HostMatrix<float> by_rows(b, d);
  for (index_t i = 0; i < d; ++i)
    for (index_t c = 0; c < b; ++c) by_rows(c, i) = samples(i, c);
  for (SampleLayout layout : {SampleLayout::Columns, SampleLayout::Rows}) {
    SparseProjectionOptions o;
    o.layout = layout;
    const auto ref = test::sparse_projection_fp64(sparse_sign_operator(k, d, o), samples);
    for_each_layout(layout == SampleLayout::Columns ? samples : by_rows,
                    [&](const std::string& name, const auto& view, ViewStorage storage) {
                      SCOPED_TRACE(name + " " + to_string(layout));
                      const auto r = sparse_sign_projection(Exec(), view, k, o);
                      EXPECT_EQ(r.input, expected_input(storage, true, strides(view)));
                      ASSERT_EQ(r.Y.extent(0), static_cast<std::size_t>(k));
                      ASSERT_EQ(r.Y.extent(1), static_cast<std::size_t>(b));
                      EXPECT_LT(test::relative_error(test::from_kokkos(r.Y), ref), 1e-6);
                    });
  }
}

/// What a QR factorisation's result.input says for a view of `storage`.
std::string expected_qr_input(ViewStorage storage, const std::string& strides, bool form_q = true) {
  if (storage != ViewStorage::RowMajor) return expected_input(storage, false, strides);
  return form_q ? "A: row-major, transposed into Q's memory and factored there"
                : "A: row-major, its rows transposed 8 MiB at a time";
}

// The QR factorisations on every layout: a row-major view transposed into Q's memory (tsqr), or
// orthonormalised in its own memory through its transpose (orthonormalize), others copied; each
// says which, at the column-major call's accuracy.
TEST(Layouts, TsqrAndOrthonormalizeOnEveryLayoutAndSaySo) {
  const index_t m = 400, n = 24;
  const test::HostMatrix<float> a = test::random_matrix(m, n, test::Elements::Normal, 8);
  for_each_layout(a, [&](const std::string& name, const auto& view, ViewStorage storage) {
    SCOPED_TRACE(name);
    const auto t = tsqr(Exec(), view);
    EXPECT_EQ(t.input, expected_qr_input(storage, strides(view)));
    const auto q = test::from_kokkos(t.Q), r = test::from_kokkos(t.R);
    EXPECT_LT(test::relative_error(a, test::reference_gemm(Op::N, Op::N, q, r)), 1e-5);
    EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5);

    const Orthonormalizer used = orthonormalize(Exec(), view);  // in place: the view's own memory
    EXPECT_NE(used, Orthonormalizer::Auto);
    const auto y = test::from_kokkos(view);
    EXPECT_LT(test::orthogonality_loss(y.cview()), 1e-5);
    EXPECT_LT(test::span_residual(a, y), 1e-5);
  });
}

/// max |R_ij| - |R'_ij| over the upper triangle, relative to max |R'_ij|: R factors equal up to
/// the signs of their rows.
double r_difference(const test::HostMatrix<float>& r, const test::HostMatrix<float>& ref) {
  double diff = 0, scale = 0;
  for (index_t j = 0; j < ref.cols; ++j)
    for (index_t i = 0; i <= j; ++i)
      diff = std::max(diff, std::fabs(std::fabs(double(r(i, j))) - std::fabs(double(ref(i, j))))),
      scale = std::max(scale, std::fabs(double(ref(i, j))));
  return diff / scale;
}

// R only of a row-major A taller than one 8 MiB chunk (three chunks of uneven size): the stacked
// chunks' R factored again equals the column-major call's R up to row signs, to FP32 rounding.
TEST(Layouts, TsqrROnlyOfARowMajorAStreamsItsRowsInChunks) {
  const index_t m = 200001, n = 24;  // 8 MiB holds 87381 rows of 24 floats
  const test::HostMatrix<float> a = test::random_matrix(m, n, test::Elements::Normal, 9);
  TsqrOptions r_only;
  r_only.form_q = false;
  const auto right = stored_as<Right>({m, n}, a.data, {n, 1});
  const auto left = stored_as<Left>({m, n}, a.data, {1, m});
  const auto tr = tsqr(Exec(), right.view, r_only), tl = tsqr(Exec(), left.view, r_only);
  EXPECT_EQ(tr.input, expected_qr_input(ViewStorage::RowMajor, "", false));
  EXPECT_EQ(tr.Q.extent(0), 0u);
  EXPECT_GE(tr.report.leaves, 3);
  EXPECT_GE(tr.report.levels, 2);  // the chunks' trees and the stack above them
  EXPECT_LT(r_difference(test::from_kokkos(tr.R), test::from_kokkos(tl.R)), 1e-5);
}

// orthonormalize on a row-major Y runs each method through Y^T and gives the column-major call's Q
// to FP32 rounding (the same Gram matrices, sketches and fallbacks): a well-conditioned Y for the
// CholeskyQR and preconditioned methods, Householder and Tsqr (through an m x l buffer), and an
// ill-conditioned one (cond 1e10) for Auto, which needs a second pass: CholeskyQR2, or the shifted
// CholeskyQR3 where the FP64 Gram sums' rounding (the backend's) breaks CholeskyQR2 down.
TEST(Layouts, OrthonormalizeOfARowMajorYMatchesTheColumnMajorCall) {
  const index_t m = 300, l = 12;
  const test::HostMatrix<float> normal = test::random_matrix(m, l, test::Elements::Normal, 10);
  std::vector<double> sigma(static_cast<std::size_t>(l));
  for (index_t i = 0; i < l; ++i) sigma[i] = std::pow(1e-10, i / (l - 1.0));
  const test::HostMatrix<float> ill = test::matrix_with_spectrum(m, l, sigma, 11);
  const auto run = [&](const test::HostMatrix<float>& y, Orthonormalizer method,
                       std::vector<Orthonormalizer> expected) {
    SCOPED_TRACE(to_string(method));
    const auto right = stored_as<Right>({m, l}, y.data, {l, 1});
    const auto left = stored_as<Left>({m, l}, y.data, {1, m});
    const Orthonormalizer ran = orthonormalize(Exec(), right.view, method);
    EXPECT_NE(std::find(expected.begin(), expected.end(), ran), expected.end()) << to_string(ran);
    EXPECT_EQ(orthonormalize(Exec(), left.view, method), ran);
    const auto qr = test::from_kokkos(right.view), ql = test::from_kokkos(left.view);
    EXPECT_LT(test::orthogonality_loss(qr.cview()), 1e-5);
    test::HostMatrix<double> ref(m, l);
    for (std::size_t e = 0; e < ql.data.size(); ++e) ref.data[e] = ql.data[e];
    EXPECT_LT(test::relative_error(qr, ref), 1e-4);
  };
  for (const Orthonormalizer method : {Orthonormalizer::CholeskyQR2, Orthonormalizer::ShiftedCholeskyQR3,
                                       Orthonormalizer::RandCholeskyQR, Orthonormalizer::RandCholeskyQRSparse,
                                       Orthonormalizer::Householder, Orthonormalizer::Tsqr})
    run(normal, method, {method});
  run(ill, Orthonormalizer::Auto, {Orthonormalizer::CholeskyQR2, Orthonormalizer::ShiftedCholeskyQR3});
}

/// An FP64 tensor (first index fastest) reconstructed from a Tucker result's views, in FP64.
template <class TV>
test::HostTensor reconstruction(const TV& t, int modes) {
  test::HostTensor g;
  for (int k = 0; k < modes; ++k) g.extents.push_back(static_cast<index_t>(t.core.extent(k)));
  auto core = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.core);
  // The core is LayoutLeft: its memory is first index fastest, packed.
  g.data.assign(core.data(), core.data() + core.size());
  for (int k = 0; k < modes; ++k) {
    const auto q = test::from_kokkos(t.Q[k]);
    g = test::mode_product(g, k, std::vector<double>(q.data.begin(), q.data.end()), q.rows);
  }
  return g;
}

double relative_difference(const test::HostTensor& x, const test::HostTensor& ref) {
  double num = 0, den = 0;
  for (std::size_t e = 0; e < ref.data.size(); ++e)
    num += (x.data[e] - ref.data[e]) * (x.data[e] - ref.data[e]), den += ref.data[e] * ref.data[e];
  return std::sqrt(num / den);
}

template <class View>
void expect_tucker_recovers(const test::HostTensor& t, const std::vector<index_t>& ranks,
                            const std::vector<index_t>& layout_strides, const std::string& input) {
  SCOPED_TRACE(input);
  const std::vector<float> data(t.data.begin(), t.data.end());
  const auto a = stored_as<View>(t.extents, data, layout_strides);
  const auto r = rp_hosvd(Exec(), a.view, ranks);
  EXPECT_EQ(r.input, input);
  const int modes = static_cast<int>(t.extents.size());
  ASSERT_EQ(r.Q.size(), t.extents.size());
  for (int k = 0; k < modes; ++k) {
    EXPECT_EQ(static_cast<index_t>(r.core.extent(k)), ranks[k]) << k;
    EXPECT_EQ(static_cast<index_t>(r.Q[k].extent(0)), t.extents[k]) << k;
    EXPECT_LT(test::orthogonality_loss(test::from_kokkos(r.Q[k]).cview()), 1e-5) << k;
  }
  EXPECT_LT(relative_difference(reconstruction(r, modes), t), 1e-5);
}

// The paper's tensors (multilinear rank J_i - 2) recovered to FP32 rounding from LayoutRight
// tensors (read as the reversed LayoutLeft tensor), a LayoutStride one packed in another mode order,
// and a padded one (copied), with the core and the factors in the caller's mode order.
TEST(Layouts, RpHosvdOnLayoutRightAndStridedTensorsInTheCallersModeOrder) {
  const test::HostTensor t3 = test::paper_tensor({20, 16, 12}, {6, 5, 4}, 2, 7);
  const std::vector<index_t> r3 = {6, 5, 4};
  expect_tucker_recovers<Kokkos::View<float***, Kokkos::LayoutLeft, Space>>(t3, r3, {1, 20, 320},
                                                                            "A: read in place, modes in the order (0, 1, 2)");
  expect_tucker_recovers<Kokkos::View<float***, Kokkos::LayoutRight, Space>>(t3, r3, {192, 12, 1},
                                                                             "A: read in place, modes in the order (2, 1, 0)");
  expect_tucker_recovers<Kokkos::View<float***, Kokkos::LayoutStride, Space>>(t3, r3, {16, 1, 320},
                                                                              "A: read in place, modes in the order (1, 0, 2)");
  expect_tucker_recovers<Kokkos::View<float***, Kokkos::LayoutStride, Space>>(t3, r3, {1, 21, 21 * 16},
                                                                              "A: copied to LayoutLeft (strides (1, 21, 336))");
  const test::HostTensor t4 = test::paper_tensor({12, 10, 9, 8}, {5, 4, 4, 3}, 2, 9);
  expect_tucker_recovers<Kokkos::View<float****, Kokkos::LayoutRight, Space>>(
      t4, {5, 4, 4, 3}, {720, 72, 8, 1}, "A: read in place, modes in the order (3, 2, 1, 0)");
}

}  // namespace
}  // namespace randnla
