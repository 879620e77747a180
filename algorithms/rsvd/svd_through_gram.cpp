#include "svd_through_gram.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "randnla/orthonormalize/cholesky_step.hpp"

namespace randnla {
namespace {

/// The diagonal of the n x n matrix X, on the host.
std::vector<double> host_diagonal(Backend& b, MatrixView<const double> x) {
  const index_t n = x.rows();
  std::vector<double> all(static_cast<std::size_t>(n * n)), d(static_cast<std::size_t>(n));
  b.copy(x, MatrixView<double>(all.data(), n, n, n, MemorySpace::Host));
  for (index_t i = 0; i < n; ++i) d[i] = all[i + i * n];
  return d;
}

/// s := sqrt(max(w, 0)) in s's precision (w: the eigenvalues of A^T A, descending).
template <class T>
void singular_values(Backend& b, MatrixView<const double> w, MatrixView<T> s) {
  const index_t n = w.rows();
  std::vector<double> hw(static_cast<std::size_t>(n));
  b.copy(w, MatrixView<double>(hw.data(), n, 1, n, MemorySpace::Host));
  std::vector<T> hs(hw.size());
  for (std::size_t i = 0; i < hw.size(); ++i) hs[i] = static_cast<T>(std::sqrt(std::max(hw[i], 0.0)));
  b.copy(MatrixView<const T>(hs.data(), n, 1, n, MemorySpace::Host), s);
}

/// x := u in FP64 (converted from FP32 or copied), and back in u's precision.
void write_rows(Backend& b, MatrixView<const double> x, MatrixView<float> u) { b.convert(x, u); }
void write_rows(Backend& b, MatrixView<const double> x, MatrixView<double> u) { b.copy(x, u); }
void read_rows(Backend& b, MatrixView<const float> u, MatrixView<double> x) { b.convert(u, x); }
void read_rows(Backend& b, MatrixView<const double> u, MatrixView<double> x) { b.copy(u, x); }

/// U in FP64, read as it is or converted from FP32.
template <class T>
Matrix<double> fp64_of(Backend& b, MatrixView<const T> u) {
  Matrix<double> ud(b, u.rows(), u.cols(), "U");
  read_rows(b, u, ud.view());
  return ud;
}

/// Householder QR leaves R's diagonal with LAPACK's signs: flip the columns of U whose
/// u_j^T (A V)_j is negative, so that A V = U R with R's diagonal positive, as CholeskyQR gives.
template <class T>
void make_diagonal_positive(Backend& b, MatrixView<const double> av, MatrixView<T> u) {
  const index_t n = u.cols();
  const Matrix<double> ud = fp64_of(b, MatrixView<const T>(u));
  Matrix<double> r(b, n, n, "R");
  b.product(Op::T, Op::N, 1.0, ud, av, 0.0, r);
  const std::vector<double> d = host_diagonal(b, r);
  std::vector<T> sign(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) sign[i] = d[i] < 0 ? T(-1) : T(1);
  Matrix<T> sg(b, n, 1, "sign");
  b.copy(MatrixView<const T>(sign.data(), n, 1, n, MemorySpace::Host), sg.view());
  b.scale_columns(sg, u);
}

/// The rows of U formed at a time: all of them up to 64 MiB in FP64, else blocks of rows of
/// 64 MiB at most (products of 30000 x 272 by 272 x 272 keep a GPU busy).
index_t rows_per_block(index_t m, index_t n) {
  constexpr double kBlockBytes = 64.0 * (1 << 20);
  const double row_bytes = 8.0 * static_cast<double>(std::max<index_t>(n, 1));
  return std::max<index_t>(1, std::min<index_t>(m, static_cast<index_t>(kBlockBytes / row_bytes)));
}

/// Sweeps over U's rows, a block at a time through two FP64 buffers of rows_per_block rows: U := X M
/// in U's precision with G := (X M)^T (X M) summed in FP64 before U's rounding (the next
/// CholeskyQR pass's Gram matrix, without another sweep).
template <class T>
class RowSweeps {
 public:
  RowSweeps(Backend& b, MatrixView<T> u)
      : b_(b), u_(u), rows_(rows_per_block(u.rows(), u.cols())), in_(b, rows_, u.cols(), "rows of U in FP64"),
        out_(b, rows_, u.cols(), "rows of U, multiplied") {}
  /// U := X M, X = A (m x n, FP64).
  void multiply(MatrixView<const double> x, MatrixView<const double> mm, MatrixView<double> g) {
    sweep(mm, g, [&](index_t i0, index_t r) { return x.block(i0, 0, r, x.cols()); });
  }
  /// U := U R.
  void multiply_in_place(MatrixView<const double> r, MatrixView<double> g) {
    sweep(r, g, [&](index_t i0, index_t r_rows) {
      const MatrixView<double> rows = in_.view().block(0, 0, r_rows, u_.cols());
      read_rows(b_, MatrixView<const T>(u_.block(i0, 0, r_rows, u_.cols())), rows);
      return MatrixView<const double>(rows);
    });
  }

