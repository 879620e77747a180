// The portable factorization family: LAPACK on the host (through a host copy where the data lives in device
// memory), and Kokkos Kernels' trsm.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "portable/factorizations/lapack.hpp"
#include "portable/products/portable_products.hpp"
#include "portable/context/portable_context.hpp"
#include "randnla/ops/factorizations.hpp"

namespace randnla {
namespace portable {

inline int lapack_int(index_t v, const char* name) {
  require(v <= std::numeric_limits<int>::max(), name, v, "must fit LAPACK's 32-bit integers");
  return static_cast<int>(v);
}

inline void lapack_check(int info, const std::string& routine) {
  if (info != 0) throw Error(routine + " failed with info = " + std::to_string(info));
}

template <class Exec>
class PortableFactorizations : public virtual FactorizationOps, public virtual PortableContext<Exec> {
 public:
  using PortableContext<Exec>::exec_;
  template <class T>
  using OnHost = typename PortableContext<Exec>::template OnHost<T>;

  void do_qr(MatrixView<float> a, MatrixView<float> tau) override { householder_qr(a, tau); }
  void do_qr(MatrixView<double> a, MatrixView<double> tau) override { householder_qr(a, tau); }
  void do_form_q(MatrixView<float> a, MatrixView<const float> tau) override { thin_q(a, tau); }
  void do_form_q(MatrixView<double> a, MatrixView<const double> tau) override { thin_q(a, tau); }

  int do_cholesky(MatrixView<double> g_in) override {
    OnHost<double> g(*this, g_in);
    const int n = lapack_int(g->rows(), "G.rows"), lda = lapack_int(g->ld(), "G.ld");
    int info = 0;
    dpotrf_("U", &n, g->data(), &lda, &info);
    require(info >= 0, "dpotrf argument", -info, "is invalid");
    g.write_back();
    return info;
  }

  void do_triangular_solve(Side side, Op op, double alpha, MatrixView<const double> r, MatrixView<double> b) override {
    compat::trsm(exec_, side == Side::Left ? "L" : "R", "U", blas_op(op), "N", alpha, kokkos_view<Exec>(r),
                 kokkos_view<Exec>(b));
  }

  void do_symmetric_eig(MatrixView<double> g_in, MatrixView<double> w_in) override {
    OnHost<double> g(*this, g_in), w(*this, w_in, /*read=*/false);
    const int n = lapack_int(g->rows(), "G.rows"), lda = lapack_int(g->ld(), "G.ld");
    int info = 0, lwork = -1, liwork = -1, iquery = 0;
    double query = 0;
    dsyevd_("V", "U", &n, g->data(), &lda, w->data(), &query, &lwork, &iquery, &liwork, &info);
    std::vector<double> work(static_cast<std::size_t>(query) + 1);
    std::vector<int> iwork(static_cast<std::size_t>(iquery) + 1);
    lwork = static_cast<int>(work.size()), liwork = static_cast<int>(iwork.size());
    dsyevd_("V", "U", &n, g->data(), &lda, w->data(), work.data(), &lwork, iwork.data(), &liwork, &info);
    if (info > 0) throw NumericalBreakdown("dsyevd did not converge (info = " + std::to_string(info) + ")");
    lapack_check(info, "dsyevd");
    for (index_t j = 0; j < n / 2; ++j) {  // LAPACK's ascending order to descending
      std::swap((*w)(j, 0), (*w)(n - 1 - j, 0));
      for (index_t i = 0; i < n; ++i) std::swap((*g)(i, j), (*g)(i, n - 1 - j));
    }
    g.write_back();
    w.write_back();
  }

