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

/// s := sqrt(max(w, 0)) as FP32 (w: the eigenvalues of A^T A, descending).
void singular_values(Backend& b, MatrixView<const double> w, MatrixView<float> s) {
  const index_t n = w.rows();
  std::vector<double> hw(static_cast<std::size_t>(n));
  b.copy(w, MatrixView<double>(hw.data(), n, 1, n, MemorySpace::Host));
  std::vector<float> hs(hw.size());
  for (std::size_t i = 0; i < hw.size(); ++i) hs[i] = static_cast<float>(std::sqrt(std::max(hw[i], 0.0)));
  b.copy(MatrixView<const float>(hs.data(), n, 1, n, MemorySpace::Host), s);
}

/// Householder QR leaves R's diagonal with LAPACK's signs: flip the columns of U whose
/// u_j^T (A V)_j is negative, so that A V = U R with R's diagonal positive, as CholeskyQR gives.
void make_diagonal_positive(Backend& b, MatrixView<const double> av, MatrixView<float> u) {
  const index_t m = u.rows(), n = u.cols();
  Matrix<double> ud(b, m, n, "U"), r(b, n, n, "R");
  b.convert(u, ud.view());
  b.product(Op::T, Op::N, 1.0, ud, av, 0.0, r);
  const std::vector<double> d = host_diagonal(b, r);
  std::vector<float> sign(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) sign[i] = d[i] < 0 ? -1.0f : 1.0f;
  Matrix<float> sg(b, n, 1, "sign");
  b.copy(MatrixView<const float>(sign.data(), n, 1, n, MemorySpace::Host), sg.view());
  b.scale_columns(sg, u);
}

}  // namespace

Orthonormalizer svd_through_gram(Backend& b, MatrixView<const float> a, MatrixView<float> u, MatrixView<float> s,
                                 MatrixView<float> v) {
  const index_t m = a.rows(), n = a.cols();
  require(m >= n, "A.rows", m, "must be >= A.cols = " + std::to_string(n));
  require_shape(u, m, n, "U");
  require_shape(s, n, 1, "s");
  require_shape(v, n, n, "V");
  if (n == 0) return Orthonormalizer::Auto;
  Matrix<double> ad(b, m, n, "A"), g(b, n, n, "G"), w(b, n, 1, "w"), av(b, m, n, "AV");
  b.convert(a, ad.view());
  b.product(Op::T, Op::N, 1.0, ad, ad, 0.0, g);
  b.symmetric_eig(g, w);
  b.product(Op::N, Op::N, 1.0, ad, g, 0.0, av);
  b.convert(g.view(), v);
  singular_values(b, w, s);
  const Orthonormalizer used = orthonormalize(b, MatrixView<const double>(av.view()), u, Orthonormalizer::Auto);
  if (used == Orthonormalizer::Householder) make_diagonal_positive(b, av, u);
  return used;
}

}  // namespace randnla
