#include "orthonormalize.hpp"

#include <cmath>
#include <limits>

namespace randnla {

const char* to_string(Orthonormalizer o) {
  switch (o) {
    case Orthonormalizer::Householder: return "householder";
    case Orthonormalizer::CholeskyQR: return "cholqr";
    case Orthonormalizer::CholeskyQR2: return "cholqr2";
    case Orthonormalizer::ShiftedCholeskyQR3: return "scholqr3";
    default: return "auto";
  }
}

Orthonormalizer parse_orthonormalizer(const std::string& text, const std::string& parameter) {
  for (auto o : {Orthonormalizer::Householder, Orthonormalizer::CholeskyQR, Orthonormalizer::CholeskyQR2,
                 Orthonormalizer::ShiftedCholeskyQR3, Orthonormalizer::Auto})
    if (text == to_string(o)) return o;
  throw InvalidArgument(parameter, text, "must be householder, cholqr, cholqr2, scholqr3 or auto");
}

namespace {

constexpr double kFp32UnitRoundoff = 0x1p-24;

Matrix<double> gram(Backend& b, MatrixView<const double> yd) {
  Matrix<double> g(b, yd.cols(), yd.cols(), "G");
  b.gemm(Op::T, Op::N, 1.0, yd, yd, 0.0, g);
  return g;
}

/// yd := yd R^{-1} with R^T R = g (g is overwritten by R); false on a breakdown.
bool cholesky_qr_step(Backend& b, MatrixView<double> g, MatrixView<double> yd) {
  if (b.cholesky_upper(g) != 0) return false;
  b.solve_right_upper(g, yd);
  return true;
}

/// ||G - I||_F; G is left as it was (G ~ I, so subtracting and adding 1 back is exact on its diagonal).
double distance_from_identity(Backend& b, MatrixView<double> g) {
  b.add_to_diagonal(g, -1.0);
  const double d = b.frobenius_norm(MatrixView<const double>(g));
  b.add_to_diagonal(g, 1.0);
  return d;
}

bool finite(Backend& b, MatrixView<const float> y) { return b.exponent_histogram(y).nonfinite() == 0; }

/// CholeskyQR in FP64, `passes` passes, or with passes = 0 one pass and a second when the first
/// left ||Q^T Q - I||_F > 2^-24; after a shifted first pass when `shifted`. Y is overwritten only
/// on success. Returns the unshifted passes run, 0 on breakdown.
int cholesky_qr(Backend& b, MatrixView<float> y, int passes, bool shifted) {
  const index_t m = y.rows(), l = y.cols();
  Matrix<double> yd(b, m, l, "Y");
  b.convert(y, yd.view());
  if (shifted) {
    // Fukaya, Kannan, Nakatsukasa, Yamamoto, Yanagisawa (2020), Eq. (4.2): s = 11 (mn + n(n+1)) u ||Y||_2^2,
    // with ||Y||_F >= ||Y||_2 and u the FP64 unit roundoff.
    const double norm = b.frobenius_norm(y);
    const double u = std::numeric_limits<double>::epsilon() / 2;
    Matrix<double> g = gram(b, yd);
    b.add_to_diagonal(g, 11.0 * (static_cast<double>(m) * l + static_cast<double>(l) * (l + 1)) * u * norm * norm);
    if (!cholesky_qr_step(b, g, yd)) return 0;
  }
  const bool adaptive = passes == 0;
  int ran = 0;
  for (int p = 0; p < (adaptive ? 2 : passes); ++p) {
    Matrix<double> g = gram(b, yd);
    if (adaptive && p == 1 && distance_from_identity(b, g) <= kFp32UnitRoundoff) break;
    if (!cholesky_qr_step(b, g, yd)) return 0;
    ++ran;
  }
  Matrix<float> q(b, m, l, "Q");
  b.convert(yd.view(), q.view());
  if (!finite(b, q)) return 0;
  b.copy(q.view(), y);
  return ran;
}

}  // namespace

Orthonormalizer orthonormalize(Backend& backend, MatrixView<float> y, Orthonormalizer method) {
  require(y.rows() >= y.cols(), "Y.rows", y.rows(), "must be >= Y.cols = " + std::to_string(y.cols()));
  if (y.cols() == 0) return method;
  if (method != Orthonormalizer::Householder && method != Orthonormalizer::ShiftedCholeskyQR3) {
    const int asked = method == Orthonormalizer::CholeskyQR ? 1 : method == Orthonormalizer::CholeskyQR2 ? 2 : 0;
    const int ran = cholesky_qr(backend, y, asked, false);
    if (ran == 1) return Orthonormalizer::CholeskyQR;
    if (ran == 2) return Orthonormalizer::CholeskyQR2;
  }
  if (method != Orthonormalizer::Householder && cholesky_qr(backend, y, 2, true) > 0)
    return Orthonormalizer::ShiftedCholeskyQR3;
  backend.householder_q(y);
  return Orthonormalizer::Householder;
}

}  // namespace randnla
