// The CUDA factorization family: cuSOLVER (geqrf, orgqr, potrf, the SVDs), cuBLAS trsm, and the library's
// own symmetric eigensolver on compute 9.0 devices (cuda/symmetric_eig.cuh).
#pragma once

#include <algorithm>
#include <vector>

#include "cuda/context/cuda_context.cuh"

namespace randnla {
namespace cuda {
namespace solver {

// cuSOLVER's geqrf and orgqr by element type, for the families typed over it.
inline cusolverStatus_t geqrf_buffer_size(cusolverDnHandle_t h, int m, int n, float* a, int lda, int* lwork) {
  return cusolverDnSgeqrf_bufferSize(h, m, n, a, lda, lwork);
}
inline cusolverStatus_t geqrf_buffer_size(cusolverDnHandle_t h, int m, int n, double* a, int lda, int* lwork) {
  return cusolverDnDgeqrf_bufferSize(h, m, n, a, lda, lwork);
}
inline cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, float* a, int lda, float* tau, float* work,
                              int lwork, int* info) {
  return cusolverDnSgeqrf(h, m, n, a, lda, tau, work, lwork, info);
}
inline cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, double* a, int lda, double* tau, double* work,
                              int lwork, int* info) {
  return cusolverDnDgeqrf(h, m, n, a, lda, tau, work, lwork, info);
}
inline cusolverStatus_t orgqr_buffer_size(cusolverDnHandle_t h, int m, int n, int k, const float* a, int lda,
                                          const float* tau, int* lwork) {
  return cusolverDnSorgqr_bufferSize(h, m, n, k, a, lda, tau, lwork);
}
inline cusolverStatus_t orgqr_buffer_size(cusolverDnHandle_t h, int m, int n, int k, const double* a, int lda,
                                          const double* tau, int* lwork) {
  return cusolverDnDorgqr_bufferSize(h, m, n, k, a, lda, tau, lwork);
}
inline cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, float* a, int lda, const float* tau,
                              float* work, int lwork, int* info) {
  return cusolverDnSorgqr(h, m, n, k, a, lda, tau, work, lwork, info);
}
inline cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, double* a, int lda, const double* tau,
                              double* work, int lwork, int* info) {
  return cusolverDnDorgqr(h, m, n, k, a, lda, tau, work, lwork, info);
}

}  // namespace solver

class CudaFactorizations : public virtual FactorizationOps, public virtual CudaContext {
 public:
  void do_qr(MatrixView<float> a, MatrixView<float> tau) override { householder_qr(a, tau); }
  void do_qr(MatrixView<double> a, MatrixView<double> tau) override { householder_qr(a, tau); }
  void do_form_q(MatrixView<float> a, MatrixView<const float> tau) override { thin_q(a, tau); }
  void do_form_q(MatrixView<double> a, MatrixView<const double> tau) override { thin_q(a, tau); }

  /// cuSOLVER potrf (0.21 ms at l = 272 on the H100, latency rather than work: a one-block
  /// kernel of this library took 0.95 ms, issue-bound on one SM: perf_tests/results/bench_dense_parts.md).
  int do_cholesky(MatrixView<double> g) override {
    const DeviceScope scope(device_);
    const int n = blas_int(g.rows(), "G.rows"), lda = blas_int(g.ld(), "G.ld");
    int lwork = 0;
    RANDNLA_CUDA(cusolverDnDpotrf_bufferSize(solver_.get(), CUBLAS_FILL_MODE_UPPER, n, g.data(), lda, &lwork));
    Matrix<double> work(*this, std::max(lwork, 1), 1, "work");
    RANDNLA_CUDA(cusolverDnDpotrf(solver_.get(), CUBLAS_FILL_MODE_UPPER, n, g.data(), lda, work.data(), lwork, device_info()));
    const int info = host_info();
    require(info >= 0, "potrf argument", -info, "is invalid");
    return info;
  }

  void do_triangular_solve(Side side, Op op, double alpha, MatrixView<const double> r, MatrixView<double> b) override {
    const DeviceScope scope(device_);
    RANDNLA_CUDA(cublasDtrsm(blas_.get(), side == Side::Left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT,
                             CUBLAS_FILL_MODE_UPPER, cublas_op(op), CUBLAS_DIAG_NON_UNIT, blas_int(b.rows(), "B.rows"),
                             blas_int(b.cols(), "B.cols"), &alpha, r.data(), blas_int(r.ld(), "R.ld"), b.data(),
                             blas_int(b.ld(), "B.ld")));
  }

