// The portable backend: every operation in Kokkos on the execution space it is given, so it runs
// wherever Kokkos does (Serial, OpenMP, Threads, Cuda, HIP, SYCL). Products go through Kokkos
// Kernels (vendor BLAS where Kokkos Kernels has a TPL for the space: OpenBLAS, cuBLAS, ...);
// element-wise operations, reductions and the Philox fills are Kokkos kernels; the small dense
// factorizations (Householder QR, Cholesky, syevd, the SVDs) run LAPACK on the host, through a
// host copy where the data lives in device memory. The Tensor Core products are emulated with the
// same splits and terms as the CUDA kernels, for validation: capabilities().tensor_cores is false.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "cholesky_qr/cholesky_qr_ops.hpp"
#include "sparse_projection/sparse_projection_ops.hpp"
#include "tsqr/reflector_tsqr_ops.hpp"
#include "kernels.hpp"
#include "lapack.hpp"

namespace randnla {
namespace portable {

inline const char* blas_op(Op op) { return op == Op::N ? "N" : "T"; }

inline int lapack_int(index_t v, const char* name) {
  require(v <= std::numeric_limits<int>::max(), name, v, "must fit LAPACK's 32-bit integers");
  return static_cast<int>(v);
}

inline void lapack_check(int info, const std::string& routine) {
  if (info != 0) throw Error(routine + " failed with info = " + std::to_string(info));
}

template <class Exec>
class PortableBackend final : public Backend {
  using MemSpace = typename Exec::memory_space;
  static constexpr bool kHostMemory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

 public:
  explicit PortableBackend(const Exec& exec) : exec_(exec) {
    provide<CholeskyQrOps>(std::make_shared<CholeskyQrKernels<Exec>>(exec, memory_space()));
    provide<SparseProjectionOps>(std::make_shared<SparseProjectionKernels<Exec>>(exec, memory_space()));
    provide<TensorCoreTsqrOps>(std::make_shared<ReflectorTsqrKernels<Exec>>(exec, *this));
  }

  MemorySpace memory_space() const override { return kHostMemory ? MemorySpace::Host : MemorySpace::Device; }
  int device() const override { return compat::device_of(exec_); }
  void* native_stream() const override { return compat::native_stream_of(exec_); }
  std::string description() const override {
    return std::string("portable (Kokkos ") + Exec::name() + ", Kokkos Kernels + LAPACK)";
  }
  Capabilities capabilities() const override {
    Capabilities c;
    c.gesdd = true;
    return c;
  }

  std::shared_ptr<void> do_allocate(std::size_t bytes) override {
    if (kHostMemory) {
      void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
      if (!p) throw Error("host allocation of " + std::to_string(bytes) + " bytes failed");
      return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    }
    void* p = Kokkos::kokkos_malloc<MemSpace>("randnla::portable", bytes > 0 ? bytes : 1);
    return std::shared_ptr<void>(p, [](void* q) { Kokkos::kokkos_free<MemSpace>(q); });
  }
  void synchronize() override { exec_.fence(); }

