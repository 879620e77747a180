#include "orthonormalize.hpp"

#include <cmath>
#include <limits>

namespace randnla {

const char* to_string(Orthonormalizer o) {
  switch (o) {
    case Orthonormalizer::Householder: return "householder";
    case Orthonormalizer::CholeskyQR: return "cholqr";
    case Orthonormalizer::CholeskyQR2: return "cholqr2";
    default: return "scholqr3";
  }
}

Orthonormalizer parse_orthonormalizer(const std::string& text, const std::string& parameter) {
  for (auto o : {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR2,
                 Orthonormalizer::ShiftedCholeskyQR3})
    if (text == to_string(o)) return o;
  throw InvalidArgument(parameter, text, "must be householder, cholqr, cholqr2 or scholqr3");
}

namespace {

/// One CholeskyQR pass in FP64: yd := yd R^{-1}, R^T R = yd^T yd + shift I.
/// Returns false on a breakdown (non-positive pivot, or a non-finite result).
bool cholesky_qr_pass(Backend& b, MatrixView<double> yd, double shift) {
  const index_t l = yd.cols();
  Matrix<double> g(b, l, l, "G");
  b.gemm(Op::T, Op::N, 1.0, yd, yd, 0.0, g);
  if (shift > 0.0) b.add_to_diagonal(g, shift);
  if (b.cholesky_upper(g) != 0) return false;
  b.solve_right_upper(g, yd);
  return true;
}

bool finite(Backend& b, MatrixView<const float> y) { return b.exponent_histogram(y).nonfinite() == 0; }

/// Runs `passes` CholeskyQR passes (the first shifted when `shifted`) in FP64; false on breakdown.
bool cholesky_qr(Backend& b, MatrixView<float> y, int passes, bool shifted) {
  const index_t m = y.rows(), l = y.cols();
  Matrix<double> yd(b, m, l, "Y");
  b.convert(y, yd.view());
  if (shifted) {
    // Fukaya, Kannan, Nakatsukasa, Yamamoto, Yanagisawa (2020), Eq. (4.2): s = 11 (mn + n(n+1)) u ||Y||_2^2,
    // with ||Y||_F >= ||Y||_2 and u the FP64 unit roundoff.
    const double norm = b.frobenius_norm(y);
    const double u = std::numeric_limits<double>::epsilon() / 2;
    const double shift = 11.0 * (static_cast<double>(m) * l + static_cast<double>(l) * (l + 1)) * u * norm * norm;
    if (!cholesky_qr_pass(b, yd, shift)) return false;
  }
  for (int p = 0; p < passes; ++p)
    if (!cholesky_qr_pass(b, yd, 0.0)) return false;
  Matrix<float> q(b, m, l, "Q");
  b.convert(yd.view(), q.view());
  if (!finite(b, q)) return false;
  b.copy(q.view(), y);
  return true;
}

}  // namespace

Orthonormalizer orthonormalize(Backend& backend, MatrixView<float> y, Orthonormalizer method) {
  require(y.rows() >= y.cols(), "Y.rows", y.rows(), "must be >= Y.cols = " + std::to_string(y.cols()));
  if (y.cols() == 0) return method;
  switch (method) {
    case Orthonormalizer::CholeskyQR:
      if (cholesky_qr(backend, y, 1, false)) return method;
      [[fallthrough]];
    case Orthonormalizer::CholeskyQR2:
      if (method == Orthonormalizer::CholeskyQR2 && cholesky_qr(backend, y, 2, false)) return method;
      [[fallthrough]];
    case Orthonormalizer::ShiftedCholeskyQR3:
      if (cholesky_qr(backend, y, 2, true)) return Orthonormalizer::ShiftedCholeskyQR3;
      [[fallthrough]];
    case Orthonormalizer::Householder:
      backend.householder_q(y);
      return Orthonormalizer::Householder;
  }
  return method;
}

}  // namespace randnla
