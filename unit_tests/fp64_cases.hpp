// The FP64 checks that the host suite (test_fp64) and the GPU suite (test_gpu_fp64) run on their
// backends: FP64 orthonormalisation and the RSVD of FP64 data against FP64 references built on the
// host (orthonormal factors by Gram-Schmidt twice, known singular values).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/rsvd/rsvd.hpp"
#include "test_support.hpp"

namespace randnla {
namespace fp64_test {

/// A column-major FP64 host matrix.
struct Dense {
  index_t rows = 0, cols = 0;
  std::vector<double> data;
  Dense(index_t m, index_t n) : rows(m), cols(n), data(static_cast<std::size_t>(m * n)) {}
  double& operator()(index_t i, index_t j) { return data[static_cast<std::size_t>(i + j * rows)]; }
  double operator()(index_t i, index_t j) const { return data[static_cast<std::size_t>(i + j * rows)]; }
  MatrixView<const double> view() const { return {data.data(), rows, cols, rows, MemorySpace::Host, "A"}; }
};

inline Dense gaussian(index_t m, index_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal;
  Dense a(m, n);
  for (double& x : a.data) x = normal(gen);
  return a;
}

/// Orthonormal columns: Gram-Schmidt twice on a Gaussian matrix, in FP64 (orthogonal to ~1e-15).
inline Dense orthonormal(index_t m, index_t n, unsigned seed) {
  Dense q = gaussian(m, n, seed);
  for (index_t j = 0; j < n; ++j)
    for (int pass = 0; pass < 2; ++pass) {
      for (index_t i = 0; i < j; ++i) {
        double dot = 0;
        for (index_t r = 0; r < m; ++r) dot += q(r, i) * q(r, j);
        for (index_t r = 0; r < m; ++r) q(r, j) -= dot * q(r, i);
      }
      double norm = 0;
      for (index_t r = 0; r < m; ++r) norm += q(r, j) * q(r, j);
      for (index_t r = 0; r < m; ++r) q(r, j) /= std::sqrt(norm);
    }
  return q;
}

/// A = P diag(sigma) R^T (m x n), P and R orthonormal.
inline Dense with_spectrum(index_t m, index_t n, const std::vector<double>& sigma, unsigned seed) {
  const index_t r = static_cast<index_t>(sigma.size());
  const Dense p = orthonormal(m, r, seed), q = orthonormal(n, r, seed + 1);
  Dense a(m, n);
  for (index_t t = 0; t < r; ++t)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) a(i, j) += p(i, t) * sigma[t] * q(j, t);
  return a;
}

inline Matrix<double> on(Backend& b, const Dense& a) {
  Matrix<double> m(b, a.rows, a.cols, "A");
  b.copy(a.view(), m.view());
  return m;
}

inline Dense on_host(Backend& b, MatrixView<const double> x) {
  Dense h(x.rows(), x.cols());
  b.copy(x, MatrixView<double>(h.data.data(), h.rows, h.cols, h.rows, MemorySpace::Host));
  return h;
}

/// ||Q^T Q - I||_F.
inline double orthogonality_loss(const Dense& q) {
  double sum = 0;
  for (index_t i = 0; i < q.cols; ++i)
    for (index_t j = 0; j < q.cols; ++j) {
      double dot = 0;
      for (index_t r = 0; r < q.rows; ++r) dot += q(r, i) * q(r, j);
      sum += (dot - (i == j)) * (dot - (i == j));
    }
  return std::sqrt(sum);
}

/// ||A - U diag(S) V^T||_F / ||A||_F.
inline double reconstruction_error(const Dense& a, const Dense& u, const Dense& s, const Dense& v) {
  double num = 0, den = 0;
  for (index_t j = 0; j < a.cols; ++j)
    for (index_t i = 0; i < a.rows; ++i) {
      double x = a(i, j);
      for (index_t t = 0; t < s.rows; ++t) x -= u(i, t) * s(t, 0) * v(j, t);
      num += x * x, den += a(i, j) * a(i, j);
    }
  return std::sqrt(num / den);
}

/// ||Y - Q Q^T Y||_F / ||Y||_F: how much of range(Y) Q misses.
inline double span_residual(const Dense& y, const Dense& q) {
  double num = 0, den = 0;
  for (index_t j = 0; j < y.cols; ++j) {
    std::vector<double> c(static_cast<std::size_t>(q.cols));
    for (index_t t = 0; t < q.cols; ++t)
      for (index_t r = 0; r < y.rows; ++r) c[t] += q(r, t) * y(r, j);
    for (index_t r = 0; r < y.rows; ++r) {
      double x = y(r, j);
      for (index_t t = 0; t < q.cols; ++t) x -= q(r, t) * c[t];
      num += x * x, den += y(r, j) * y(r, j);
    }
  }
  return std::sqrt(num / den);
}

/// geometric spectrum from 1 down to `smallest` over n values.
inline std::vector<double> geometric(index_t n, double smallest) {
  std::vector<double> s(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) s[i] = std::pow(smallest, i / (n - 1.0));
  return s;
}

/// Every method on a well-conditioned Y, Auto on cond 1e12: Q orthonormal to FP64 rounding and
/// spanning Y's range; the method that ran as expected.
inline void check_orthonormalize(Backend& b) {
  const index_t m = 600, l = 40;
  const Dense normal = gaussian(m, l, 3), ill = with_spectrum(m, l, geometric(l, 1e-12), 4);
  const auto run = [&](const Dense& y, Orthonormalizer method, Orthonormalizer expected, double span_bound) {
    SCOPED_TRACE(to_string(method));
    Matrix<double> q = on(b, y);
    EXPECT_EQ(orthonormalize(b, q.view(), method), expected);
    const Dense h = on_host(b, q.view());
    EXPECT_LT(orthogonality_loss(h), 1e-13);
    EXPECT_LT(span_residual(y, h), span_bound);
  };
  run(normal, Orthonormalizer::Auto, Orthonormalizer::CholeskyQR2, 1e-14);
  run(normal, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR, 1e-14);
  run(normal, Orthonormalizer::ShiftedCholeskyQR3, Orthonormalizer::ShiftedCholeskyQR3, 1e-14);
  run(normal, Orthonormalizer::RandCholeskyQR, Orthonormalizer::RandCholeskyQR, 1e-14);
  run(normal, Orthonormalizer::Householder, Orthonormalizer::Householder, 1e-14);
  run(normal, Orthonormalizer::Tsqr, Orthonormalizer::Householder, 1e-14);  // the tree is FP32
  run(ill, Orthonormalizer::Auto, Orthonormalizer::ShiftedCholeskyQR3, 1e-14);
}

/// The RSVD of FP64 data A = P diag(sigma) R^T: factors, singular values and the error estimate.
struct Fp64Rsvd {
  Dense u, s, v;
  double estimate;
};

inline Fp64Rsvd rsvd_of(Backend& b, const Dense& a, index_t k, const RsvdOptions& o = {}) {
  const RsvdResultOf<double> r = rsvd(b, on(b, a).view(), k, o);
  return {on_host(b, r.U.view()), on_host(b, r.S.view()), on_host(b, r.V.view()), r.report.relative_error_estimate};
}

/// The error of the RSVD of FP64 data on an exactly rank-k A of singular values sigma_1 .. sigma_k:
/// the small SVD through the Gram matrix leaves the dropped l - k columns of R coupled to the
/// kept rows at about 2^-53 sigma_1^2 / sigma_i (svd_through_gram.hpp), so the truncation costs
/// about 2^-53 sigma_1 / sigma_k relative (1.1e-13 at 1e3 measured on one host BLAS); 4x that.
inline double exact_rank_bound(const std::vector<double>& sigma) { return 4 * 0x1p-53 * sigma.front() / sigma.back(); }

/// An exactly rank-12 FP64 matrix recovered to FP64 rounding (an RSVD of A rounded to FP32 stops at
/// FP32's 1e-7), U and V orthonormal to FP64 rounding, the singular values to 1e-13 relative.
inline void check_rsvd_exact_rank(Backend& b) {
  const index_t m = 500, n = 300, r = 12;
  const std::vector<double> sigma = geometric(r, 1e-3);
  const Dense a = with_spectrum(m, n, sigma, 5);
  const Fp64Rsvd f = rsvd_of(b, a, r);
  EXPECT_LT(reconstruction_error(a, f.u, f.s, f.v), exact_rank_bound(sigma));
  EXPECT_LT(orthogonality_loss(f.u), 1e-13);
  EXPECT_LT(orthogonality_loss(f.v), 1e-13);
  for (index_t i = 0; i < r; ++i) EXPECT_NEAR(f.s(i, 0), sigma[i], 1e-13 * sigma[0]) << i;
  EXPECT_LT(f.estimate, 1e-6);  // the estimate's own cancellation floor, about sqrt(2^-53)
}

/// A decaying spectrum whose tail lies below FP32's rounding (sigma_i = 1 for i < 16, then 1e-10):
/// the error is the Eckart-Young optimum's, sqrt(sum of the tail's squares) / ||A||_F, to 1%.
inline void check_rsvd_meets_the_optimum(Backend& b) {
  const index_t m = 400, n = 260, k = 16;
  std::vector<double> sigma(static_cast<std::size_t>(n), 1e-10);
  for (index_t i = 0; i < k; ++i) sigma[i] = std::pow(0.8, i);
  const Dense a = with_spectrum(m, n, sigma, 6);
  double tail = 0, all = 0;
  for (index_t i = 0; i < n; ++i) all += sigma[i] * sigma[i], tail += i >= k ? sigma[i] * sigma[i] : 0.0;
  const double optimum = std::sqrt(tail / all);
  const Fp64Rsvd f = rsvd_of(b, a, k);
  EXPECT_LT(reconstruction_error(a, f.u, f.s, f.v), 1.01 * optimum);
  EXPECT_GT(reconstruction_error(a, f.u, f.s, f.v), 0.99 * optimum);  // the reference holds
}

/// Entries near FP64's extremes (1e200, 1e-200 times a matrix of norm ~1) scaled into FP32's range
/// for the sketch: the same singular values, scaled, to FP64 accuracy. Non-finite entries refused.
inline void check_rsvd_range_and_bad_input(Backend& b) {
  const index_t m = 200, n = 150, k = 8;
  const Dense a = with_spectrum(m, n, geometric(k, 1e-2), 7);
  const Fp64Rsvd base = rsvd_of(b, a, k);
  for (double scale : {1e200, 1e-200}) {
    SCOPED_TRACE(scale);
    Dense scaled = a;
    for (double& x : scaled.data) x *= scale;
    Fp64Rsvd f = rsvd_of(b, scaled, k);
    for (double& x : f.s.data) x /= scale;  // the reference's squares would leave FP64's range
    for (index_t i = 0; i < k; ++i) EXPECT_NEAR(f.s(i, 0), base.s(i, 0), 1e-13 * base.s(0, 0)) << i;
    EXPECT_LT(reconstruction_error(a, f.u, f.s, f.v), 1e-13);
    EXPECT_LT(f.estimate, 1e-6);  // exactly rank k: only the estimate's cancellation (about sqrt(2^-53))
  }
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    Dense x = a;
    x(3, 4) = bad;
    const std::string message = test::invalid_argument_message([&] { rsvd(b, on(b, x).view(), k); });
    EXPECT_NE(message.find("A"), std::string::npos) << message;
    EXPECT_NE(message.find("finite"), std::string::npos) << message;
  }
}

}  // namespace fp64_test
}  // namespace randnla