  // The hooks are public here: nvcc takes no extended lambda in a protected member function.
  void do_copy(MatrixView<const float> s, MatrixView<float> d) override { copy_any(s, d); }
  void do_copy(MatrixView<const double> s, MatrixView<double> d) override { copy_any(s, d); }
  void do_copy(MatrixView<const fp16> s, MatrixView<fp16> d) override { copy_any(s, d); }
  void do_fill_random(const RandomDraw& draw, MatrixView<float> x) override { portable::fill_random(exec_, draw, x); }
  void do_fill_random(const RandomDraw& draw, MatrixView<fp16> x) override { portable::fill_random(exec_, draw, x); }
  void do_convert(MatrixView<const float> s, MatrixView<double> d) override { portable::map(exec_, s, d, ToDouble{}); }
  void do_convert(MatrixView<const double> s, MatrixView<float> d) override { portable::map(exec_, s, d, ToFloat{}); }
  void do_convert(MatrixView<const float> s, MatrixView<fp16> d) override { portable::map(exec_, s, d, ToHalf{}); }
  void do_convert(MatrixView<const fp16> s, MatrixView<float> d) override { portable::map(exec_, s, d, ToFloat{}); }
  void do_transpose(MatrixView<const float> s, MatrixView<float> d) override { portable::transpose(exec_, s, d); }
  void do_scale(float alpha, MatrixView<float> x) override { portable::scale_all(exec_, alpha, x); }
  void do_scale(double alpha, MatrixView<double> x) override { portable::scale_all(exec_, alpha, x); }
  void do_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) override {
    portable::add(exec_, alpha, x, beta, y);
  }
  void do_scale(MatrixView<const float> s, MatrixView<float> x, bool by_row) override { portable::scale(exec_, s, x, by_row); }
  void do_scale(MatrixView<const double> s, MatrixView<double> x, bool by_row) override { portable::scale(exec_, s, x, by_row); }
  void do_add_to_diagonal(MatrixView<double> g, double shift) override { portable::add_to_diagonal(exec_, g, shift); }
  ExponentHistogram do_exponent_histogram(MatrixView<const float> x) override { return portable::exponent_histogram(exec_, x); }
  ExponentHistogram do_convert_measured(MatrixView<const float> s, MatrixView<fp16> d, float scale) override {
    portable::map(exec_, s, d, ToHalf{scale});
    return portable::exponent_histogram(exec_, s);
  }
  double do_frobenius_norm(MatrixView<const float> x) override { return std::sqrt(portable::sum_of_squares(exec_, x)); }
  double do_frobenius_norm(MatrixView<const double> x) override { return std::sqrt(portable::sum_of_squares(exec_, x)); }

