#include "test_support.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "randnla/backends.hpp"
#include "portable/factorizations/lapack.hpp"
#include "randnla/philox.hpp"
#include "randnla/random.hpp"

namespace randnla {
namespace test {

const char* to_string(Elements e) {
  switch (e) {
    case Elements::Normal: return "N(0,1)";
    case Elements::Uniform01: return "U(0,1)";
    case Elements::ExpRand_m15_15: return "exp_rand(-15,15)";
    case Elements::ExpRand_m35_m15: return "exp_rand(-35,-15)";
    default: return "exp_rand(-45,-35)";
  }
}

namespace {
std::uint32_t word(std::uint64_t seed, std::uint64_t e, unsigned w) {
  return detail::philox_block(seed, 7, e).v[w];
}
double unit(std::uint64_t seed, std::uint64_t e, unsigned w) { return (word(seed, e, w) + 0.5) / 4294967296.0; }
}  // namespace

HostMatrix<float> random_matrix(index_t rows, index_t cols, Elements e, std::uint64_t seed) {
  HostMatrix<float> a(rows, cols);
  const RandomSpec gauss{Distribution::Gaussian, seed, 3};
  for (index_t idx = 0; idx < rows * cols; ++idx) {
    const auto u = static_cast<std::uint64_t>(idx);
    switch (e) {
      case Elements::Normal: a.data[idx] = random_element(gauss, u); break;
      case Elements::Uniform01: a.data[idx] = static_cast<float>(unit(seed, u, 0)); break;
      default: {
        const int lo = e == Elements::ExpRand_m15_15 ? -15 : e == Elements::ExpRand_m35_m15 ? -35 : -45;
        const int hi = e == Elements::ExpRand_m15_15 ? 15 : e == Elements::ExpRand_m35_m15 ? -15 : -35;
        const int ex = lo + static_cast<int>(word(seed, u, 0) % static_cast<std::uint32_t>(hi - lo + 1));
        const double mant = 1.0 + unit(seed, u, 1);
        const double sign = (word(seed, u, 2) & 1u) ? -1.0 : 1.0;
        a.data[idx] = static_cast<float>(sign * std::ldexp(mant, ex));
      }
    }
  }
  return a;
}

HostMatrix<double> reference_gemm(Op ta, Op tb, const HostMatrix<float>& a, const HostMatrix<float>& b) {
  const index_t m = ta == Op::N ? a.rows : a.cols, k = ta == Op::N ? a.cols : a.rows;
  const index_t n = tb == Op::N ? b.cols : b.rows;
  HostMatrix<double> c(m, n);
  for (index_t j = 0; j < n; ++j)
    for (index_t p = 0; p < k; ++p) {
      const double bv = tb == Op::N ? b(p, j) : b(j, p);
      if (ta == Op::N)
        for (index_t i = 0; i < m; ++i) c(i, j) += static_cast<double>(a(i, p)) * bv;
      else
        for (index_t i = 0; i < m; ++i) c(i, j) += static_cast<double>(a(p, i)) * bv;
    }
  return c;
}

double relative_error(const HostMatrix<float>& c, const HostMatrix<double>& r) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < r.data.size(); ++i) {
    const double d = c.data[i] - r.data[i];
    num += d * d;
    den += r.data[i] * r.data[i];
  }
  return std::sqrt(num / den);
}

HostMatrix<double> sparse_projection_fp64(const SparseSignOperator& s, const HostMatrix<float>& a) {
  HostMatrix<double> y(s.rows, a.cols);
  for (std::int64_t j = 0; j < s.rows; ++j)
    for (std::int64_t g = 0; g < s.segments(); ++g)
      s.walk(j, g, [&](std::int64_t i, bool negative) {
        const double v = negative ? -static_cast<double>(s.value) : static_cast<double>(s.value);
        for (index_t c = 0; c < a.cols; ++c) y(j, c) += v * a(i, c);
      });
  return y;
}

