// The CUDA eigensolver's step functions (backends/cuda/tridiagonalize.cuh, tridiagonal_dc.cuh)
// run on the host one thread at a time, block after block in the order the kernels run them,
// against LAPACK dsyevd: the algorithm checked where there is no GPU (CI). The kernels themselves
// are held to the same bounds on the H100 by Gpu.SymmetricEigMatchesLapackOnEverySpectrum.
#include <vector_types.h>  // double2: the steps read rows in pairs of doubles

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "cuda/factorizations/tridiagonal_dc.cuh"
#include "cuda/factorizations/tridiagonalize.cuh"
#include "test_support.hpp"

namespace randnla {
namespace {

using namespace cuda;

/// Eigenvalues (ascending) and eigenvectors of the tridiagonal (d, e): the merge levels of
/// tridiagonal_dc.cu, each block of a level in turn, Z := Z U by the portable backend's DGEMM on the host.
void divide_and_conquer(Backend& host, const std::vector<double>& d, const std::vector<double>& e,
                        std::vector<double>& w, Matrix<double>& z) {
  const int n = static_cast<int>(d.size());
  std::vector<double> ds(n), zs(n), mu(n), zhat(n), rho(n), rc(n), rs(n), sh(dc::deflate_smem_bytes(n) / 8 + 4 * n),
      red(1);
  std::vector<int> perm(n), nd(n), df(n), org(n), rp(n), rq(n), kcount(n), rcount(n), pos(n);
  Matrix<double> u(host, n, n), zn(host, n, n);
  w.resize(n);
  for (int i = 0; i < n; ++i) {
    w[i] = d[i] - (i > 0 ? std::abs(e[i - 1]) : 0.0) - (i < n - 1 ? std::abs(e[i]) : 0.0);
    for (int r = 0; r < n; ++r) z.view()(r, i) = u.view()(r, i) = r == i ? 1.0 : 0.0;  // u: zero off its blocks
  }
  for (int half = 1; half < n; half *= 2) {
    dc::Level L;
    L.n = n, L.half = half, L.e = e.data(), L.dval = w.data(), L.z = z.data(), L.u = u.data();
    L.ds = ds.data(), L.zs = zs.data(), L.mu = mu.data(), L.zhat = zhat.data(), L.rho = rho.data();
    L.rc = rc.data(), L.rs = rs.data(), L.perm = perm.data(), L.nd = nd.data(), L.df = df.data();
    L.org = org.data(), L.rp = rp.data(), L.rq = rq.data(), L.kcount = kcount.data(), L.rcount = rcount.data();
    L.pos = pos.data();
    const int merges = (n + 2 * half - 1) / (2 * half);
    for (int b = 0; b < merges; ++b) dc::deflate(L, b, 0, 1, sh.data());
    for (int b = 0; b < merges; ++b)
      for (int x = 0; x < 2 * half; ++x) dc::root(L, b, x, 0, 1, red.data(), sh.data());
    for (int b = 0; b < merges; ++b)
      for (int x = 0; x < 2 * half; ++x) dc::weight_and_rank(L, b, x, 0, 1, red.data(), sh.data());
    for (int b = 0; b < merges; ++b)
      for (int x = 0; x < 2 * half; ++x) dc::column(L, b, x, 0, 1, red.data(), sh.data());
    host.product(Op::N, Op::N, 1.0, z, u, 0.0, zn);
    host.copy(MatrixView<const double>(zn.view()), z.view());
  }
}

/// Block r's panel, as the kernel's distributed shared memory gives it (callable from the steps).
struct Panels {
  const tri::Panel* panels;
  RANDNLA_HD tri::Panel operator()(int r) const { return panels[r]; }
};

/// Z := H_0 ... H_{r-1} Z, H_i = I - tau_i v_i v_i^T from the reflectors the steps stored (a
/// reference for the device's UT-transform product, which the GPU test checks).
void apply_reflectors(const std::vector<double>& v, const std::vector<double>& tau, int n, Matrix<double>& z) {
  for (int i = n - 3; i >= 0; --i)
    for (int c = 0; c < n; ++c) {
      double dot = 0;
      for (int r = 0; r < n; ++r) dot += v[r + i * n] * z.view()(r, c);
      for (int r = 0; r < n; ++r) z.view()(r, c) -= tau[i] * v[r + i * n] * dot;
    }
}

/// Eigenpairs of G (ascending) through the steps of tridiagonalize_sm90.cu for a cluster of
/// `blocks` blocks, then divide and conquer and V = Q Z.
void eig_by_steps(Backend& host, const test::HostMatrix<double>& g, int blocks, Matrix<double>& v,
                  Matrix<double>& w) {
  const int n = static_cast<int>(g.rows), rows = (n + blocks - 1) / blocks;
  std::vector<tri::Slice> s(blocks);
  std::vector<tri::Panel> P(blocks);
  std::vector<std::vector<double>> memory(blocks);
  for (int r = 0; r < blocks; ++r) {
    s[r] = tri::slice(n, rows, r);
    memory[r].assign(tri::panel_doubles(s[r]), 0.0);
    P[r] = tri::panel(memory[r].data(), s[r]);
  }
  const tri::Team t{0, 1, 1};
  double mx = 0;
  for (int r = 0; r < blocks; ++r) mx = tri::nan_max(mx, tri::load(s[r], P[r], g.data.data(), n, t));
  int ex = 0;
  if (mx > 0) std::frexp(mx, &ex);
  for (int r = 0; r < blocks; ++r) tri::scale_rows(s[r], P[r], std::ldexp(1.0, -ex), t);
  const Panels remote{P.data()};
  std::vector<double> hv(static_cast<std::size_t>(n) * n, -1.0), tau(n);  // -1: what finish must zero
  const tri::Reflectors H{hv.data(), n, tau.data()};
  tri::reflector(s[0], P[0], 0, H, t);
  for (int j = 0; j < n - 2; ++j) {
    const int owner = j / rows, next = j + 1 < n - 2 ? (j + 1) / rows : -1;
    double tj = 0;
    for (int r = 0; r < blocks; ++r) tj = tri::product(s[r], P[r], j, P[owner].vpub, t);
    for (int r = 0; r < blocks; ++r) tri::gather_w(s[r], P[r], j, tj, blocks, remote, t);
    for (int r = 0; r < blocks; ++r) {
      if (r == next) tri::reflector(s[r], P[r], j + 1, H, t);
      tri::update(s[r], P[r], j, r == next ? j + 1 : -1, 0, t);
    }
  }
  std::vector<double> d(n), e(n), wd;
  for (int r = 0; r < blocks; ++r) tri::finish(s[r], P[r], d.data(), e.data(), H, t);
  divide_and_conquer(host, d, e, wd, v);
  apply_reflectors(hv, tau, n, v);
  for (int i = 0; i < n; ++i) w.view()(i, 0) = std::ldexp(wd[i], ex);
}

// Same matrices and bounds as the GPU test (ascending here, descending there), at orders that
// leave the last block of a cluster partial or empty (33 in 8 blocks), for clusters of 4, 8 and 16.
TEST(EigSteps, MatchLapackOnEverySpectrum) {
  auto host = make_backend(BackendKind::Host);
  for (index_t n : {3, 4, 33, 272, 301}) {
    for (const std::string kind : {"graded", "cluster", "random", "zero", "multiple", "tiny", "huge"}) {
      const test::HostMatrix<double> g = test::symmetric_test_matrix(kind, n);
      Matrix<double> hg(*host, n, n), hw(*host, n, 1), ref(*host, n, 1);
      host->copy(g.cview(), hg.view());
      host->symmetric_eig(hg.view(), hw.view());
      for (index_t i = 0; i < n; ++i) ref.view()(i, 0) = hw.view()(n - 1 - i, 0);
      for (int blocks : {4, 8, 16}) {
        Matrix<double> v(*host, n, n), w(*host, n, 1);
        eig_by_steps(*host, g, blocks, v, w);
        for (index_t i = 1; i < n; ++i) EXPECT_LE(w.view()(i - 1, 0), w.view()(i, 0)) << kind << " " << n;
        const test::EigenErrors err = test::eigen_errors(g, v, w, ref);
        const std::string what = kind + " n = " + std::to_string(n) + " blocks = " + std::to_string(blocks);
        EXPECT_LE(err.value, 1e-12 * err.norm) << what;
        EXPECT_LT(err.orthogonality, 1e-12) << what;
        EXPECT_LE(err.residual, 1e-12 * err.norm) << what;
      }
    }
  }
}

}  // namespace
}  // namespace randnla