  void do_product(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
                  MatrixView<double> c) override {
    blas_gemm(ta, tb, alpha, a, b, beta, c);
  }
  void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                  MatrixView<float> c) override {
    Matrix<float> aw(*this, a.rows(), a.cols(), "A"), bw(*this, b.rows(), b.cols(), "B");  // exact widening
    portable::map(exec_, a, aw.view(), ToFloat{});
    portable::map(exec_, b, bw.view(), ToFloat{});
    blas_gemm<float>(ta, tb, alpha, aw, bw, beta, c);
  }
  void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                  MatrixView<fp16> c) override {
    portable::half_sum_product(exec_, ta, tb, alpha, a, b, beta, c);
  }
  void do_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                  MatrixView<float> c, const ProductPrecision& precision, ProductReport* report) override {
    if (precision.mode == ProductMode::FP32) return blas_gemm(ta, tb, alpha, a, b, beta, c);
    if (precision.mode == ProductMode::Split) return split_product(ta, tb, alpha, a, b, beta, c, precision.split, true, true, report);
    Matrix<float> ar(*this, a.rows(), a.cols(), "A"), br(*this, b.rows(), b.cols(), "B");
    if (precision.mode == ProductMode::TF32) {
      portable::map(exec_, a, ar.view(), RoundToTf32{});
      portable::map(exec_, b, br.view(), RoundToTf32{});
    } else {
      portable::map(exec_, a, ar.view(), RoundToHalf{});
      portable::map(exec_, b, br.view(), RoundToHalf{});
    }
    blas_gemm<float>(ta, tb, alpha, ar, br, beta, c);
  }
  void do_product_split(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
                        MatrixView<float> c, TensorCore format, ProductReport* report) override {
    Matrix<float> bf(*this, b.rows(), b.cols(), "B");
    portable::map(exec_, b, bf.view(), ToFloat{});
    split_product(ta, tb, alpha, a, bf, beta, c, format, /*split_a=*/true, /*split_b=*/false, report);
  }

  void do_qr(MatrixView<float> a_in, MatrixView<float> tau_in) override {
    OnHost<float> a(*this, a_in), tau(*this, tau_in, /*read=*/false);
    const int m = lapack_int(a->rows(), "A.rows"), n = lapack_int(a->cols(), "A.cols");
    const int lda = lapack_int(a->ld(), "A.ld");
    int info = 0, lwork = -1;
    float query = 0;
    sgeqrf_(&m, &n, a->data(), &lda, tau->data(), &query, &lwork, &info);
    std::vector<float> work(static_cast<std::size_t>(query) + 1);
    lwork = static_cast<int>(work.size());
    sgeqrf_(&m, &n, a->data(), &lda, tau->data(), work.data(), &lwork, &info);
    lapack_check(info, "sgeqrf");
    a.write_back();
    tau.write_back();
  }

  void do_form_q(MatrixView<float> a_in, MatrixView<const float> tau_in) override {
    OnHost<float> a(*this, a_in);
    const int m = lapack_int(a->rows(), "A.rows"), n = lapack_int(a->cols(), "A.cols");
    const int lda = lapack_int(a->ld(), "A.ld");
    std::vector<float> tau(static_cast<std::size_t>(n));
    copy(tau_in, MatrixView<float>(tau.data(), n, 1, n, MemorySpace::Host));
    int info = 0, lwork = -1;
    float query = 0;
    sorgqr_(&m, &n, &n, a->data(), &lda, tau.data(), &query, &lwork, &info);
    std::vector<float> work(static_cast<std::size_t>(query) + 1);
    lwork = static_cast<int>(work.size());
    sorgqr_(&m, &n, &n, a->data(), &lda, tau.data(), work.data(), &lwork, &info);
    lapack_check(info, "sorgqr");
    a.write_back();
  }

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
  /// A view's data where LAPACK can reach it: the view itself in host memory, else a host copy
  /// (read from the device unless `read` is false) that write_back() returns to the view.
  template <class T>
  class OnHost {
   public:
    OnHost(PortableBackend& b, MatrixView<T> v, bool read = true) : b_(b), device_(v), view_(v) {
      if (kHostMemory) return;
      buffer_.resize(static_cast<std::size_t>(v.size()));
      view_ = MatrixView<T>(buffer_.data(), v.rows(), v.cols(), v.rows() > 1 ? v.rows() : 1, MemorySpace::Host);
      if (read) b_.copy(MatrixView<const T>(device_), view_);
    }
    MatrixView<T>* operator->() { return &view_; }
    MatrixView<T>& operator*() { return view_; }
    void write_back() {
      if (!kHostMemory) b_.copy(MatrixView<const T>(view_), device_);
    }

   private:
    PortableBackend& b_;
    MatrixView<T> device_, view_;
    std::vector<T> buffer_;
  };

  /// dst := src between host memory and this backend's; column by column where either is strided.
  template <class T>
  void copy_any(MatrixView<const T> s, MatrixView<T> d) {
    const bool src_host = s.space() == MemorySpace::Host, dst_host = d.space() == MemorySpace::Host;
    require(kHostMemory ? src_host && dst_host : true, "copy spaces",
            std::string(to_string(s.space())) + "->" + to_string(d.space()),
            "this backend's memory is host memory: device views belong to another backend");
    if (src_host == dst_host) {
      if (src_host && !kHostMemory)
        return copy_columns<Kokkos::HostSpace, Kokkos::HostSpace>(s, d);
      return copy_columns<MemSpace, MemSpace>(s, d);
    }
    if (src_host) return copy_columns<MemSpace, Kokkos::HostSpace>(s, d);
    copy_columns<Kokkos::HostSpace, MemSpace>(s, d);
  }
  template <class DstSpace, class SrcSpace, class T>
  void copy_columns(MatrixView<const T> s, MatrixView<T> d) {
    using Src = Kokkos::View<const T*, SrcSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    using Dst = Kokkos::View<T*, DstSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const bool contiguous = (s.ld() == s.rows() && d.ld() == d.rows()) || s.cols() == 1;
    const index_t pieces = contiguous ? 1 : s.cols(), length = contiguous ? s.size() : s.rows();
    for (index_t j = 0; j < pieces; ++j)
      Kokkos::deep_copy(exec_, Dst(&d(0, j), length), Src(&s(0, j), length));
    exec_.fence();
  }

  template <class T>
  void blas_gemm(Op ta, Op tb, T alpha, MatrixView<const T> a, MatrixView<const T> b, T beta, MatrixView<T> c) {
    if (op_cols(ta, a.rows(), a.cols()) == 0) return portable::scale_all(exec_, beta, c);
    compat::gemm(exec_, blas_op(ta), blas_op(tb), alpha, kokkos_view<Exec>(a), kokkos_view<Exec>(b), beta,
                 kokkos_view<Exec>(c));
  }

  /// C := alpha * op(A) op(B) + beta * C with A and/or B split, the split parts' products summed
  /// as the mma.sync kernel does: hi*hi + (lo*hi + hi*lo) * 2^-11, then unscaled by 2^-(sA + sB).
  /// The wgmma kernel splits the same numbers (its lo is not shifted and its scale is per row and
  /// K slice, so hi and lo differ from these only where an element falls into FP16's subnormals).
  void split_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                     MatrixView<float> c, TensorCore tc, bool split_a, bool split_b, ProductReport* report) {
    OperandPlan pa = split_a ? plan_operand(exponent_histogram(a), tc) : OperandPlan{true, 0};
    OperandPlan pb = split_b ? plan_operand(exponent_histogram(b), tc) : OperandPlan{true, 0};
    if (!pa.use_fp16 || !pb.use_fp16) pa = pb = OperandPlan{};  // one Tensor Core format per product
    if (report) {
      report->a_format = pa.use_fp16 ? TensorCore::FP16 : TensorCore::TF32;
      report->b_format = pb.use_fp16 ? TensorCore::FP16 : TensorCore::TF32;
      report->a_scale_exponent = pa.scale_exponent, report->b_scale_exponent = pb.scale_exponent;
    }
    Matrix<float> ahi, alo, bhi, blo;
    if (split_a) split_parts(a, pa, ahi, alo);
    if (split_b) split_parts(b, pb, bhi, blo);
    MatrixView<const float> a_hi = split_a ? MatrixView<const float>(ahi) : a;
    MatrixView<const float> b_hi = split_b ? MatrixView<const float>(bhi) : b;
    Matrix<float> main(*this, c.rows(), c.cols(), "main"), corr(*this, c.rows(), c.cols(), "corr");
    blas_gemm<float>(ta, tb, 1.0f, a_hi, b_hi, 0.0f, main);
    blas_gemm<float>(ta, tb, 1.0f, split_a ? MatrixView<const float>(alo) : a_hi,
                     split_a ? b_hi : MatrixView<const float>(blo), 0.0f, corr);
    if (split_a && split_b) blas_gemm<float>(ta, tb, 1.0f, a_hi, blo, 1.0f, corr);
    const float unscale = alpha * exp2i(-pa.scale_exponent) * exp2i(-pb.scale_exponent);
    portable::combine_split_terms(exec_, MatrixView<const float>(main), MatrixView<const float>(corr), unscale, beta, c);
  }
  void split_parts(MatrixView<const float> x, const OperandPlan& plan, Matrix<float>& hi, Matrix<float>& lo) {
    hi = Matrix<float>(*this, x.rows(), x.cols(), "hi");
    lo = Matrix<float>(*this, x.rows(), x.cols(), "lo");
    portable::split(exec_, x, plan, hi.view(), lo.view());
  }

  Exec exec_;
};

}  // namespace portable

/// A Backend that queues its work on `exec` (an execution-space instance) and allocates in
/// Exec::memory_space. Kokkos must be initialised while the backend and its allocations are used.
/// Included by choose_backend.cpp alone, which makes one for each execution space Kokkos was built with.
template <class Exec>
std::unique_ptr<Backend> make_portable_backend(const Exec& exec) {
  return std::make_unique<portable::PortableBackend<Exec>>(exec);
}

}  // namespace randnla
