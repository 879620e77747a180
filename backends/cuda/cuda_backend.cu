// The CUDA backend: device memory, cuBLAS/cuSOLVER calls and the Tensor Core products.
#include "cuda_backend.hpp"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <vector>

#include "cuda_check.hpp"
#include "host/lapack.hpp"
#include "elementwise.cuh"
#include "symmetric_eig.cuh"
#include "tc_gemm.cuh"

namespace randnla {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver / no device" error
    return 0;
  }
  return n;
}

namespace {

using cuda::TcOperand;

cublasOperation_t cublas_op(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }
int blas_int(index_t v, const char* name) {
  require(v <= 0x7fffffff, name, v, "must fit cuBLAS/cuSOLVER's 32-bit integers");
  return static_cast<int>(v);
}

class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t s) {
    RANDNLA_CUDA(cublasCreate(&h_));
    RANDNLA_CUDA(cublasSetStream(h_, s));
  }
  ~CublasHandle() { cublasDestroy(h_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

class CusolverHandle {
 public:
  explicit CusolverHandle(cudaStream_t s) {
    RANDNLA_CUDA(cusolverDnCreate(&h_));
    RANDNLA_CUDA(cusolverDnSetStream(h_, s));
  }
  ~CusolverHandle() { cusolverDnDestroy(h_); }
  CusolverHandle(const CusolverHandle&) = delete;
  CusolverHandle& operator=(const CusolverHandle&) = delete;
  cusolverDnHandle_t get() const { return h_; }

 private:
  cusolverDnHandle_t h_ = nullptr;
};

/// The backend's stream and its device memory: a stream-ordered pool that keeps what is freed,
/// since cudaFree synchronises the whole device and cudaMalloc costs tens of microseconds, which
/// a pipeline of many small steps (CholeskyQR, the small SVD) paid at every step. Allocations hold
/// a reference to this, so a Matrix may outlive its backend.
class StreamMemory {
 public:
  explicit StreamMemory(int device) {
    RANDNLA_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    RANDNLA_CUDA(cudaMemPoolCreate(&pool_, &props));
    std::uint64_t keep = UINT64_MAX;
    RANDNLA_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  ~StreamMemory() {
    cudaStreamSynchronize(stream_);
    cudaMemPoolDestroy(pool_);
    cudaStreamDestroy(stream_);
  }
  StreamMemory(const StreamMemory&) = delete;
  StreamMemory& operator=(const StreamMemory&) = delete;
  cudaStream_t get() const { return stream_; }

  static std::shared_ptr<void> allocate(const std::shared_ptr<StreamMemory>& self, std::size_t bytes) {
    void* p = nullptr;
    RANDNLA_CUDA(cudaMallocFromPoolAsync(&p, bytes > 0 ? bytes : 1, self->pool_, self->stream_));
    return std::shared_ptr<void>(p, [self](void* q) { cudaFreeAsync(q, self->stream_); });
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
};

/// The eigensolver's second stream (symmetric_eig.cuh), with its cuBLAS handle and events.
class SideStream {
 public:
  SideStream() {
    RANDNLA_CUDA(cudaStreamCreateWithFlags(&s_.stream, cudaStreamNonBlocking));
    RANDNLA_CUDA(cublasCreate(&s_.blas));
    RANDNLA_CUDA(cublasSetStream(s_.blas, s_.stream));
    RANDNLA_CUDA(cudaEventCreateWithFlags(&s_.reduced, cudaEventDisableTiming));
    RANDNLA_CUDA(cudaEventCreateWithFlags(&s_.formed, cudaEventDisableTiming));
  }
  ~SideStream() {
    cudaStreamSynchronize(s_.stream);
    cudaEventDestroy(s_.formed);
    cudaEventDestroy(s_.reduced);
    cublasDestroy(s_.blas);
    cudaStreamDestroy(s_.stream);
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  const cuda::SideStream& get() const { return s_; }

 private:
  cuda::SideStream s_{};
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device)
      : device_(set_device(device)),
        stream_(std::make_shared<StreamMemory>(device_)),
        blas_(stream_->get()),
        solver_(stream_->get()),
        eig_max_order_(cuda::tridiagonalize_max_order(device_)) {
    cudaDeviceProp p{};
    RANDNLA_CUDA(cudaGetDeviceProperties(&p, device_));
    name_ = std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
            std::to_string(p.multiProcessorCount) + " SMs)";
  }

  MemorySpace memory_space() const override { return MemorySpace::Device; }
  std::string description() const override { return name_; }

  std::shared_ptr<void> allocate(std::size_t bytes) override { return StreamMemory::allocate(stream_, bytes); }

  void copy(MatrixView<const float> s, MatrixView<float> d) override { copy2d(s, d); }
  void copy(MatrixView<const double> s, MatrixView<double> d) override { copy2d(s, d); }
  void copy(MatrixView<const fp16> s, MatrixView<fp16> d) override { copy2d(s, d); }
  void synchronize() override { RANDNLA_CUDA(cudaStreamSynchronize(stream_->get())); }

  void fill_random(const RandomSpec& spec, MatrixView<float> x) override {
    device_only(x, "X");
    cuda::launch_fill_random(RandomDraw(spec), x, stream_->get());
  }
  void fill_random(const RandomSpec& spec, MatrixView<fp16> x) override {
    device_only(x, "X");
    cuda::launch_fill_random(RandomDraw(spec), x, stream_->get());
  }
  void convert(MatrixView<const float> s, MatrixView<double> d) override { same_shape(s, d), cuda::launch_convert(s, d, stream_->get()); }
  void convert(MatrixView<const double> s, MatrixView<float> d) override { same_shape(s, d), cuda::launch_convert(s, d, stream_->get()); }
  void convert(MatrixView<const float> s, MatrixView<fp16> d) override { same_shape(s, d), cuda::launch_convert(s, d, stream_->get()); }
  void convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> d) override {
    same_shape(src, d);
    device_only(s, "s");
    require_scale_shape(s, src, false);
    cuda::launch_convert_scaled(src, s.data(), d, stream_->get());
  }
  void transpose(MatrixView<const float> s, MatrixView<float> d) override {
    device_only(s, "src");
    device_only(d, "dst");
    require_shape(d, s.cols(), s.rows(), "dst");
    cuda::launch_transpose(s, d, stream_->get());
  }
  void scale_columns(MatrixView<const float> s, MatrixView<float> x) override { scale(s, x, false); }
  void scale_columns(MatrixView<const double> s, MatrixView<double> x) override { scale(s, x, false); }
  void scale_rows(MatrixView<const double> s, MatrixView<double> x) override { scale(s, x, true); }
  void equilibrate(MatrixView<double> g, MatrixView<double> d) override {
    device_only(g, "G");
    device_only(d, "d");
    require_eig_shapes(g, d);
    cuda::launch_equilibrate(g, d, stream_->get());
  }
  void add_to_diagonal(MatrixView<double> g, double shift) override {
    device_only(g, "G");
    require_square(g, "G");
    cuda::launch_add_to_diagonal(g, shift, stream_->get());
  }

  ExponentHistogram exponent_histogram(MatrixView<const float> x) override {
    device_only(x, "X");
    auto* d = static_cast<unsigned long long*>(scratch(kExponentBins * sizeof(unsigned long long)));
    RANDNLA_CUDA(cudaMemsetAsync(d, 0, kExponentBins * sizeof(unsigned long long), stream_->get()));
    cuda::launch_histogram(x, d, stream_->get());
    unsigned long long h[kExponentBins];
    RANDNLA_CUDA(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream_->get()));
    synchronize();
    ExponentHistogram out;
    for (int b = 0; b < kExponentBins; ++b) out.count[b] = static_cast<std::int64_t>(h[b]);
    return out;
  }

  double frobenius_norm(MatrixView<const float> x) override { return sum_squares_root(x); }
  double frobenius_norm(MatrixView<const double> x) override { return sum_squares_root(x); }

  void gemm(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
            MatrixView<double> c) override {
    gemm_checks(ta, tb, a, b, c);
    if (c.empty()) return;
    const index_t k = op_cols(ta, a.rows(), a.cols());
    RANDNLA_CUDA(cublasDgemm(blas_.get(), cublas_op(ta), cublas_op(tb), blas_int(c.rows(), "m"), blas_int(c.cols(), "n"),
                             blas_int(k, "k"), &alpha, a.data(), blas_int(a.ld(), "A.ld"), b.data(),
                             blas_int(b.ld(), "B.ld"), &beta, c.data(), blas_int(c.ld(), "C.ld")));
  }

  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
            MatrixView<float> c, GemmPrecision precision) override {
    gemm_checks(ta, tb, a, b, c);
    if (c.empty()) return;
    const int m = blas_int(c.rows(), "m"), n = blas_int(c.cols(), "n"), k = blas_int(op_cols(ta, a.rows(), a.cols()), "k");
    if (precision == GemmPrecision::FP16 && !(fits_fp16_unscaled(exponent_histogram(a)) &&
                                              fits_fp16_unscaled(exponent_histogram(b))))
      precision = GemmPrecision::TF32;  // FP16 would overflow: never return Inf for finite input
    if (precision == GemmPrecision::FP16) {
      Matrix<fp16> ah(*this, a.rows(), a.cols(), "A"), bh(*this, b.rows(), b.cols(), "B");
      cuda::launch_convert(a, ah.view(), stream_->get());
      cuda::launch_convert(b, bh.view(), stream_->get());
      RANDNLA_CUDA(cublasGemmEx(blas_.get(), cublas_op(ta), cublas_op(tb), m, n, k, &alpha, ah.data(), CUDA_R_16F,
                                blas_int(ah.view().ld(), "A.ld"), bh.data(), CUDA_R_16F, blas_int(bh.view().ld(), "B.ld"),
                                &beta, c.data(), CUDA_R_32F, blas_int(c.ld(), "C.ld"), CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT));
      synchronize();  // ah, bh are freed on return
      return;
    }
    const cublasComputeType_t compute =
        precision == GemmPrecision::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    RANDNLA_CUDA(cublasGemmEx(blas_.get(), cublas_op(ta), cublas_op(tb), m, n, k, &alpha, a.data(), CUDA_R_32F,
                              blas_int(a.ld(), "A.ld"), b.data(), CUDA_R_32F, blas_int(b.ld(), "B.ld"), &beta, c.data(),
                              CUDA_R_32F, blas_int(c.ld(), "C.ld"), compute, CUBLAS_GEMM_DEFAULT));
  }

  void shgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
              MatrixView<float> c, TensorCore tc, GemmReport* report) override {
    gemm_checks(ta, tb, a, b, c);
    cuda::tc_gemm(operand(a, ta, false), operand(b, tb, true), alpha, beta, c, tc, report, ws_, stream_->get());
  }
  void hsgemm(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const float> b, float beta,
              MatrixView<float> c, TensorCore tc, GemmReport* report) override {
    gemm_checks(ta, tb, a, b, c);
    cuda::tc_gemm(operand(a, ta, true), operand(b, tb, false), alpha, beta, c, tc, report, ws_, stream_->get());
  }
  void tcec_sgemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                  MatrixView<float> c, TensorCore tc, GemmReport* report) override {
    gemm_checks(ta, tb, a, b, c);
    cuda::tc_gemm(operand(a, ta, false), operand(b, tb, false), alpha, beta, c, tc, report, ws_, stream_->get());
  }

  void householder_q(MatrixView<float> a) override {
    device_only(a, "A");
    require(a.rows() >= a.cols(), "A.rows", a.rows(), "must be >= A.cols = " + std::to_string(a.cols()));
    if (a.cols() == 0) return;
    const int m = blas_int(a.rows(), "A.rows"), n = blas_int(a.cols(), "A.cols"), lda = blas_int(a.ld(), "A.ld");
    int lwork_qr = 0, lwork_q = 0;
    RANDNLA_CUDA(cusolverDnSgeqrf_bufferSize(solver_.get(), m, n, a.data(), lda, &lwork_qr));
    Matrix<float> tau(*this, n, 1, "tau");
    RANDNLA_CUDA(cusolverDnSorgqr_bufferSize(solver_.get(), m, n, n, a.data(), lda, tau.data(), &lwork_q));
    Matrix<float> work(*this, std::max(lwork_qr, lwork_q), 1, "work");
    int* info = device_info();
    RANDNLA_CUDA(cusolverDnSgeqrf(solver_.get(), m, n, a.data(), lda, tau.data(), work.data(), lwork_qr, info));
    RANDNLA_CUDA(cusolverDnSorgqr(solver_.get(), m, n, n, a.data(), lda, tau.data(), work.data(), lwork_q, info));
    require_info_zero("geqrf/orgqr");
  }

  /// cuSOLVER potrf, then a trsm with the identity (0.21 + 0.13 ms at l = 272 on the H100, latency
  /// rather than work; a one-block kernel of this library took 0.95 ms, issue-bound on one SM:
  /// perf_tests/results/2026-11-21_h100_28efbf1/rejected_one_block_cholesky).
  int inverse_cholesky_factor(MatrixView<double> g, MatrixView<double> rinv) override {
    device_only(g, "G");
    device_only(rinv, "rinv");
    require_square(g, "G");
    require_shape(rinv, g.rows(), g.cols(), "rinv");
    if (g.rows() == 0) return 0;
    const int n = blas_int(g.rows(), "G.rows"), lda = blas_int(g.ld(), "G.ld"), ldr = blas_int(rinv.ld(), "rinv.ld");
    int lwork = 0;
    RANDNLA_CUDA(cusolverDnDpotrf_bufferSize(solver_.get(), CUBLAS_FILL_MODE_UPPER, n, g.data(), lda, &lwork));
    Matrix<double> work(*this, std::max(lwork, 1), 1, "work");
    RANDNLA_CUDA(cusolverDnDpotrf(solver_.get(), CUBLAS_FILL_MODE_UPPER, n, g.data(), lda, work.data(), lwork, device_info()));
    const int info = host_info();
    require(info >= 0, "potrf argument", -info, "is invalid");
    if (info > 0) return info;
    RANDNLA_CUDA(cudaMemset2DAsync(rinv.data(), rinv.ld() * sizeof(double), 0, n * sizeof(double), n, stream_->get()));
    cuda::launch_add_to_diagonal(rinv, 1.0, stream_->get());
    const double one = 1.0;
    RANDNLA_CUDA(cublasDtrsm(blas_.get(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n,
                             n, &one, g.data(), lda, rinv.data(), ldr));
    return 0;
  }

  /// The library's cluster tridiagonalisation and divide and conquer (symmetric_eig.cuh) where the
  /// device and n allow (compute 9.0, 3 <= n <= eig_max_order_: 654 on the H100, clusters of 8
  /// blocks up to n = 464 and of 16 above; 1.77 ms against cuSOLVER's 2.48 at n = 272,
  /// perf_tests/results/2026-11-22_h100_side_q), else cuSOLVER Xsyevd, which also takes the input
  /// the own path declines (a non-finite entry or eigenvector).
  void symmetric_eig(MatrixView<double> g, MatrixView<double> w) override {
    device_only(g, "G");
    device_only(w, "w");
    require_eig_shapes(g, w);
    if (g.rows() == 0) return;
    if (g.rows() >= 3 && g.rows() <= eig_max_order_) {
      const int n = static_cast<int>(g.rows());
      auto work = allocate(cuda::symmetric_eig_dc_workspace_bytes(n));
      if (cuda::symmetric_eig_dc(g, w, work.get(), blas_.get(), stream_->get(), side_.get())) return;
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
    cuda::launch_reverse_eigenpairs(g, w, stream_->get());
  }

  void svd(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt,
           SvdMethod method) override {
    for (auto* v : {&a, &u, &vt}) device_only(*v, "A");
    device_only(s, "s");
    const index_t m = a.rows(), n = a.cols();
    require_svd_shapes(a, s, u, vt);
    require_backend_svd_method(method);
    if (n == 0) return;
    const int im = blas_int(m, "A.rows"), in = blas_int(n, "A.cols"), lda = blas_int(a.ld(), "A.ld");
    const int ldu = blas_int(u.ld(), "U.ld"), ldvt = blas_int(vt.ld(), "VT.ld");
    switch (method == SvdMethod::Auto ? SvdMethod::Polar : method) {
      case SvdMethod::Gesdd: return svd_on_host(a, s, u, vt);
      case SvdMethod::Gesvd: {
        int lwork = 0;
        RANDNLA_CUDA(cusolverDnSgesvd_bufferSize(solver_.get(), im, in, &lwork));
        Matrix<float> work(*this, std::max(lwork, 1), 1, "work");
        RANDNLA_CUDA(cusolverDnSgesvd(solver_.get(), 'S', 'S', im, in, a.data(), lda, s.data(), u.data(), ldu,
                                      vt.data(), ldvt, work.data(), lwork, nullptr, device_info()));
        break;
      }
      case SvdMethod::Jacobi: {
        gesvdj_params params;
        int lwork = 0;
        Matrix<float> v(*this, n, n, "V");
        RANDNLA_CUDA(cusolverDnSgesvdj_bufferSize(solver_.get(), CUSOLVER_EIG_MODE_VECTOR, 1, im, in, a.data(), lda,
                                                  s.data(), u.data(), ldu, v.data(), in, &lwork, params.get()));
        Matrix<float> work(*this, std::max(lwork, 1), 1, "work");
        RANDNLA_CUDA(cusolverDnSgesvdj(solver_.get(), CUSOLVER_EIG_MODE_VECTOR, 1, im, in, a.data(), lda, s.data(),
                                       u.data(), ldu, v.data(), in, work.data(), lwork, device_info(), params.get()));
        cuda::launch_transpose(v.view(), vt, stream_->get());
        break;
      }
      case SvdMethod::Auto:
      case SvdMethod::Gram:  // rejected above
      case SvdMethod::Polar: {
        Matrix<float> v(*this, n, n, "V");
        SolverParams params;
        std::size_t dev_bytes = 0, host_bytes = 0;
        RANDNLA_CUDA(cusolverDnXgesvdp_bufferSize(solver_.get(), params.get(), CUSOLVER_EIG_MODE_VECTOR, 1, m, n, CUDA_R_32F,
                                                  a.data(), a.ld(), CUDA_R_32F, s.data(), CUDA_R_32F, u.data(), u.ld(),
                                                  CUDA_R_32F, v.data(), n, CUDA_R_32F, &dev_bytes, &host_bytes));
        auto dev_work = allocate(dev_bytes + 1);
        std::vector<char> host_work(host_bytes + 1);
        double err_sigma = 0;
        RANDNLA_CUDA(cusolverDnXgesvdp(solver_.get(), params.get(), CUSOLVER_EIG_MODE_VECTOR, 1, m, n, CUDA_R_32F, a.data(),
                                       a.ld(), CUDA_R_32F, s.data(), CUDA_R_32F, u.data(), u.ld(), CUDA_R_32F, v.data(),
                                       n, CUDA_R_32F, dev_work.get(), dev_bytes, host_work.data(), host_bytes,
                                       device_info(), &err_sigma));
        cuda::launch_transpose(v.view(), vt, stream_->get());
        break;
      }
    }
    const int info = host_info();
    if (info > 0) throw NumericalBreakdown(std::string(to_string(method)) + " did not converge (info = " + std::to_string(info) + ")");
    require(info == 0, "svd argument", -info, "is invalid");
  }

 private:
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

  /// LAPACK sgesdd on the host CPU (cuSOLVER has no divide and conquer): for the small factor
  /// of an RSVD the copies are a few hundred kilobytes.
  void svd_on_host(MatrixView<float> a, MatrixView<float> s, MatrixView<float> u, MatrixView<float> vt) {
    const index_t m = a.rows(), n = a.cols();
    std::vector<float> ha(static_cast<std::size_t>(m * n)), hs(n), hu(static_cast<std::size_t>(m * n)),
        hvt(static_cast<std::size_t>(n * n));
    const MemorySpace H = MemorySpace::Host;
    copy(MatrixView<const float>(a), MatrixView<float>(ha.data(), m, n, m, H));
    const int im = static_cast<int>(m), in = static_cast<int>(n);
    int info = 0, lwork = -1;
    float query = 0;
    std::vector<int> iwork(8 * static_cast<std::size_t>(n));
    sgesdd_("S", &im, &in, ha.data(), &im, hs.data(), hu.data(), &im, hvt.data(), &in, &query, &lwork, iwork.data(), &info);
    std::vector<float> work(static_cast<std::size_t>(query) + 1);
    lwork = static_cast<int>(work.size());
    sgesdd_("S", &im, &in, ha.data(), &im, hs.data(), hu.data(), &im, hvt.data(), &in, work.data(), &lwork,
            iwork.data(), &info);
    if (info > 0) throw NumericalBreakdown("gesdd did not converge (info = " + std::to_string(info) + ")");
    require(info == 0, "gesdd argument", -info, "is invalid");
    copy(MatrixView<const float>(hs.data(), n, 1, n, H), MatrixView<float>(s.data(), n, 1, n, MemorySpace::Device));
    copy(MatrixView<const float>(hu.data(), m, n, m, H), u);
    copy(MatrixView<const float>(hvt.data(), n, n, n, H), vt);
  }

  static int set_device(int device) {
    const int count = cuda_device_count();
    require(device >= 0 && device < count, "device", device, "must lie in 0.." + std::to_string(count - 1));
    RANDNLA_CUDA(cudaSetDevice(device));
    return device;
  }
  template <class T>
  static void device_only(const MatrixView<T>& v, const std::string& name) {
    require_space(v, MemorySpace::Device, name);
  }
  /// X(i, j) *= s[i] (by_row) or s[j].
  template <class T>
  void scale(MatrixView<const T> s, MatrixView<T> x, bool by_row) {
    device_only(s, "s");
    device_only(x, "X");
    require_scale_shape(s, x, by_row);
    cuda::launch_scale(s.data(), x, by_row, stream_->get());
  }
  template <class S, class D>
  static void same_shape(const MatrixView<S>& s, const MatrixView<D>& d) {
    device_only(s, "src");
    device_only(d, "dst");
    require_shape(d, s.rows(), s.cols(), "dst");
  }
  template <class A, class B, class C>
  static void gemm_checks(Op ta, Op tb, const MatrixView<A>& a, const MatrixView<B>& b, const MatrixView<C>& c) {
    device_only(a, "A");
    device_only(b, "B");
    device_only(c, "C");
    require_gemm_shapes(ta, tb, a, b, c);
  }
  template <class T>
  static TcOperand operand(const MatrixView<T>& v, Op op, bool fp16) {
    return TcOperand{v.data(), v.rows(), v.cols(), v.ld(), op, fp16};
  }

  template <class T>
  void copy2d(MatrixView<const T> s, MatrixView<T> d) {
    require_shape(d, s.rows(), s.cols(), "dst");
    if (s.empty()) return;
    RANDNLA_CUDA(cudaMemcpy2DAsync(d.data(), d.ld() * sizeof(T), s.data(), s.ld() * sizeof(T), s.rows() * sizeof(T),
                                   s.cols(), cudaMemcpyDefault, stream_->get()));
    synchronize();
  }

  template <class T>
  double sum_squares_root(MatrixView<const T> x) {
    device_only(x, "X");
    auto* d = static_cast<double*>(scratch(sizeof(double)));
    RANDNLA_CUDA(cudaMemsetAsync(d, 0, sizeof(double), stream_->get()));
    cuda::launch_sum_squares(x, d, stream_->get());
    double h = 0;
    RANDNLA_CUDA(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, stream_->get()));
    synchronize();
    return std::sqrt(h);
  }

  void* scratch(std::size_t bytes) {
    if (bytes > scratch_bytes_) {
      scratch_ = allocate(bytes);
      scratch_bytes_ = bytes;
    }
    return scratch_.get();
  }
  int* device_info() {
    if (!info_) info_ = allocate(sizeof(int));
    return static_cast<int*>(info_.get());
  }
  int host_info() {
    int h = 0;
    RANDNLA_CUDA(cudaMemcpyAsync(&h, device_info(), sizeof h, cudaMemcpyDeviceToHost, stream_->get()));
    synchronize();
    return h;
  }
  void require_info_zero(const std::string& routine) {
    const int info = host_info();
    if (info != 0) throw DeviceError(routine + " returned info = " + std::to_string(info));
  }

  int device_;
  std::shared_ptr<StreamMemory> stream_;
  CublasHandle blas_;
  CusolverHandle solver_;
  int eig_max_order_;
  SideStream side_;
  cuda::TcWorkspace ws_;
  std::string name_;
  std::shared_ptr<void> scratch_, info_;
  std::size_t scratch_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int device) { return std::make_unique<CudaBackend>(device); }

}  // namespace randnla