namespace {
/// n x r matrix with orthonormal columns: Gaussian, then modified Gram–Schmidt twice, in FP64.
HostMatrix<double> orthonormal(index_t n, index_t r, std::uint64_t seed) {
  HostMatrix<double> q(n, r);
  const RandomSpec g{Distribution::Gaussian, seed, 11};
  for (index_t i = 0; i < n * r; ++i) q.data[i] = random_element(g, static_cast<std::uint64_t>(i));
  for (int pass = 0; pass < 2; ++pass)
    for (index_t j = 0; j < r; ++j) {
      for (index_t p = 0; p < j; ++p) {
        double dot = 0;
        for (index_t i = 0; i < n; ++i) dot += q(i, p) * q(i, j);
        for (index_t i = 0; i < n; ++i) q(i, j) -= dot * q(i, p);
      }
      double nrm = 0;
      for (index_t i = 0; i < n; ++i) nrm += q(i, j) * q(i, j);
      nrm = std::sqrt(nrm);
      for (index_t i = 0; i < n; ++i) q(i, j) /= nrm;
    }
  return q;
}
}  // namespace

HostMatrix<float> matrix_with_spectrum(index_t m, index_t n, const std::vector<double>& sigma, std::uint64_t seed) {
  const index_t r = static_cast<index_t>(sigma.size());
  const HostMatrix<double> u = orthonormal(m, r, seed), v = orthonormal(n, r, seed + 1);
  HostMatrix<float> a(m, n);
  std::vector<double> col(static_cast<std::size_t>(m));
  for (index_t j = 0; j < n; ++j) {
    std::fill(col.begin(), col.end(), 0.0);
    for (index_t p = 0; p < r; ++p) {
      const double w = sigma[p] * v(j, p);
      for (index_t i = 0; i < m; ++i) col[i] += u(i, p) * w;
    }
    for (index_t i = 0; i < m; ++i) a(i, j) = static_cast<float>(col[i]);
  }
  return a;
}

double eckart_young(const std::vector<double>& sigma, index_t k) {
  double s = 0;
  for (std::size_t i = static_cast<std::size_t>(k); i < sigma.size(); ++i) s += sigma[i] * sigma[i];
  return std::sqrt(s);
}

double lowrank_relative_error(MatrixView<const float> a, MatrixView<const float> u, MatrixView<const float> s,
                              MatrixView<const float> v) {
  double num = 0, den = 0;
  const index_t k = s.rows();
  std::vector<double> us(static_cast<std::size_t>(k));
  for (index_t i = 0; i < a.rows(); ++i) {
    for (index_t p = 0; p < k; ++p) us[p] = static_cast<double>(u(i, p)) * s(p, 0);
    for (index_t j = 0; j < a.cols(); ++j) {
      double x = 0;
      for (index_t p = 0; p < k; ++p) x += us[p] * v(j, p);
      const double d = a(i, j) - x;
      num += d * d;
      den += static_cast<double>(a(i, j)) * a(i, j);
    }
  }
  return std::sqrt(num / den);
}

HostMatrix<float> gaussian_rank(index_t m, index_t n, index_t r, std::uint64_t seed) {
  const auto a = reference_gemm(Op::N, Op::T, random_matrix(m, r, Elements::Normal, seed),
                                random_matrix(n, r, Elements::Normal, seed + 1));
  HostMatrix<float> out(m, n);
  for (std::size_t e = 0; e < a.data.size(); ++e) out.data[e] = static_cast<float>(a.data[e]);
  return out;
}

double factor_relative_error(MatrixView<const float> a, MatrixView<const float> x, MatrixView<const float> y) {
  HostMatrix<float> ones(x.cols(), 1);
  for (float& v : ones.data) v = 1.0f;
  return lowrank_relative_error(a, x, ones.cview(), y);
}

std::vector<double> singular_values(MatrixView<const float> a) {
  const int m = static_cast<int>(a.rows()), n = static_cast<int>(a.cols());
  std::vector<double> ad(static_cast<std::size_t>(m) * n), s(static_cast<std::size_t>(std::min(m, n)));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) ad[i + static_cast<std::size_t>(j) * m] = a(i, j);
  int info = 0, lwork = -1, one = 1;
  double query = 0, dummy = 0;
  dgesvd_("N", "N", &m, &n, ad.data(), &m, s.data(), &dummy, &one, &dummy, &one, &query, &lwork, &info);
  std::vector<double> work(static_cast<std::size_t>(query) + 1);
  lwork = static_cast<int>(work.size());
  dgesvd_("N", "N", &m, &n, ad.data(), &m, s.data(), &dummy, &one, &dummy, &one, work.data(), &lwork, &info);
  EXPECT_EQ(info, 0);
  return s;
}