  /// The library's cluster tridiagonalisation and divide and conquer (symmetric_eig.cuh) where the
  /// device and n allow (compute 9.0, 3 <= n <= eig_max_order_: 654 on the H100, clusters of 8
  /// blocks up to n = 464 and of 16 above; 1.77 ms against cuSOLVER's 2.48 at n = 272,
  /// perf_tests/results/bench_dense_parts.md), else cuSOLVER Xsyevd, which also takes the input
  /// the own path declines (a non-finite entry or eigenvector).
  void do_symmetric_eig(MatrixView<double> g, MatrixView<double> w) override {
    const DeviceScope scope(device_);
    if (g.rows() >= 3 && g.rows() <= eig_max_order_) {
      const int n = static_cast<int>(g.rows());
      auto work = allocate(cuda::symmetric_eig_dc_workspace_bytes(n));
      if (cuda::symmetric_eig_dc(g, w, work.get(), blas_.get(), stream(), side_.get())) return;
    }
    SolverParams params;
    std::size_t dev_bytes = 0, host_bytes = 0;
    RANDNLA_CUDA(cusolverDnXsyevd_bufferSize(solver_.get(), params.get(), CUSOLVER_EIG_MODE_VECTOR,
                                             CUBLAS_FILL_MODE_UPPER, g.rows(), CUDA_R_64F, g.data(), g.ld(), CUDA_R_64F,
                                             w.data(), CUDA_R_64F, &dev_bytes, &host_bytes));
    auto dev_work = allocate(dev_bytes + 1);
    std::vector<char> host_work(host_bytes + 1);
    RANDNLA_CUDA(cusolverDnXsyevd(solver_.get(), params.get(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER,
                                  g.rows(), CUDA_R_64F, g.data(), g.ld(), CUDA_R_64F, w.data(), CUDA_R_64F,
                                  dev_work.get(), dev_bytes, host_work.data(), host_bytes, device_info()));
    const int info = host_info();
    if (info > 0) throw NumericalBreakdown("syevd did not converge (info = " + std::to_string(info) + ")");
    require(info == 0, "syevd argument", -info, "is invalid");
    cuda::launch_reverse_eigenpairs(g, w, stream());
  }

  /// cuSOLVER gesvd, gesvdj (Jacobi) or Xgesvdp (polar; Auto: 6.0 ms against gesvd's 27 ms for
  /// 272 x 272 on the H100). cuSOLVER has no divide and conquer: capabilities() leaves gesdd out.
  void do_svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt,
              SvdMethod method) override {
    const DeviceScope scope(device_);
    const index_t m = a.rows(), n = a.cols();
    const int im = blas_int(m, "A.rows"), in = blas_int(n, "A.cols"), lda = blas_int(a.ld(), "A.ld");
    const int ldu = blas_int(u.ld(), "U.ld"), ldvt = blas_int(vt.ld(), "VT.ld");
    if (method == SvdMethod::Gesvd) {
      int lwork = 0;
      RANDNLA_CUDA(cusolverDnSgesvd_bufferSize(solver_.get(), im, in, &lwork));
      Matrix<float> work(*this, std::max(lwork, 1), 1, "work");
      RANDNLA_CUDA(cusolverDnSgesvd(solver_.get(), 'S', 'S', im, in, a.data(), lda, s.data(), u.data(), ldu, vt.data(),
                                    ldvt, work.data(), lwork, nullptr, device_info()));
    } else if (method == SvdMethod::Jacobi) {
      gesvdj_params params;
      int lwork = 0;
      Matrix<float> v(*this, n, n, "V");
      RANDNLA_CUDA(cusolverDnSgesvdj_bufferSize(solver_.get(), CUSOLVER_EIG_MODE_VECTOR, 1, im, in, a.data(), lda,
                                                s.data(), u.data(), ldu, v.data(), in, &lwork, params.get()));
      Matrix<float> work(*this, std::max(lwork, 1), 1, "work");
      RANDNLA_CUDA(cusolverDnSgesvdj(solver_.get(), CUSOLVER_EIG_MODE_VECTOR, 1, im, in, a.data(), lda, s.data(),
                                     u.data(), ldu, v.data(), in, work.data(), lwork, device_info(), params.get()));
      cuda::launch_transpose(v.view(), vt, stream());
    } else {  // Polar and Auto
      Matrix<float> v(*this, n, n, "V");
      SolverParams params;
      std::size_t dev_bytes = 0, host_bytes = 0;
      RANDNLA_CUDA(cusolverDnXgesvdp_bufferSize(solver_.get(), params.get(), CUSOLVER_EIG_MODE_VECTOR, 1, m, n,
                                                CUDA_R_32F, a.data(), a.ld(), CUDA_R_32F, s.data(), CUDA_R_32F, u.data(),
                                                u.ld(), CUDA_R_32F, v.data(), n, CUDA_R_32F, &dev_bytes, &host_bytes));
      auto dev_work = allocate(dev_bytes + 1);
      std::vector<char> host_work(host_bytes + 1);
      double err_sigma = 0;
      RANDNLA_CUDA(cusolverDnXgesvdp(solver_.get(), params.get(), CUSOLVER_EIG_MODE_VECTOR, 1, m, n, CUDA_R_32F,
                                     a.data(), a.ld(), CUDA_R_32F, s.data(), CUDA_R_32F, u.data(), u.ld(), CUDA_R_32F,
                                     v.data(), n, CUDA_R_32F, dev_work.get(), dev_bytes, host_work.data(), host_bytes,
                                     device_info(), &err_sigma));
      cuda::launch_transpose(v.view(), vt, stream());
    }
    const int info = host_info();
    if (info > 0)
      throw NumericalBreakdown(std::string(to_string(method)) + " did not converge (info = " + std::to_string(info) + ")");
    require(info == 0, "svd argument", -info, "is invalid");
  }

