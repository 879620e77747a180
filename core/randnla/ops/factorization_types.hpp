// The dense factorization family's vocabulary: shapes and the small-SVD routines a backend may run.
#pragma once

#include <string>

#include "randnla/enum_names.hpp"
#include "randnla/matrix_view.hpp"

namespace randnla {

/// Which side a triangular factor is applied from (BLAS trsm's side).
enum class Side { Left, Right };

/// Throws InvalidArgument unless A (m x n) has m >= n.
template <class T>
void require_tall(const MatrixView<T>& a, const std::string& name) {
  require(a.rows() >= a.cols(), name + ".rows", a.rows(), "must be >= " + name + ".cols = " + std::to_string(a.cols()));
}

/// Throws InvalidArgument unless the thin SVD A (m x n, m >= n) = U diag(s) VT is well formed.
template <class T>
void require_svd_shapes(const MatrixView<T>& a, const MatrixView<T>& s, const MatrixView<T>& u,
                        const MatrixView<T>& vt) {
  const index_t m = a.rows(), n = a.cols();
  require(m >= n, "A.rows", m, "must be >= A.cols = " + std::to_string(n) + " (transpose a wide matrix first)");
  require_shape(u, m, n, "U");
  require_shape(vt, n, n, "VT");
  require(s.size() == n, "s.size", s.size(), "must equal A.cols = " + std::to_string(n));
}

/// Throws InvalidArgument unless G (n x n) := V with w (n x 1) := eigenvalues is well formed.
template <class T>
void require_eig_shapes(const MatrixView<T>& g, const MatrixView<T>& w) {
  require_square(g, "G");
  require_shape(w, g.rows(), 1, "w");
}

/// Small-matrix SVD routine.
enum class SvdMethod {
  Gesvd,   ///< QR iteration (LAPACK / cuSOLVER gesvd)
  Gesdd,   ///< divide and conquer (LAPACK gesdd)
  Jacobi,  ///< one-sided Jacobi (LAPACK gesvj / cuSOLVER gesvdj)
  Polar,   ///< polar decomposition (cuSOLVER Xgesvdp)
  Auto     ///< the fastest routine the backend has, measured: gesdd on the host, polar on the GPU
           ///< (6.0 ms against gesvd's 27 ms for 272 x 272 on the H100)
};

inline const EnumNames<SvdMethod>& names_of(SvdMethod) {
  static const EnumNames<SvdMethod> names{{SvdMethod::Gesvd, "gesvd"},
                                          {SvdMethod::Gesdd, "gesdd"},
                                          {SvdMethod::Jacobi, "jacobi"},
                                          {SvdMethod::Polar, "polar"},
                                          {SvdMethod::Auto, "auto"}};
  return names;
}

}  // namespace randnla