double span_residual(const HostMatrix<float>& y, const HostMatrix<float>& q) {
  double outside = 0.0, norm = 0.0;
  for (index_t j = 0; j < y.cols; ++j) {
    std::vector<double> c(static_cast<std::size_t>(q.cols), 0.0), r(static_cast<std::size_t>(y.rows));
    for (index_t k = 0; k < q.cols; ++k)
      for (index_t i = 0; i < y.rows; ++i) c[k] += static_cast<double>(q(i, k)) * y(i, j);
    for (index_t i = 0; i < y.rows; ++i) {
      r[i] = y(i, j);
      for (index_t k = 0; k < q.cols; ++k) r[i] -= static_cast<double>(q(i, k)) * c[k];
      outside += r[i] * r[i], norm += static_cast<double>(y(i, j)) * y(i, j);
    }
  }
  return std::sqrt(outside / norm);
}

double orthogonality_loss(MatrixView<const float> q) {
  double worst = 0;
  for (index_t a = 0; a < q.cols(); ++a)
    for (index_t b = 0; b <= a; ++b) {
      double dot = 0;
      for (index_t i = 0; i < q.rows(); ++i) dot += static_cast<double>(q(i, a)) * q(i, b);
      worst = std::max(worst, std::abs(dot - (a == b ? 1.0 : 0.0)));
    }
  return worst;
}

HostMatrix<double> symmetric_test_matrix(const std::string& kind, index_t n) {
  HostMatrix<double> g(n, n);
  if (kind == "graded" || kind == "cluster") {
    std::vector<double> sigma(n);
    for (index_t i = 0; i < n; ++i)
      sigma[i] = kind == "graded" ? std::pow(i + 1.0, -1.5) : (i < 20 ? 1.0 : 1e-2 * std::pow(0.97, i));
    const auto a = matrix_with_spectrum(n, n, sigma, 31);
    return reference_gemm(Op::T, Op::N, a, a);
  }
  const auto r = random_matrix(n, n, Elements::Normal, 32);
  const double scale = kind == "tiny" ? 1e-150 : kind == "huge" ? 1e150 : 1.0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      if (kind == "zero") g(i, j) = 0;
      else if (kind == "multiple") g(i, j) = i == j ? static_cast<double>((i * 7 % n) / 3) : 0.0;
      else g(i, j) = scale * (i <= j ? r(i, j) : r(j, i));
    }
  return g;
}

EigenErrors eigen_errors(const HostMatrix<double>& g, MatrixView<const double> v, MatrixView<const double> w,
                         MatrixView<const double> w_ref) {
  const index_t n = g.rows;
  EigenErrors e{0, 0, 0, 0};
  for (index_t i = 0; i < n; ++i) {
    e.norm = std::max(e.norm, std::abs(w_ref(i, 0)));
    e.value = std::max(e.value, std::abs(w(i, 0) - w_ref(i, 0)));
  }
  for (index_t a = 0; a < n; ++a)
    for (index_t b = 0; b < n; ++b) {
      double dot = 0, gv = -w(b, 0) * v(a, b);
      for (index_t i = 0; i < n; ++i) {
        dot += v(i, a) * v(i, b);
        gv += g(a, i) * v(i, b);
      }
      e.orthogonality = std::max(e.orthogonality, std::abs(dot - (a == b ? 1.0 : 0.0)));
      e.residual = std::max(e.residual, std::abs(gv));
    }
  return e;
}

HostMatrix<float> to_host(Backend& b, MatrixView<const float> x) {
  HostMatrix<float> h(x.rows(), x.cols());
  b.copy(x, h.view());
  return h;
}

std::vector<std::pair<std::string, std::shared_ptr<Backend>>> portable_backends() {
  std::vector<std::pair<std::string, std::shared_ptr<Backend>>> all;
  const auto add = [&all](const std::string& name, std::shared_ptr<Backend> b) {
    for (const auto& [seen, unused] : all)
      if (seen == name) return;
    all.emplace_back(name, std::move(b));
  };
  const Kokkos::DefaultExecutionSpace device;
  add(std::string(device.name()) + " (" + std::to_string(device.concurrency()) + " threads)",
      backend_for(device, BackendChoice::Portable));
  const Kokkos::DefaultHostExecutionSpace host;
  add(std::string(host.name()) + " (" + std::to_string(host.concurrency()) + " threads)",
      backend_for(host, BackendChoice::Portable));
#if defined(KOKKOS_ENABLE_SERIAL)
  add("Serial (1 threads)", backend_for(Kokkos::Serial(), BackendChoice::Portable));
#endif
  return all;
}

