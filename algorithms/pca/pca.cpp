#include "pca.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "randnla/common/checks.hpp"
#include "randnla/common/linear_operator.hpp"
#include "pca_of_operator.hpp"
#include "randnla/rsvd/rsvd_of_operator.hpp"

namespace randnla {
namespace {

/// X (m x n) as it is stored: `s` holds X (op N) or X^T (op T, X row-major): X = op(s).
struct Samples {
  MatrixView<const float> s;
  Op op;
  index_t rows() const { return op == Op::N ? s.rows() : s.cols(); }
  index_t cols() const { return op == Op::N ? s.cols() : s.rows(); }
  /// Samples (rows of X) i0 .. i0 + count - 1, as the block of s that holds them.
  MatrixView<const float> samples(index_t i0, index_t count) const {
    return op == Op::N ? s.block(i0, 0, count, s.cols()) : s.block(0, i0, s.rows(), count);
  }
  /// How far apart in s two consecutive samples start.
  index_t sample_stride() const { return op == Op::N ? 1 : s.ld(); }
};

Op transposed(Op op) { return op == Op::N ? Op::T : Op::N; }

std::vector<float> to_host(Backend& b, MatrixView<const float> column) {
  std::vector<float> h(static_cast<std::size_t>(column.rows()));
  b.copy(column, MatrixView<float>(h.data(), column.rows(), 1, std::max<index_t>(column.rows(), 1), MemorySpace::Host));
  return h;
}

Matrix<float> to_output(Backend& b, const std::vector<float>& h, const MatrixAllocator& outputs, const char* name) {
  const index_t n = static_cast<index_t>(h.size());
  Matrix<float> m = outputs(n, 1, name);
  b.copy(MatrixView<const float>(h.data(), n, 1, std::max<index_t>(n, 1), MemorySpace::Host), m.view());
  return m;
}

/// Rows per FP32 partial sum of the mean: each is off by about sqrt(256) = 16 roundings of 2^-24
/// relative (at most 256), where one FP32 sum of all m rows may be off by m roundings (numpy's
/// float32 mean over Fashion-MNIST's 60000 rows is off by 9.5e-5); the partial sums are added in FP64.
constexpr index_t kMeanBlock = 256;

/// mu := X^T 1 / m: one batched FP32 product for the partial sums over blocks of kMeanBlock samples
/// (the blocks of X read in place), added in FP64. A non-finite X makes mu non-finite (IEEE
/// products), so X is scanned only then, to say why: non-finite entries, or sums that overflow FP32.
void column_means(Backend& b, const Samples& x, MatrixView<const float> ones, MatrixView<float> mean) {
  const index_t m = x.rows(), n = x.cols(), full = m / kMeanBlock, rest = m % kMeanBlock;
  const index_t parts = full + (rest > 0 ? 1 : 0);
  const Op op = transposed(x.op);  // op(block) is n x kMeanBlock: X's block transposed
  Matrix<float> partial(b, n, parts, "partial sums");
  const ProductPrecision fp32 = ProductPrecision::fp32();
  if (full > 0)
    b.product_strided_batched(op, Op::N, 1.0f,
                              StridedBatch<const float>{x.samples(0, kMeanBlock), kMeanBlock * x.sample_stride(), full},
                              StridedBatch<const float>{ones.block(0, 0, kMeanBlock, 1), 0, full}, 0.0f,
                              StridedBatch<float>{partial.view().block(0, 0, n, 1), n, full}, fp32);
  if (rest > 0)
    b.product(op, Op::N, 1.0f, x.samples(full * kMeanBlock, rest), ones.block(0, 0, rest, 1), 0.0f,
              partial.view().block(0, full, n, 1), fp32);
  Matrix<double> wide(b, n, parts, "partial sums"), ones64(b, parts, 1, "1"), mean64(b, n, 1, "mu");
  const std::vector<double> host_ones(static_cast<std::size_t>(parts), 1.0);
  b.copy(MatrixView<const double>(host_ones.data(), parts, 1, parts, MemorySpace::Host), ones64.view());
  b.convert(partial, wide.view());
  b.product(Op::N, Op::N, 1.0 / static_cast<double>(m), wide, ones64, 0.0, mean64);
  b.convert(mean64, mean);
  if (b.exponent_histogram(mean).nonfinite() == 0) return;
  const std::int64_t bad = b.exponent_histogram(x.s).nonfinite();
  require(bad == 0, "X", std::to_string(bad) + " non-finite entries", "must be finite");
  throw InvalidArgument("X", "a matrix with ||X||_F = " + detail::to_text(b.frobenius_norm(x.s)),
                        "is too large: its column sums overflow FP32 (scale X down; its components do not change)");
}

PcaResult principal_components(Backend& b, const Samples& x, index_t k, const PcaOptions& o,
                               const MatrixAllocator& out) {
  const index_t m = x.rows(), n = x.cols();
  RsvdResult svd;  // its report, the RSVD's, becomes the PCA's
  svd.report.backend = b.description();
  Stopwatch clock(b, &svd.report.phases, o.progress);
  const Matrix<float> ones = ones_column(b, m);
  Matrix<float> mean = out(n, 1, "mean");
  column_means(b, x, ones, mean);
  const double norm_x = b.frobenius_norm(x.s), squares = centred_squares(norm_x, m, to_host(b, mean));
  clock.lap("mean");

  Products prod(b, o.products);
  DenseOperator xop(prod, x.s, x.op, /*checked=*/true);  // a finite mean vouches for X
  CentredOperator xc(xop, mean, ones, norm_x);
  return pca_of_centred(xc, prod, k, o, std::move(mean), squares, svd, clock, out);
}

PcaResult checked_pca(Backend& b, const Samples& x, index_t k, const PcaOptions& o, const MatrixAllocator& out) {
  require(x.rows() >= 2, "X.rows", x.rows(), "must be >= 2: the variances divide by m - 1 (m samples)");
  require_rank_arguments(x.rows(), x.cols(), k, o.oversampling, o.power_iterations);
  require_space(x.s, b.memory_space(), "X");
  return principal_components(b, x, k, o, out ? out : backend_matrices(b));
}

}  // namespace

Matrix<float> ones_column(Backend& b, index_t m) {
  Matrix<float> ones(b, m, 1, "1");
  const std::vector<float> host_ones(static_cast<std::size_t>(m), 1.0f);
  b.copy(MatrixView<const float>(host_ones.data(), m, 1, std::max<index_t>(m, 1), MemorySpace::Host), ones.view());
  return ones;
}

void CentredOperator::sketch(const RandomOperator& omega, MatrixView<float> y, std::string* kernel) {
  x_.sketch(omega, y, kernel);
  // mu^T Omega = 1^T (X Omega) / m: the correction is Y's column means, however X's sketch stores
  // or applies Omega (FP16 for split products, the sparse sign sketch never stored).
  subtract_outer(ones_, ones_, y, y, 1.0f / static_cast<float>(rows()));
}

void CentredOperator::apply(MatrixView<const float> z, MatrixView<float> y) {
  x_.apply(z, y);
  subtract_outer(ones_, mean_, z, y);
}

Matrix<float> CentredOperator::apply_transpose(MatrixView<const float> y) {
  Matrix<float> z = x_.apply_transpose(y);
  subtract_outer(mean_, ones_, y, z.view());
  return z;
}

bool CentredOperator::check_sketch(MatrixView<const float> y) {
  if (b_.exponent_histogram(y).nonfinite() > 0)
    throw InvalidArgument("X", "a matrix with ||X||_F = " + detail::to_text(norm_x_),
                          "is too large: the sketch (X - 1 mu^T) Omega overflows FP32 (scale X down; its "
                          "components do not change)");
  return true;
}

void CentredOperator::subtract_outer(MatrixView<const float> u, MatrixView<const float> w, MatrixView<const float> bm,
                                     MatrixView<float> c, float alpha) {
  Matrix<float> row(b_, 1, bm.cols(), "w^T B");
  b_.product(Op::T, Op::N, alpha, w, bm, 0.0f, row, ProductPrecision::fp32());
  b_.product(Op::N, Op::N, -1.0f, u, row, 1.0f, c, ProductPrecision::fp32());
}

PcaResult pca_of_operator(LinearOperator& x, double norm_x, index_t k, const PcaOptions& o,
                          const MatrixAllocator& outputs, RsvdResult& svd, Stopwatch& clock) {
  Backend& b = x.backend();
  const MatrixAllocator out = outputs ? outputs : backend_matrices(b);
  const index_t m = x.rows();
  const Matrix<float> ones = ones_column(b, m);
  Matrix<float> mean = x.apply_transpose(ones);
  b.scale(1.0f / static_cast<float>(m), mean.view());
  if (outputs) {  // the mean in the caller's storage
    Matrix<float> given = out(x.cols(), 1, "mean");
    b.copy(mean.view(), given.view());
    mean = std::move(given);
  }
  const double squares = centred_squares(norm_x, m, to_host(b, mean));
  clock.lap("mean");
  Products prod(b, o.products);
  CentredOperator xc(x, mean, ones, norm_x);
  return pca_of_centred(xc, prod, k, o, std::move(mean), squares, svd, clock, out);
}

/// ||X - 1 mu^T||_F^2 = ||X||_F^2 - m ||mu||^2 in FP64 sums, refused where it does not exceed the
/// rounding of m ||mu||^2, 2^-19 m ||mu||^2 (mu off by about 16 roundings of 2^-24, squared).
double centred_squares(double norm_x, index_t rows, const std::vector<float>& mu) {
  const double m = static_cast<double>(rows);
  double mu2 = 0;
  for (float v : mu) mu2 += static_cast<double>(v) * v;
  const double squares = norm_x * norm_x - m * mu2, rounding = std::ldexp(m * mu2, -19);
  if (!(squares > rounding))
    throw InvalidArgument("X", "a matrix with ||X||_F^2 - m ||mu||^2 = " + detail::to_text(squares),
                          squares <= 0 ? "has zero variance: every sample is equal, there is no principal component"
                                       : "has a variance within the FP32 rounding of its mean (" +
                                             detail::to_text(rounding) +
                                             "): its features are constant to FP32 precision (subtract an offset)");
  return squares;
}

PcaResult pca_of_centred(LinearOperator& xc, Products& prod, index_t k, const PcaOptions& o, Matrix<float> mean,
                         double squares, RsvdResult& svd, Stopwatch& clock, const MatrixAllocator& out) {
  Backend& b = xc.backend();
  const index_t m = xc.rows(), n = xc.cols();
  PcaResult res;
  res.mean = std::move(mean);
  res.total_variance = squares / static_cast<double>(m - 1);
  rsvd_of_operator(xc, prod, k, range_options(o), o.small_svd, o.scores, clock, out, svd);

  // scikit-learn's svd_flip(u_based_decision=False): each component's largest entry positive.
  const std::vector<float> s = to_host(b, svd.S), signs = b.signs_of_largest(svd.V);
  Matrix<float> sign(b, k, 1, "signs");
  b.copy(MatrixView<const float>(signs.data(), k, 1, k, MemorySpace::Host), sign.view());
  b.scale_columns(sign, svd.V);
  res.components = out(k, n, "components");
  b.transpose(svd.V, res.components);
  if (o.scores) {  // U diag(S) with the components' signs
    std::vector<float> scaling(s);
    for (index_t j = 0; j < k; ++j) scaling[j] *= signs[j];
    b.copy(MatrixView<const float>(scaling.data(), k, 1, k, MemorySpace::Host), sign.view());
    b.scale_columns(sign, svd.U);
    res.scores = std::move(svd.U);
  }
  std::vector<float> variance(s.size()), ratio(s.size());
  double captured = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double s2 = static_cast<double>(s[i]) * s[i];
    captured += s2;
    variance[i] = static_cast<float>(s2 / static_cast<double>(m - 1));
    ratio[i] = static_cast<float>(s2 / squares);
  }
  res.singular_values = std::move(svd.S);
  res.explained_variance = to_output(b, variance, out, "explained_variance");
  res.explained_variance_ratio = to_output(b, ratio, out, "explained_variance_ratio");
  svd.report.relative_error_estimate = std::sqrt(std::max(squares - captured, 0.0) / squares);
  clock.lap("signs");
  clock.finish();
  res.report = std::move(svd.report);
  return res;
}

PcaResult pca(Backend& b, MatrixView<const float> x, index_t k, const PcaOptions& o, const MatrixAllocator& out) {
  return checked_pca(b, Samples{x, Op::N}, k, o, out);
}

PcaResult pca(Backend& b, Transposed<const float> x, index_t k, const PcaOptions& o, const MatrixAllocator& out) {
  return checked_pca(b, Samples{x.stored, Op::T}, k, o, out);
}

}  // namespace randnla