  void do_svd(MatrixView<float> a_in, MatrixView<float> s_in, MatrixView<float> u_in, MatrixView<float> vt_in,
              SvdMethod method) override {
    OnHost<float> a(*this, a_in), s(*this, s_in, false), u(*this, u_in, false), vt(*this, vt_in, false);
    const index_t m = a->rows(), n = a->cols();
    if (method == SvdMethod::Auto) method = SvdMethod::Gesdd;
    const int im = lapack_int(m, "A.rows"), in = lapack_int(n, "A.cols"), lda = lapack_int(a->ld(), "A.ld");
    const int ldu = lapack_int(u->ld(), "U.ld"), ldvt = lapack_int(vt->ld(), "VT.ld");
    int info = 0, lwork = -1;
    float query = 0;
    std::vector<float> work;
    if (method == SvdMethod::Gesvd) {
      sgesvd_("S", "S", &im, &in, a->data(), &lda, s->data(), u->data(), &ldu, vt->data(), &ldvt, &query, &lwork, &info);
      work.resize(static_cast<std::size_t>(query) + 1);
      lwork = static_cast<int>(work.size());
      sgesvd_("S", "S", &im, &in, a->data(), &lda, s->data(), u->data(), &ldu, vt->data(), &ldvt, work.data(), &lwork,
              &info);
    } else if (method == SvdMethod::Gesdd) {
      std::vector<int> iwork(8 * static_cast<std::size_t>(n));
      sgesdd_("S", &im, &in, a->data(), &lda, s->data(), u->data(), &ldu, vt->data(), &ldvt, &query, &lwork,
              iwork.data(), &info);
      work.resize(static_cast<std::size_t>(query) + 1);
      lwork = static_cast<int>(work.size());
      sgesdd_("S", &im, &in, a->data(), &lda, s->data(), u->data(), &ldu, vt->data(), &ldvt, work.data(), &lwork,
              iwork.data(), &info);
    } else {  // Jacobi, sgesvj: A := U diag(s) in place, V returned (not transposed), columns sorted
      work.resize(std::max<std::size_t>(6, static_cast<std::size_t>(m + n)));
      lwork = static_cast<int>(work.size());
      std::vector<float> v(static_cast<std::size_t>(n * n));
      sgesvj_("G", "U", "V", &im, &in, a->data(), &lda, s->data(), &in, v.data(), &in, work.data(), &lwork, &info);
      if (info == 0 && work[0] != 1.0f)
        for (index_t i = 0; i < n; ++i) (*s)(i, 0) *= work[0];  // SCALE = work(1), see sgesvj's documentation
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) (*u)(i, j) = (*a)(i, j);
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) (*vt)(j, i) = v[i + j * n];
    }
    if (info > 0)
      throw NumericalBreakdown(std::string(to_string(method)) + " did not converge (info = " + std::to_string(info) + ")");
    lapack_check(info, to_string(method));
    s.write_back();
    u.write_back();
    vt.write_back();
  }

 private:
  template <class T>
  void householder_qr(MatrixView<T> a_in, MatrixView<T> tau_in) {
    OnHost<T> a(*this, a_in), tau(*this, tau_in, /*read=*/false);
    const int m = lapack_int(a->rows(), "A.rows"), n = lapack_int(a->cols(), "A.cols");
    const int lda = lapack_int(a->ld(), "A.ld");
    int info = 0, lwork = -1;
    T query = 0;
    lapack::geqrf(&m, &n, a->data(), &lda, tau->data(), &query, &lwork, &info);
    std::vector<T> work(static_cast<std::size_t>(query) + 1);
    lwork = static_cast<int>(work.size());
    lapack::geqrf(&m, &n, a->data(), &lda, tau->data(), work.data(), &lwork, &info);
    lapack_check(info, "geqrf");
    a.write_back();
    tau.write_back();
  }

  template <class T>
  void thin_q(MatrixView<T> a_in, MatrixView<const T> tau_in) {
    OnHost<T> a(*this, a_in);
    const int m = lapack_int(a->rows(), "A.rows"), n = lapack_int(a->cols(), "A.cols");
    const int lda = lapack_int(a->ld(), "A.ld");
    std::vector<T> tau(static_cast<std::size_t>(n));
    this->copy(tau_in, MatrixView<T>(tau.data(), n, 1, n, MemorySpace::Host));
    int info = 0, lwork = -1;
    T query = 0;
    lapack::orgqr(&m, &n, &n, a->data(), &lda, tau.data(), &query, &lwork, &info);
    std::vector<T> work(static_cast<std::size_t>(query) + 1);
    lwork = static_cast<int>(work.size());
    lapack::orgqr(&m, &n, &n, a->data(), &lda, tau.data(), work.data(), &lwork, &info);
    lapack_check(info, "orgqr");
    a.write_back();
  }
};

}  // namespace portable
}  // namespace randnla
