#include "svd_through_gram.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

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

/// U in FP64, read as it is or converted from FP32.
Matrix<double> fp64_of(Backend& b, MatrixView<const float> u) {
  Matrix<double> ud(b, u.rows(), u.cols(), "U");
  b.convert(u, ud.view());
  return ud;
}
Matrix<double> fp64_of(Backend& b, MatrixView<const double> u) {
  Matrix<double> ud(b, u.rows(), u.cols(), "U");
  b.copy(u, ud.view());
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

/// The rows of A V formed at a time where A V is formed over A's FP64 copy: all of them (one product
/// into a second m x n matrix) up to 256 MiB, else blocks of rows of 256 MiB at most.
index_t rows_per_block(index_t m, index_t n) {
  constexpr double kBlockBytes = 256.0 * (1 << 20);
  const double row_bytes = 8.0 * static_cast<double>(std::max<index_t>(n, 1));
  return std::max<index_t>(1, std::min<index_t>(m, static_cast<index_t>(kBlockBytes / row_bytes)));
}

/// A V (FP64, m x n) with V := the eigenvectors of G = A^T A in `g` and w := its eigenvalues
/// (descending), from A's FP64 copy `ad`. A large A V is formed in `ad` a block of rows at a time:
/// with its orthonormalisation (up to one more m x n FP64 matrix), it is the peak of an RSVD of a
/// large sparse matrix (n = l; 30 GB each at 14.3M x 266), which a second copy would raise by a third.
Matrix<double> times_gram_eigenvectors(Backend& b, Matrix<double> ad, Matrix<double>& g, Matrix<double>& w) {
  const index_t m = ad.rows(), n = ad.cols(), rows = rows_per_block(m, n);
  b.product(Op::T, Op::N, 1.0, ad, ad, 0.0, g);
  b.symmetric_eig(g, w);
  Matrix<double> block(b, rows, n, rows == m ? "AV" : "AV, a block of rows");
  if (rows == m) {
    b.product(Op::N, Op::N, 1.0, ad, g, 0.0, block);
    return block;
  }
  for (index_t i0 = 0; i0 < m; i0 += rows) {
    const index_t r = std::min(rows, m - i0);
    const MatrixView<double> part = block.view().block(0, 0, r, n), rows_of_ad = ad.view().block(i0, 0, r, n);
    b.product(Op::N, Op::N, 1.0, MatrixView<const double>(rows_of_ad), g, 0.0, part);
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

/// U := the orthonormalised A V in U's precision: FP32 straight from the FP64 A V, FP64 in place.
Orthonormalizer orthonormalized(Backend& b, MatrixView<const double> av, MatrixView<float> u) {
  return orthonormalize(b, av, u, Orthonormalizer::Auto);
}
Orthonormalizer orthonormalized(Backend& b, MatrixView<const double> av, MatrixView<double> u) {
  b.copy(av, u);
  return orthonormalize(b, u, Orthonormalizer::Auto);
}

void write_v(Backend& b, MatrixView<const double> g, MatrixView<float> v) { b.convert(g, v); }
void write_v(Backend& b, MatrixView<const double> g, MatrixView<double> v) { b.copy(g, v); }

/// svd_through_gram from A's FP64 copy.
template <class T>
Orthonormalizer svd_of_fp64_copy(Backend& b, Matrix<double> ad, MatrixView<T> u, MatrixView<T> s, MatrixView<T> v) {
  const index_t n = ad.cols();
  Matrix<double> g(b, n, n, "G"), w(b, n, 1, "w");
  const Matrix<double> av = times_gram_eigenvectors(b, std::move(ad), g, w);
  write_v(b, g.view(), v);
  singular_values(b, w, s);
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
  return svd_of_fp64_copy(b, std::move(a), u, s, v);  // A V is formed in A's memory where it is large
}

}  // namespace randnla
