#include "host_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "lapack.hpp"
#include "randnla/kokkos_compat.hpp"
#include "randnla/random.hpp"

namespace randnla {
namespace {

using HostExec = Kokkos::DefaultHostExecutionSpace;

template <class T>
using Unmanaged = Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// The Kokkos view of a randnla host view (a row range of an ld x cols view, so ld is kept).
template <class T>
auto kokkos_of(const MatrixView<T>& v) {
  Unmanaged<T> full(v.data(), static_cast<std::size_t>(v.ld()), static_cast<std::size_t>(v.cols()));
  return Kokkos::subview(full, Kokkos::make_pair<std::size_t, std::size_t>(0, v.rows()), Kokkos::ALL());
}

/// Runs f(i, j) for every element of a rows x cols matrix, in parallel over columns.
template <class F>
void for_each_element(index_t rows, index_t cols, const F& f) {
  Kokkos::parallel_for(
      "randnla::host::for_each_element", Kokkos::RangePolicy<HostExec>(0, cols), [=](const index_t j) {
        for (index_t i = 0; i < rows; ++i) f(i, j);
      });
}

const char* blas_op(Op op) { return op == Op::N ? "N" : "T"; }

int lapack_int(index_t v, const char* name) {
  require(v <= std::numeric_limits<int>::max(), name, v, "must fit LAPACK's 32-bit integers");
  return static_cast<int>(v);
}

class HostBackend final : public Backend {
 public:
  MemorySpace memory_space() const override { return MemorySpace::Host; }
  std::string description() const override {
    return std::string("host (Kokkos ") + HostExec::name() + ", LAPACK/BLAS)";
  }

  std::shared_ptr<void> allocate(std::size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw Error("host allocation of " + std::to_string(bytes) + " bytes failed");
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }

  void copy(MatrixView<const float> s, MatrixView<float> d) override { copy_any(s, d); }
  void copy(MatrixView<const double> s, MatrixView<double> d) override { copy_any(s, d); }
  void copy(MatrixView<const fp16> s, MatrixView<fp16> d) override { copy_any(s, d); }
  void synchronize() override { HostExec().fence(); }

  void fill_random(const RandomSpec& spec, MatrixView<float> x) override {
    host_only(x, "X");
    const RandomDraw draw(spec);
    const index_t rows = x.rows();
    for_each_element(rows, x.cols(), [=](index_t i, index_t j) { x(i, j) = draw(i + j * rows); });
  }
  void fill_random(const RandomSpec& spec, MatrixView<fp16> x) override {
    host_only(x, "X");
    const RandomDraw draw(spec);
    const index_t rows = x.rows();
    for_each_element(rows, x.cols(), [=](index_t i, index_t j) { x(i, j) = to_fp16(draw(i + j * rows)); });
  }

  void convert(MatrixView<const float> s, MatrixView<double> d) override {
    map(s, d, [](float v) { return static_cast<double>(v); });
  }
  void convert(MatrixView<const double> s, MatrixView<float> d) override {
    map(s, d, [](double v) { return static_cast<float>(v); });
  }
  void convert(MatrixView<const float> s, MatrixView<fp16> d) override {
    map(s, d, [](float v) { return to_fp16(v); });
  }
  void convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> d) override {
    host_only(src, "src");
    host_only(s, "s");
    host_only(d, "dst");
    require_scale_shape(s, src, false);
    require_shape(d, src.rows(), src.cols(), "dst");
    const double* sv = s.data();
    for_each_element(src.rows(), src.cols(), [=](index_t i, index_t j) { d(i, j) = static_cast<float>(src(i, j) * sv[j]); });
  }
  void transpose(MatrixView<const float> s, MatrixView<float> d) override {
    host_only(s, "src");
    host_only(d, "dst");
    require_shape(d, s.cols(), s.rows(), "dst");
    for_each_element(s.rows(), s.cols(), [=](index_t i, index_t j) { d(j, i) = s(i, j); });
  }
  void scale_columns(MatrixView<const float> s, MatrixView<float> x) override { scale(s, x, false); }
  void scale_columns(MatrixView<const double> s, MatrixView<double> x) override { scale(s, x, false); }
  void scale_rows(MatrixView<const double> s, MatrixView<double> x) override { scale(s, x, true); }