Matrix<float> to_backend(Backend& b, const HostMatrix<float>& x) {
  Matrix<float> d(b, x.rows, x.cols);
  b.copy(x.cview(), d.view());
  return d;
}

Kokkos::View<float**, Kokkos::LayoutLeft> to_kokkos(const HostMatrix<float>& x) {
  Kokkos::View<float**, Kokkos::LayoutLeft> v("A", x.rows, x.cols);
  auto mirror = Kokkos::create_mirror_view(v);
  for (index_t j = 0; j < x.cols; ++j)
    for (index_t i = 0; i < x.rows; ++i) mirror(i, j) = x(i, j);
  Kokkos::deep_copy(v, mirror);
  return v;
}

}  // namespace test
}  // namespace randnla

namespace randnla {
namespace test {

std::string invalid_argument_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

index_t HostTensor::size() const {
  index_t s = 1;
  for (index_t e : extents) s *= e;
  return s;
}

HostTensor mode_product(const HostTensor& x, int n, const std::vector<double>& m, index_t rows) {
  index_t before = 1, after = 1;
  for (int k = 0; k < n; ++k) before *= x.extents[k];
  for (int k = n + 1; k < static_cast<int>(x.extents.size()); ++k) after *= x.extents[k];
  const index_t in = x.extents[n];
  HostTensor y{x.extents, {}};
  y.extents[n] = rows;
  y.data.assign(static_cast<std::size_t>(y.size()), 0.0);
  for (index_t r = 0; r < after; ++r)
    for (index_t a = 0; a < in; ++a)
      for (index_t i = 0; i < rows; ++i) {
        const double mia = m[i + a * rows];
        for (index_t l = 0; l < before; ++l) y.data[l + before * (i + rows * r)] += mia * x.data[l + before * (a + in * r)];
      }
  return y;
}

namespace {
std::vector<double> uniform_pm1(index_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (double& x : v) x = u(rng);
  return v;
}
}  // namespace

HostTensor paper_tensor(const std::vector<index_t>& dims, const std::vector<index_t>& ranks, index_t deficit,
                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostTensor g{ranks, {}};
  g.data = uniform_pm1(g.size(), rng);
  for (int n = 0; n < static_cast<int>(dims.size()); ++n) {
    const index_t in = dims[n], jn = ranks[n], r = jn - deficit;
    const std::vector<double> a = uniform_pm1(in * r, rng), b = uniform_pm1(r * jn, rng);  // I_n x r, r x J_n
    std::vector<double> m(static_cast<std::size_t>(in * jn), 0.0);
    for (index_t j = 0; j < jn; ++j)
      for (index_t p = 0; p < r; ++p)
        for (index_t i = 0; i < in; ++i) m[i + j * in] += a[i + p * in] * b[p + j * r];
    g = mode_product(g, n, m, in);
  }
  return g;
}

std::vector<float> columns_with_ties(index_t m, index_t k) {
  std::vector<float> x(static_cast<std::size_t>(m * k));
  for (index_t j = 0; j < k; ++j) {
    float* c = x.data() + j * m;
    for (index_t i = 0; i < m; ++i) c[i] = std::sin(static_cast<float>(i * 31 + j * 7));  // |c| < 1
    if (j == 1) {
      std::fill(c, c + m, 0.0f);
      continue;
    }
    const index_t at = j % 3 == 0 ? m - 1 : (j * 101) % m;
    const float largest = j % 4 < 2 ? -2.0f : 2.0f;
    c[at] = largest;
    if (j % 2 == 1 && at + 1 < m) c[at + 1] = -largest;  // the tie: the first one, at `at`, decides
  }
  return x;
}

std::vector<float> signs_of_largest_reference(const std::vector<float>& x, index_t m, index_t k) {
  std::vector<float> signs(static_cast<std::size_t>(k));
  for (index_t j = 0; j < k; ++j) {
    index_t best = 0;
    for (index_t i = 1; i < m; ++i)
      if (std::abs(x[static_cast<std::size_t>(i + j * m)]) > std::abs(x[static_cast<std::size_t>(best + j * m)])) best = i;
    signs[static_cast<std::size_t>(j)] = x[static_cast<std::size_t>(best + j * m)] < 0 ? -1.0f : 1.0f;
  }
  return signs;
}

}  // namespace test
}  // namespace randnla

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  return RUN_ALL_TESTS();
}