 private:
  template <class RowsOfX>
  void sweep(MatrixView<const double> mm, MatrixView<double> g, RowsOfX rows_of_x) {
    const index_t m = u_.rows(), n = u_.cols();
    for (index_t i0 = 0; i0 < m; i0 += rows_) {
      const index_t r = std::min(rows_, m - i0);
      const MatrixView<double> product = out_.view().block(0, 0, r, n);
      b_.product(Op::N, Op::N, 1.0, rows_of_x(i0, r), mm, 0.0, product);
      b_.product(Op::T, Op::N, 1.0, MatrixView<const double>(product), product, i0 == 0 ? 0.0 : 1.0, g);
      write_rows(b_, product, u_.block(i0, 0, r, n));
    }
  }
  Backend& b_;
  MatrixView<T> u_;
  index_t rows_;
  Matrix<double> in_, out_;
};

/// V D, D = diag(1/s) where s = sqrt(w) > 0 (1 elsewhere): A V D has unit columns.
Matrix<double> scaled_eigenvectors(Backend& b, MatrixView<const double> v, MatrixView<const double> w) {
  const index_t n = w.rows();
  std::vector<double> hw(static_cast<std::size_t>(n));
  b.copy(w, MatrixView<double>(hw.data(), n, 1, n, MemorySpace::Host));
  for (double& x : hw) x = x > 0 ? 1.0 / std::sqrt(x) : 1.0;
  Matrix<double> d(b, n, 1, "1/s"), vd(b, n, n, "V D");
  b.copy(MatrixView<const double>(hw.data(), n, 1, n, MemorySpace::Host), d.view());
  b.copy(v, vd.view());
  b.scale_columns(d, vd.view());
  return vd;
}

/// U := D-scaled columns of U (d FP64), in U's precision.
void scale_columns(Backend& b, MatrixView<const double> d, MatrixView<double> u) { b.scale_columns(d, u); }
void scale_columns(Backend& b, MatrixView<const double> d, MatrixView<float> u) {
  Matrix<float> d32(b, d.rows(), 1, "D");
  b.convert(d, d32.view());
  b.scale_columns(d32, u);
}

/// U := orth(A V) in U's precision, streamed through U's memory: U = A V D (A V's columns have the
/// norms s), then CholeskyQR passes on U in place (cholesky_step) until its equilibrated Gram
/// matrix is I to U's unit roundoff, at most two. No FP64 matrix of A's size besides A (A V and a
/// pass's output were two: 60 GB at 14.3M x 266). Returns what ran, or nothing (U then
/// unspecified) on a breakdown or a U that is no basis (||U||_F above 2 sqrt(n)).
template <class T>
std::optional<Orthonormalizer> streamed_cholesky_qr(Backend& b, MatrixView<const double> ad,
                                                    MatrixView<const double> v, MatrixView<const double> w,
                                                    MatrixView<T> u) {
  const index_t n = ad.cols();
  RowSweeps<T> sweeps(b, u);
  Matrix<double> g(b, n, n, "G of U"), d(b, n, 1, "D"), rinv(b, n, n, "R^-1");
  sweeps.multiply(ad, scaled_eigenvectors(b, v, w), g);
  const Orthonormalizer ran[] = {Orthonormalizer::ColumnScaling, Orthonormalizer::CholeskyQR};
  for (int pass = 0; pass < 2; ++pass) {
    switch (cholesky_step(b, g, d, rinv, unit_roundoff<T>())) {
      case CholeskyStep::Scaled: scale_columns(b, d, u); return ran[pass];
      case CholeskyStep::Breakdown: return std::nullopt;
      case CholeskyStep::Factored: sweeps.multiply_in_place(rinv, g); break;
    }
  }
  const double norm = b.frobenius_norm(MatrixView<const T>(u));
  if (!(norm <= 2.0 * std::sqrt(static_cast<double>(n)))) return std::nullopt;
  return Orthonormalizer::CholeskyQR2;
}

/// A V in A's memory, a block of rows at a time (the fallback's input; A is not needed after it).
Matrix<double> times_eigenvectors(Backend& b, Matrix<double> ad, MatrixView<const double> v) {
  const index_t m = ad.rows(), n = ad.cols(), rows = rows_per_block(m, n);
  Matrix<double> block(b, rows, n, "AV, a block of rows");
  for (index_t i0 = 0; i0 < m; i0 += rows) {
    const index_t r = std::min(rows, m - i0);
    const MatrixView<double> part = block.view().block(0, 0, r, n), rows_of_ad = ad.view().block(i0, 0, r, n);
    b.product(Op::N, Op::N, 1.0, MatrixView<const double>(rows_of_ad), v, 0.0, part);
    b.copy(MatrixView<const double>(part), rows_of_ad);
  }
  return ad;
}

/// The shapes svd_through_gram takes (A m x n, m >= n; U m x n, s n x 1, V n x n).
template <class A, class T>
void require_thin_svd_shapes(const MatrixView<A>& a, MatrixView<T> u, MatrixView<T> s, MatrixView<T> v) {
  const index_t m = a.rows(), n = a.cols();
  require(m >= n, "A.rows", m, "must be >= A.cols = " + std::to_string(n));
  require_shape(u, m, n, "U");
  require_shape(s, n, 1, "s");
  require_shape(v, n, n, "V");
}

Matrix<double> fp64_copy(Backend& b, MatrixView<const float> a) {
  Matrix<double> ad(b, a.rows(), a.cols(), "A");
  b.convert(a, ad.view());
  return ad;
}

/// U := the orthonormalised A V in U's precision (orthonormalize, Auto: its whole chain).
Orthonormalizer orthonormalized(Backend& b, MatrixView<const double> av, MatrixView<float> u) {
  return orthonormalize(b, av, u, Orthonormalizer::Auto);
}
Orthonormalizer orthonormalized(Backend& b, MatrixView<const double> av, MatrixView<double> u) {
  b.copy(av, u);
  return orthonormalize(b, u, Orthonormalizer::Auto);
}

/// svd_through_gram from A's FP64 copy, which it may overwrite: U by streamed_cholesky_qr, else
/// (a breakdown: A V rank-deficient or too ill-conditioned for CholeskyQR2) by orthonormalize's
/// chain on A V, formed in A's memory.
template <class T>
Orthonormalizer svd_of_fp64_copy(Backend& b, Matrix<double> ad, MatrixView<T> u, MatrixView<T> s, MatrixView<T> v) {
  const index_t n = ad.cols();
  Matrix<double> g(b, n, n, "G"), w(b, n, 1, "w");
  b.product(Op::T, Op::N, 1.0, ad, ad, 0.0, g);
  b.symmetric_eig(g, w);
  write_rows(b, g.view(), v);
  singular_values(b, w, s);
  if (const std::optional<Orthonormalizer> ran = streamed_cholesky_qr(b, ad.view(), g.view(), w.view(), u)) return *ran;
  const Matrix<double> av = times_eigenvectors(b, std::move(ad), g.view());
  const Orthonormalizer used = orthonormalized(b, av.view(), u);
  if (used == Orthonormalizer::Householder) make_diagonal_positive(b, av, u);
  return used;
}

}  // namespace

Orthonormalizer svd_through_gram(Backend& b, MatrixView<const float> a, MatrixView<float> u, MatrixView<float> s,
                                 MatrixView<float> v) {
  require_thin_svd_shapes(a, u, s, v);
  if (a.cols() == 0) return Orthonormalizer::Auto;
  return svd_of_fp64_copy(b, fp64_copy(b, a), u, s, v);
}

Orthonormalizer svd_through_gram(Backend& b, Matrix<float>&& a, MatrixView<float> u, MatrixView<float> s,
                                 MatrixView<float> v) {
  require_thin_svd_shapes(a.view(), u, s, v);
  if (a.cols() == 0) return Orthonormalizer::Auto;
  Matrix<double> ad = fp64_copy(b, a.view());
  a = Matrix<float>();  // the caller's A, given up: released now
  return svd_of_fp64_copy(b, std::move(ad), u, s, v);
}

Orthonormalizer svd_through_gram(Backend& b, Matrix<double>&& a, MatrixView<double> u, MatrixView<double> s,
                                 MatrixView<double> v) {
  require_thin_svd_shapes(a.view(), u, s, v);
  if (a.cols() == 0) return Orthonormalizer::Auto;
  return svd_of_fp64_copy(b, std::move(a), u, s, v);
}

}  // namespace randnla