  void equilibrate(MatrixView<double> g, MatrixView<double> d) override {
    host_only(g, "G");
    host_only(d, "d");
    require_eig_shapes(g, d);
    for (index_t i = 0; i < g.rows(); ++i) d(i, 0) = equilibration_factor(g(i, i));
    for_each_element(g.rows(), g.cols(), [=](index_t i, index_t j) { g(i, j) *= d(i, 0) * d(j, 0); });
  }

  void add_to_diagonal(MatrixView<double> g, double shift) override {
    host_only(g, "G");
    require_square(g, "G");
    for (index_t i = 0; i < g.rows(); ++i) g(i, i) += shift;
  }

  ExponentHistogram exponent_histogram(MatrixView<const float> x) override {
    host_only(x, "X");
    ExponentHistogram h;
    for (index_t j = 0; j < x.cols(); ++j)
      for (index_t i = 0; i < x.rows(); ++i)
        if (x(i, j) != 0.0f) ++h.count[biased_exponent(x(i, j))];
    return h;
  }

  double frobenius_norm(MatrixView<const float> x) override { return sum_squares_root(x); }
  double frobenius_norm(MatrixView<const double> x) override { return sum_squares_root(x); }

  void gemm(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
            MatrixView<double> c) override {
    host_only(a, "A");
    host_only(b, "B");
    host_only(c, "C");
    require_gemm_shapes(ta, tb, a, b, c);
    blas_gemm(ta, tb, alpha, a, b, beta, c);
  }

  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
            MatrixView<float> c, GemmPrecision precision) override {
    host_only(a, "A");
    host_only(b, "B");
    host_only(c, "C");
    require_gemm_shapes(ta, tb, a, b, c);
    if (precision == GemmPrecision::FP32) return blas_gemm(ta, tb, alpha, a, b, beta, c);
    if (precision == GemmPrecision::FP16 && !(fits_fp16_unscaled(exponent_histogram(a)) &&
                                              fits_fp16_unscaled(exponent_histogram(b))))
      precision = GemmPrecision::TF32;  // FP16 would overflow: never return Inf for finite input
    const auto round = precision == GemmPrecision::TF32 ? [](float v) { return round_to_tf32(v); }
                                                         : [](float v) { return to_float(to_fp16(v)); };
    Matrix<float> ar(*this, a.rows(), a.cols(), "A"), br(*this, b.rows(), b.cols(), "B");
    map(a, ar.view(), round);
    map(b, br.view(), round);
    blas_gemm<float>(ta, tb, alpha, ar, br, beta, c);
  }