 private:
  template <class T>
  void householder_qr(MatrixView<T> a, MatrixView<T> tau) {
    const DeviceScope scope(device_);
    const int m = blas_int(a.rows(), "A.rows"), n = blas_int(a.cols(), "A.cols"), lda = blas_int(a.ld(), "A.ld");
    int lwork = 0;
    RANDNLA_CUDA(solver::geqrf_buffer_size(solver_.get(), m, n, a.data(), lda, &lwork));
    Matrix<T> work(*this, std::max(lwork, 1), 1, "work");
    RANDNLA_CUDA(solver::geqrf(solver_.get(), m, n, a.data(), lda, tau.data(), work.data(), lwork, device_info()));
    require_info_zero("geqrf");
  }

  template <class T>
  void thin_q(MatrixView<T> a, MatrixView<const T> tau) {
    const DeviceScope scope(device_);
    const int m = blas_int(a.rows(), "A.rows"), n = blas_int(a.cols(), "A.cols"), lda = blas_int(a.ld(), "A.ld");
    int lwork = 0;
    RANDNLA_CUDA(solver::orgqr_buffer_size(solver_.get(), m, n, n, a.data(), lda, tau.data(), &lwork));
    Matrix<T> work(*this, std::max(lwork, 1), 1, "work");
    RANDNLA_CUDA(solver::orgqr(solver_.get(), m, n, n, a.data(), lda, tau.data(), work.data(), lwork, device_info()));
    require_info_zero("orgqr");
  }

  struct SolverParams {
    SolverParams() { RANDNLA_CUDA(cusolverDnCreateParams(&p)); }
    ~SolverParams() { cusolverDnDestroyParams(p); }
    SolverParams(const SolverParams&) = delete;
    SolverParams& operator=(const SolverParams&) = delete;
    cusolverDnParams_t get() const { return p; }
    cusolverDnParams_t p = nullptr;
  };
  struct gesvdj_params {
    gesvdj_params() { RANDNLA_CUDA(cusolverDnCreateGesvdjInfo(&p)); }
    ~gesvdj_params() { cusolverDnDestroyGesvdjInfo(p); }
    gesvdjInfo_t get() const { return p; }
    gesvdjInfo_t p = nullptr;
  };
};

}  // namespace cuda
}  // namespace randnla
