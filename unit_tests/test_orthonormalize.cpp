// Orthonormalisers: orthogonality, span, and the breakdown fallback.
#include <cmath>

#include "backends.hpp"
#include "orthonormalize.hpp"
#include "test_support.hpp"

namespace randnla {
namespace {

// Y = U diag(sigma) V^T with sigma from 1 down to 1/cond.
test::HostMatrix<float> graded(index_t m, index_t l, double cond) {
  std::vector<double> sigma(static_cast<std::size_t>(l));
  for (index_t i = 0; i < l; ++i) sigma[i] = std::pow(cond, -static_cast<double>(i) / (l - 1));
  return test::matrix_with_spectrum(m, l, sigma, 99);
}

// ||Y - Q Q^T Y||_F / ||Y||_F: Q spans Y.
double span_residual(const test::HostMatrix<float>& y, const test::HostMatrix<float>& q) {
  const auto qty = test::reference_gemm(Op::T, Op::N, q, y);
  test::HostMatrix<float> qtyf(qty.rows, qty.cols);
  for (std::size_t i = 0; i < qty.data.size(); ++i) qtyf.data[i] = static_cast<float>(qty.data[i]);
  const auto proj = test::reference_gemm(Op::N, Op::N, q, qtyf);
  test::HostMatrix<double> yd(y.rows, y.cols);
  for (std::size_t i = 0; i < y.data.size(); ++i) yd.data[i] = y.data[i];
  test::HostMatrix<float> pf(proj.rows, proj.cols);
  for (std::size_t i = 0; i < proj.data.size(); ++i) pf.data[i] = static_cast<float>(proj.data[i]);
  return test::relative_error(pf, yd);
}

TEST(Orthonormalize, EachMethodOnWellConditionedInput) {
  auto b = make_backend(BackendKind::Host);
  const auto y = graded(2000, 40, 1e3);
  for (auto method : {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR2,
                      Orthonormalizer::ShiftedCholeskyQR3}) {
    auto q = y;
    EXPECT_EQ(orthonormalize(*b, q.view(), method), method);
    EXPECT_LT(test::orthogonality_loss(q.cview()), 5e-6) << to_string(method);
    EXPECT_LT(span_residual(y, q), 1e-5) << to_string(method);
  }
}

TEST(Orthonormalize, IllConditionedCholeskyQRBreaksDownAndFallsBack) {
  auto b = make_backend(BackendKind::Host);
  auto y = graded(1500, 30, 1e12);  // Gram matrix cond 1e24: FP64 Cholesky fails
  for (index_t i = 0; i < y.rows; ++i) y(i, 29) = y(i, 28);  // exactly rank deficient too
  auto q = y;
  const Orthonormalizer used = orthonormalize(*b, q.view(), Orthonormalizer::CholeskyQR2);
  EXPECT_NE(used, Orthonormalizer::CholeskyQR2);
  EXPECT_LT(test::orthogonality_loss(q.cview()), 1e-5) << to_string(used);
}

TEST(Orthonormalize, RejectsWideInputAndParsesNames) {
  auto b = make_backend(BackendKind::Host);
  test::HostMatrix<float> wide(3, 5);
  EXPECT_THROW(orthonormalize(*b, wide.view(), Orthonormalizer::Householder), InvalidArgument);
  EXPECT_EQ(parse_orthonormalizer("scholqr3"), Orthonormalizer::ShiftedCholeskyQR3);
  EXPECT_THROW(parse_orthonormalizer("qr"), InvalidArgument);
}

}  // namespace
}  // namespace randnla