  void shgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
              MatrixView<float> c, TensorCore tc, GemmReport* report) override {
    host_only(b, "B");
    Matrix<float> bf(*this, b.rows(), b.cols(), "B");
    map(b, bf.view(), [](fp16 v) { return to_float(v); });
    split_product(ta, tb, alpha, a, bf, beta, c, tc, /*split_a=*/true, /*split_b=*/false, report);
  }

  void hsgemm(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const float> b, float beta,
              MatrixView<float> c, TensorCore tc, GemmReport* report) override {
    host_only(a, "A");
    Matrix<float> af(*this, a.rows(), a.cols(), "A");
    map(a, af.view(), [](fp16 v) { return to_float(v); });
    split_product(ta, tb, alpha, af, b, beta, c, tc, /*split_a=*/false, /*split_b=*/true, report);
  }

  void tcec_sgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                  MatrixView<float> c, TensorCore tc, GemmReport* report) override {
    split_product(ta, tb, alpha, a, b, beta, c, tc, true, true, report);
  }

  void householder_q(MatrixView<float> a) override {
    host_only(a, "A");
    require(a.rows() >= a.cols(), "A.rows", a.rows(), "must be >= A.cols = " + std::to_string(a.cols()));
    if (a.cols() == 0) return;
    const int m = lapack_int(a.rows(), "A.rows"), n = lapack_int(a.cols(), "A.cols"), lda = lapack_int(a.ld(), "A.ld");
    std::vector<float> tau(n);
    int info = 0, lwork = -1;
    float query = 0;
    sgeqrf_(&m, &n, a.data(), &lda, tau.data(), &query, &lwork, &info);
    std::vector<float> work(static_cast<std::size_t>(query) + 1);
    lwork = static_cast<int>(work.size());
    sgeqrf_(&m, &n, a.data(), &lda, tau.data(), work.data(), &lwork, &info);
    lapack_check(info, "sgeqrf");
    lwork = -1;
    sorgqr_(&m, &n, &n, a.data(), &lda, tau.data(), &query, &lwork, &info);
    work.resize(static_cast<std::size_t>(query) + 1);
    lwork = static_cast<int>(work.size());
    sorgqr_(&m, &n, &n, a.data(), &lda, tau.data(), work.data(), &lwork, &info);
    lapack_check(info, "sorgqr");
  }

  int inverse_cholesky_factor(MatrixView<double> g, MatrixView<double> rinv) override {
    host_only(g, "G");
    host_only(rinv, "rinv");
    require_square(g, "G");
    require_shape(rinv, g.rows(), g.cols(), "rinv");
    if (g.rows() == 0) return 0;
    const int n = lapack_int(g.rows(), "G.rows"), lda = lapack_int(g.ld(), "G.ld");
    const int ldr = lapack_int(rinv.ld(), "rinv.ld");
    int info = 0;
    dpotrf_("U", &n, g.data(), &lda, &info);
    require(info >= 0, "dpotrf argument", -info, "is invalid");
    if (info > 0) return info;
    for_each_element(g.rows(), g.cols(), [=](index_t i, index_t j) { rinv(i, j) = i <= j ? g(i, j) : 0.0; });
    dtrtri_("U", "N", &n, rinv.data(), &ldr, &info);
    lapack_check(info, "dtrtri");  // R's diagonal is positive: a singular R cannot reach here
    return 0;
  }

  void symmetric_eig(MatrixView<double> g, MatrixView<double> w) override {
    host_only(g, "G");
    host_only(w, "w");
    require_eig_shapes(g, w);
    if (g.rows() == 0) return;
    const int n = lapack_int(g.rows(), "G.rows"), lda = lapack_int(g.ld(), "G.ld");
    int info = 0, lwork = -1, liwork = -1, iquery = 0;
    double query = 0;
    dsyevd_("V", "U", &n, g.data(), &lda, w.data(), &query, &lwork, &iquery, &liwork, &info);
    std::vector<double> work(static_cast<std::size_t>(query) + 1);
    std::vector<int> iwork(static_cast<std::size_t>(iquery) + 1);
    lwork = static_cast<int>(work.size()), liwork = static_cast<int>(iwork.size());
    dsyevd_("V", "U", &n, g.data(), &lda, w.data(), work.data(), &lwork, iwork.data(), &liwork, &info);
    if (info > 0) throw NumericalBreakdown("dsyevd did not converge (info = " + std::to_string(info) + ")");
    lapack_check(info, "dsyevd");
    for (index_t j = 0; j < g.cols() / 2; ++j) {  // LAPACK's ascending order to descending
      std::swap(w(j, 0), w(g.cols() - 1 - j, 0));
      for (index_t i = 0; i < g.rows(); ++i) std::swap(g(i, j), g(i, g.cols() - 1 - j));
    }
  }

  void svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt,
           SvdMethod method) override {
    for (auto* v : {&a, &u, &vt}) host_only(*v, "A");
    host_only(s, "s");
    const index_t m = a.rows(), n = a.cols();
    require_svd_shapes(a, s, u, vt);
    require_backend_svd_method(method);
    if (n == 0) return;
    if (method == SvdMethod::Auto) method = SvdMethod::Gesdd;
    const int im = lapack_int(m, "A.rows"), in = lapack_int(n, "A.cols"), lda = lapack_int(a.ld(), "A.ld");
    const int ldu = lapack_int(u.ld(), "U.ld"), ldvt = lapack_int(vt.ld(), "VT.ld");
    int info = 0, lwork = -1;
    float query = 0;
    std::vector<float> work;
    switch (method) {
      case SvdMethod::Polar:
      case SvdMethod::Auto:
      case SvdMethod::Gram:  // rejected above
        throw UnsupportedConfiguration("the polar-decomposition SVD (cuSOLVER gesvdp) exists only on the GPU");
      case SvdMethod::Gesvd:
        sgesvd_("S", "S", &im, &in, a.data(), &lda, s.data(), u.data(), &ldu, vt.data(), &ldvt, &query, &lwork, &info);
        work.resize(static_cast<std::size_t>(query) + 1);
        lwork = static_cast<int>(work.size());
        sgesvd_("S", "S", &im, &in, a.data(), &lda, s.data(), u.data(), &ldu, vt.data(), &ldvt, work.data(), &lwork,
                &info);
        break;
      case SvdMethod::Gesdd: {
        std::vector<int> iwork(8 * static_cast<std::size_t>(n));
        sgesdd_("S", &im, &in, a.data(), &lda, s.data(), u.data(), &ldu, vt.data(), &ldvt, &query, &lwork,
                iwork.data(), &info);
        work.resize(static_cast<std::size_t>(query) + 1);
        lwork = static_cast<int>(work.size());
        sgesdd_("S", &im, &in, a.data(), &lda, s.data(), u.data(), &ldu, vt.data(), &ldvt, work.data(), &lwork,
                iwork.data(), &info);
        break;
      }
      case SvdMethod::Jacobi: {
        // sgesvj: A := U * diag(s) in place, V returned (not transposed); columns come sorted.
        work.resize(std::max<std::size_t>(6, static_cast<std::size_t>(m + n)));
        lwork = static_cast<int>(work.size());
        Matrix<float> v(*this, n, n, "V");
        const int ldv = in;
        sgesvj_("G", "U", "V", &im, &in, a.data(), &lda, s.data(), &in, v.data(), &ldv, work.data(), &lwork, &info);
        if (info == 0 && work[0] != 1.0f)
          for (index_t i = 0; i < n; ++i) s.data()[i] *= work[0];  // SCALE = work(1), see sgesvj docs
        for_each_element(m, n, [=](index_t i, index_t j) { u(i, j) = a(i, j); });
        MatrixView<float> vv = v.view();
        for_each_element(n, n, [=](index_t i, index_t j) { vt(j, i) = vv(i, j); });
        break;
      }
    }
    if (info > 0) throw NumericalBreakdown(std::string(to_string(method)) + " did not converge (info = " +
                                           std::to_string(info) + ")");
    lapack_check(info, to_string(method));
  }

 private:
  template <class T>
  double sum_squares_root(MatrixView<const T> x) {
    host_only(x, "X");
    double sum = 0.0;
    const index_t rows = x.rows();
    Kokkos::parallel_reduce(
        "randnla::host::frobenius", Kokkos::RangePolicy<HostExec>(0, x.cols()),
        [=](const index_t j, double& acc) {
          for (index_t i = 0; i < rows; ++i) acc += static_cast<double>(x(i, j)) * x(i, j);
        },
        sum);
    return std::sqrt(sum);
  }

  template <class T>
  static void host_only(const MatrixView<T>& v, const std::string& name) {
    require_space(v, MemorySpace::Host, name);
  }
  /// X(i, j) *= s[i] (by_row) or s[j].
  template <class T>
  static void scale(MatrixView<const T> s, MatrixView<T> x, bool by_row) {
    host_only(s, "s");
    host_only(x, "X");
    require_scale_shape(s, x, by_row);
    const T* sv = s.data();
    for_each_element(x.rows(), x.cols(), [=](index_t i, index_t j) { x(i, j) *= sv[by_row ? i : j]; });
  }
  static void lapack_check(int info, const std::string& routine) {
    if (info != 0) throw Error(routine + " failed with info = " + std::to_string(info));
  }

  template <class S, class D, class F>
  void map(MatrixView<S> s, MatrixView<D> d, F f) {
    host_only(s, "src");
    host_only(d, "dst");
    require_shape(d, s.rows(), s.cols(), "dst");
    for_each_element(s.rows(), s.cols(), [=](index_t i, index_t j) { d(i, j) = f(s(i, j)); });
  }
  template <class T>
  void copy_any(MatrixView<const T> s, MatrixView<T> d) {
    require_shape(d, s.rows(), s.cols(), "dst");
    require(s.space() == MemorySpace::Host && d.space() == MemorySpace::Host, "copy spaces",
            std::string(to_string(s.space())) + "->" + to_string(d.space()),
            "the host backend copies host memory only");
    for (index_t j = 0; j < s.cols(); ++j) std::memcpy(&d(0, j), &s(0, j), sizeof(T) * s.rows());
  }

  template <class T>
  void blas_gemm(Op ta, Op tb, T alpha, MatrixView<const T> a, MatrixView<const T> b, T beta, MatrixView<T> c) {
    if (c.empty()) return;
    if (op_cols(ta, a.rows(), a.cols()) == 0) {  // k = 0: BLAS semantics, C := beta * C
      for_each_element(c.rows(), c.cols(), [=](index_t i, index_t j) { c(i, j) = beta == T(0) ? T(0) : beta * c(i, j); });
      return;
    }
    compat::gemm(blas_op(ta), blas_op(tb), alpha, kokkos_of(a), kokkos_of(b), beta, kokkos_of(c));
  }

  /// hi and lo parts of x as exact FP32 values (FP16 or TF32 numbers); x scaled by 2^s for FP16.
  void split(MatrixView<const float> x, const OperandPlan& plan, Matrix<float>& hi, Matrix<float>& lo) {
    hi = Matrix<float>(*this, x.rows(), x.cols(), "hi");
    lo = Matrix<float>(*this, x.rows(), x.cols(), "lo");
    MatrixView<float> h = hi.view(), l = lo.view();
    const int s = plan.scale_exponent;
    if (plan.use_fp16)
      for_each_element(x.rows(), x.cols(), [=](index_t i, index_t j) {
        fp16 a, b;
        split_halfhalf(x(i, j), s, a, b);
        h(i, j) = to_float(a);
        l(i, j) = to_float(b);
      });
    else
      for_each_element(x.rows(), x.cols(), [=](index_t i, index_t j) { split_tf32(x(i, j), h(i, j), l(i, j)); });
  }

  /// C := alpha * op(A) op(B) + beta * C with A and/or B split, the split parts' products summed
  /// as the mma.sync kernel does: hi*hi + (lo*hi + hi*lo) * 2^-11, then unscaled by 2^-(sA + sB).
  /// The wgmma kernel splits the same numbers (its lo is not shifted and its scale is per row and
  /// K slice, so hi and lo differ from these only where an element falls into FP16's subnormals).
  void split_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                     MatrixView<float> c, TensorCore tc, bool split_a, bool split_b, GemmReport* report) {
    host_only(a, "A");
    host_only(b, "B");
    host_only(c, "C");
    require_gemm_shapes(ta, tb, a, b, c);
    OperandPlan pa = split_a ? plan_operand(exponent_histogram(a), tc) : OperandPlan{true, 0};
    OperandPlan pb = split_b ? plan_operand(exponent_histogram(b), tc) : OperandPlan{true, 0};
    if (!pa.use_fp16 || !pb.use_fp16) pa = pb = OperandPlan{};  // one Tensor Core format per product
    if (report) *report = GemmReport{pa.use_fp16 ? TensorCore::FP16 : TensorCore::TF32,
                                     pb.use_fp16 ? TensorCore::FP16 : TensorCore::TF32, pa.scale_exponent,
                                     pb.scale_exponent};
    Matrix<float> ahi, alo, bhi, blo;
    if (split_a) split(a, pa, ahi, alo);
    if (split_b) split(b, pb, bhi, blo);
    MatrixView<const float> a_hi = split_a ? MatrixView<const float>(ahi) : a;
    MatrixView<const float> b_hi = split_b ? MatrixView<const float>(bhi) : b;
    Matrix<float> acc(*this, c.rows(), c.cols(), "acc"), corr(*this, c.rows(), c.cols(), "corr");
    blas_gemm<float>(ta, tb, 1.0f, a_hi, b_hi, 0.0f, acc);
    blas_gemm<float>(ta, tb, 1.0f, split_a ? MatrixView<const float>(alo) : a_hi,
                     split_a ? b_hi : MatrixView<const float>(blo), 0.0f, corr);
    if (split_a && split_b) blas_gemm<float>(ta, tb, 1.0f, a_hi, blo, 1.0f, corr);
    const float unscale = alpha * exp2i(-pa.scale_exponent) * exp2i(-pb.scale_exponent);
    MatrixView<float> av = acc.view(), cv = corr.view();
    for_each_element(c.rows(), c.cols(), [=](index_t i, index_t j) {
      const float sum = av(i, j) + cv(i, j) * kSplitShiftInverse;
      c(i, j) = beta == 0.0f ? unscale * sum : unscale * sum + beta * c(i, j);
    });
  }
};

}  // namespace

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace randnla
