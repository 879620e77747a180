// The CUDA backend: device memory, cuBLAS/cuSOLVER calls and the Tensor Core products.
#include "cuda_backend.hpp"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstring>
#include <vector>

#include "cholesky_qr/cholesky_qr_ops.cuh"
#include "tsqr/tsqr_ops.cuh"
#include "sparse_projection/sparse_projection_ops.cuh"
#include "cuda_check.hpp"
#include "elementwise.cuh"
#include "for_each.cuh"
#include "pinned_slots.cuh"
#include "stream_memory.cuh"
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

using cuda::DeviceScope;
using cuda::StreamMemory;
using cuda::TcOperand;

cublasOperation_t cublas_op(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }
using cuda::blas_int;

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
  CudaBackend(int device, cudaStream_t stream)
      : device_(set_device(device)),
        stream_(std::make_shared<StreamMemory>(device_, stream)),
        blas_(stream_->get()),
        solver_(stream_->get()),
        eig_max_order_(cuda::tridiagonalize_max_order(device_)) {
    cudaDeviceProp p{};
    RANDNLA_CUDA(cudaGetDeviceProperties(&p, device_));
    name_ = std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
            std::to_string(p.multiProcessorCount) + " SMs)";
    capabilities_.tensor_cores = p.major >= 8;  // the mma.sync kernel's floor
    capabilities_.polar = true;
    provide<CholeskyQrOps>(cuda::make_cholesky_qr_ops(device_, stream_->get(), blas_.get(), ws_));
    provide<TsqrOps>(cuda::make_tsqr_ops(device_, stream_->get()));
    provide<TensorCoreTsqrOps>(cuda::make_tensor_core_tsqr_ops(device_, stream_->get()));
    provide<SparseProjectionOps>(cuda::make_sparse_projection_ops(device_, stream_));
  }

  MemorySpace memory_space() const override { return MemorySpace::Device; }
  int device() const override { return device_; }
  void* native_stream() const override { return stream(); }
  std::string description() const override { return name_; }
  Capabilities capabilities() const override { return capabilities_; }

  std::shared_ptr<void> do_allocate(std::size_t bytes) override {
    const DeviceScope scope(device_);
    return StreamMemory::allocate(stream_, bytes);
  }

  void synchronize() override { const DeviceScope scope(device_); RANDNLA_CUDA(cudaStreamSynchronize(stream())); }
  std::shared_ptr<void> queue_mark() override {
    const DeviceScope scope(device_);
    cudaEvent_t event = nullptr;
    RANDNLA_CUDA(cudaEventCreate(&event));
    std::shared_ptr<void> mark(event, [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); });
    RANDNLA_CUDA(cudaEventRecord(event, stream()));
    return mark;
  }
  double milliseconds_between(const std::shared_ptr<void>& earlier, const std::shared_ptr<void>& later) override {
    const DeviceScope scope(device_);
    const auto first = static_cast<cudaEvent_t>(earlier.get()), second = static_cast<cudaEvent_t>(later.get());
    float ms = 0.0f;
    // Most marks are read after the work has run: a wait for an event already reached took longer
    // than reading the time (about 1.7 us against 0.2 us in CUPTI traces, each phase of each call).
    cudaError_t status = cudaEventElapsedTime(&ms, first, second);
    if (status == cudaErrorNotReady) {
      cudaGetLastError();  // not an error: cleared, so that no later check reports it
      RANDNLA_CUDA(cudaEventSynchronize(second));
      status = cudaEventElapsedTime(&ms, first, second);
    }
    RANDNLA_CUDA(status);
    return ms;
  }

 protected:
  void do_copy(MatrixView<const float> s, MatrixView<float> d) override {
    const DeviceScope scope(device_);
    copy2d(s, d);
  }
  void do_copy(MatrixView<const double> s, MatrixView<double> d) override {
    const DeviceScope scope(device_);
    copy2d(s, d);
  }
  void do_copy(MatrixView<const fp16> s, MatrixView<fp16> d) override {
    const DeviceScope scope(device_);
    copy2d(s, d);
  }
  void do_fill_random(const RandomDraw& draw, MatrixView<float> x) override {
    const DeviceScope scope(device_);
    cuda::launch_fill_random(draw, x, stream());
  }
  void do_fill_random(const RandomDraw& draw, MatrixView<fp16> x) override {
    const DeviceScope scope(device_);
    cuda::launch_fill_random(draw, x, stream());
  }
  void do_convert(MatrixView<const float> s, MatrixView<double> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  void do_convert(MatrixView<const double> s, MatrixView<float> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  void do_convert(MatrixView<const float> s, MatrixView<fp16> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  void do_convert(MatrixView<const fp16> s, MatrixView<float> d) override {
    const DeviceScope scope(device_);
    cuda::launch_convert(s, d, stream());
  }
  void do_transpose(MatrixView<const float> s, MatrixView<float> d) override {
    const DeviceScope scope(device_);
    cuda::launch_transpose(s, d, stream());
  }
  void do_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y) override {
    const DeviceScope scope(device_);
    cuda::launch_add(alpha, x, beta, y, stream());
  }
  void do_scale(float alpha, MatrixView<float> x) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(alpha, x, stream());
  }
  void do_scale(double alpha, MatrixView<double> x) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(alpha, x, stream());
  }
  void do_scale(MatrixView<const float> s, MatrixView<float> x, bool by_row) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(s.data(), x, by_row, stream());
  }
  void do_scale(MatrixView<const double> s, MatrixView<double> x, bool by_row) override {
    const DeviceScope scope(device_);
    cuda::launch_scale(s.data(), x, by_row, stream());
  }
  void do_add_to_diagonal(MatrixView<double> g, double shift) override {
    const DeviceScope scope(device_);
    cuda::launch_add_to_diagonal(g, shift, stream());
  }

  ExponentHistogram do_exponent_histogram(MatrixView<const float> x) override {
    return histogram_of([&](cuda::HistogramTarget t) { cuda::launch_histogram(x, t, stream()); });
  }
  ExponentHistogram do_convert_measured(MatrixView<const float> src, MatrixView<fp16> dst, float scale) override {
    return histogram_of([&](cuda::HistogramTarget t) { cuda::launch_convert_measured(src, dst, scale, t, stream()); });
  }
  /// The histogram `count` takes into the target it is given: the pass's last block publishes it
  /// into a page-locked slot and leaves the device bins zero for the next.
  template <class Count>
  ExponentHistogram histogram_of(const Count& count) {
    const DeviceScope scope(device_);
    const std::shared_ptr<cuda::PinnedSlots::Slot> slot = read_back_slots_->take();
    auto* bins = static_cast<unsigned long long*>(histogram_bins());
    count(cuda::HistogramTarget{bins, static_cast<unsigned long long*>(slot->device_data),
                                reinterpret_cast<unsigned int*>(bins + kExponentBins)});
    synchronize();
    const auto* h = static_cast<const unsigned long long*>(slot->data);
    ExponentHistogram out;
    for (int b = 0; b < kExponentBins; ++b) out.count[b] = static_cast<std::int64_t>(h[b]);
    return out;
  }
  /// The histograms' device bins and block counter, zeroed once: each pass leaves them zero.
  void* histogram_bins() {
    if (!histogram_bins_) {
      const std::size_t bytes = kExponentBins * sizeof(unsigned long long) + sizeof(unsigned int);
      histogram_bins_ = allocate(bytes);
      RANDNLA_CUDA(cudaMemsetAsync(histogram_bins_.get(), 0, bytes, stream()));
    }
    return histogram_bins_.get();
  }

  double do_frobenius_norm(MatrixView<const float> x) override {
    const DeviceScope scope(device_);
    return sum_squares_root(x);
  }
  double do_frobenius_norm(MatrixView<const double> x) override {
    const DeviceScope scope(device_);
    return sum_squares_root(x);
  }

  void do_product(Op ta, Op tb, double alpha, MatrixView<const double> a, MatrixView<const double> b, double beta,
                  MatrixView<double> c) override {
    const DeviceScope scope(device_);
    const index_t k = op_cols(ta, a.rows(), a.cols());
    RANDNLA_CUDA(cublasDgemm(blas_.get(), cublas_op(ta), cublas_op(tb), blas_int(c.rows(), "m"), blas_int(c.cols(), "n"),
                             blas_int(k, "k"), &alpha, a.data(), blas_int(a.ld(), "A.ld"), b.data(),
                             blas_int(b.ld(), "B.ld"), &beta, c.data(), blas_int(c.ld(), "C.ld")));
  }

  void do_product(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
                  MatrixView<float> c, const ProductPrecision& precision, ProductReport* report) override {
    const DeviceScope scope(device_);
    if (precision.mode == ProductMode::Split) {
      cuda::tc_gemm(operand(a, ta, false), operand(b, tb, false), alpha, beta, c, precision.split, report, ws_, stream());
      return;
    }
    const int m = blas_int(c.rows(), "m"), n = blas_int(c.cols(), "n"), k = blas_int(op_cols(ta, a.rows(), a.cols()), "k");
    if (precision.mode == ProductMode::FP16) {
      Matrix<fp16> ah(*this, a.rows(), a.cols(), "A"), bh(*this, b.rows(), b.cols(), "B");
      cuda::launch_convert(a, ah.view(), stream());
      cuda::launch_convert(b, bh.view(), stream());
      do_product(ta, tb, alpha, ah, bh, beta, c);
      return;  // ah and bh go back to the stream-ordered pool after the product
    }
    RANDNLA_CUDA(cublasGemmEx(blas_.get(), cublas_op(ta), cublas_op(tb), m, n, k, &alpha, a.data(), CUDA_R_32F,
                              blas_int(a.ld(), "A.ld"), b.data(), CUDA_R_32F, blas_int(b.ld(), "B.ld"), &beta, c.data(),
                              CUDA_R_32F, blas_int(c.ld(), "C.ld"), compute_type(precision.mode), CUBLAS_GEMM_DEFAULT));
  }

  void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                  MatrixView<float> c) override {
    const DeviceScope scope(device_);
    const int m = blas_int(c.rows(), "m"), n = blas_int(c.cols(), "n"), k = blas_int(op_cols(ta, a.rows(), a.cols()), "k");
    RANDNLA_CUDA(cublasGemmEx(blas_.get(), cublas_op(ta), cublas_op(tb), m, n, k, &alpha, a.data(), CUDA_R_16F,
                              blas_int(a.ld(), "A.ld"), b.data(), CUDA_R_16F, blas_int(b.ld(), "B.ld"), &beta, c.data(),
                              CUDA_R_32F, blas_int(c.ld(), "C.ld"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  void do_product(Op ta, Op tb, float alpha, MatrixView<const fp16> a, MatrixView<const fp16> b, float beta,
                  MatrixView<fp16> c) override {
    const DeviceScope scope(device_);
    const int m = blas_int(c.rows(), "m"), n = blas_int(c.cols(), "n"), k = blas_int(op_cols(ta, a.rows(), a.cols()), "k");
    const __half alpha16 = __float2half(alpha), beta16 = __float2half(beta);
    RANDNLA_CUDA(cublasGemmEx(blas_.get(), cublas_op(ta), cublas_op(tb), m, n, k, &alpha16, a.data(), CUDA_R_16F,
                              blas_int(a.ld(), "A.ld"), b.data(), CUDA_R_16F, blas_int(b.ld(), "B.ld"), &beta16,
                              c.data(), CUDA_R_16F, blas_int(c.ld(), "C.ld"), CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT));
  }

  void do_product_split(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const fp16> b, float beta,
                        MatrixView<float> c, TensorCore format, ProductReport* report) override {
    const DeviceScope scope(device_);
    cuda::tc_gemm(operand(a, ta, false), operand(b, tb, true), alpha, beta, c, format, report, ws_, stream());
  }

  /// Split products whose A slices the Tensor Core kernel takes (tc_gemm_takes_slices) and whose
  /// B_i follow one another in B's rows: one product over all of K; the rest by partial sums.
  void do_product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const fp16> b, float beta,
                         MatrixView<float> c, const ProductPrecision& precision) override {
    const DeviceScope scope(device_);
    if (!summed_in_one(ta, tb, a, b, precision)) return Backend::do_product_summed(ta, tb, alpha, a, b, beta, c, precision);
    cuda::tc_gemm(sliced(a, ta), operand(stacked(b), tb, true), alpha, beta, c, precision.split, nullptr, ws_, stream());
  }
  void do_product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b, float beta,
                         MatrixView<float> c, const ProductPrecision& precision) override {
    const DeviceScope scope(device_);
    if (!summed_in_one(ta, tb, a, b, precision)) return Backend::do_product_summed(ta, tb, alpha, a, b, beta, c, precision);
    cuda::tc_gemm(sliced(a, ta), operand(stacked(b), tb, false), alpha, beta, c, precision.split, nullptr, ws_, stream());
  }

  /// cuBLAS's strided-batched GEMM for FP32 and TF32; FP16 and Split run one product per matrix.
  void do_product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b,
                                  float beta, StridedBatch<float> c, const ProductPrecision& precision) override {
    if (precision.mode != ProductMode::FP32 && precision.mode != ProductMode::TF32)
      return Backend::do_product_strided_batched(ta, tb, alpha, a, b, beta, c, precision);
    const DeviceScope scope(device_);
    const MatrixView<const float>&a0 = a.first, &b0 = b.first;
    const MatrixView<float>& c0 = c.first;
    RANDNLA_CUDA(cublasGemmStridedBatchedEx(
        blas_.get(), cublas_op(ta), cublas_op(tb), blas_int(c0.rows(), "m"), blas_int(c0.cols(), "n"),
        blas_int(op_cols(ta, a0.rows(), a0.cols()), "k"), &alpha, a0.data(), CUDA_R_32F, blas_int(a0.ld(), "A.ld"),
        a.stride, b0.data(), CUDA_R_32F, blas_int(b0.ld(), "B.ld"), b.stride, &beta, c0.data(), CUDA_R_32F,
        blas_int(c0.ld(), "C.ld"), c.stride, blas_int(c.count, "C.count"), compute_type(precision.mode),
        CUBLAS_GEMM_DEFAULT));
  }
  void do_product_strided_batched(Op ta, Op tb, double alpha, StridedBatch<const double> a,
                                  StridedBatch<const double> b, double beta, StridedBatch<double> c) override {
    const DeviceScope scope(device_);
    const MatrixView<const double>&a0 = a.first, &b0 = b.first;
    const MatrixView<double>& c0 = c.first;
    RANDNLA_CUDA(cublasDgemmStridedBatched(blas_.get(), cublas_op(ta), cublas_op(tb), blas_int(c0.rows(), "m"),
                                           blas_int(c0.cols(), "n"), blas_int(op_cols(ta, a0.rows(), a0.cols()), "k"),
                                           &alpha, a0.data(), blas_int(a0.ld(), "A.ld"), a.stride, b0.data(),
                                           blas_int(b0.ld(), "B.ld"), b.stride, &beta, c0.data(),
                                           blas_int(c0.ld(), "C.ld"), c.stride, blas_int(c.count, "C.count")));
  }

  void do_qr(MatrixView<float> a, MatrixView<float> tau) override {
    const DeviceScope scope(device_);
    const int m = blas_int(a.rows(), "A.rows"), n = blas_int(a.cols(), "A.cols"), lda = blas_int(a.ld(), "A.ld");
    int lwork = 0;
    RANDNLA_CUDA(cusolverDnSgeqrf_bufferSize(solver_.get(), m, n, a.data(), lda, &lwork));
    Matrix<float> work(*this, std::max(lwork, 1), 1, "work");
    RANDNLA_CUDA(cusolverDnSgeqrf(solver_.get(), m, n, a.data(), lda, tau.data(), work.data(), lwork, device_info()));
    require_info_zero("geqrf");
  }

  void do_form_q(MatrixView<float> a, MatrixView<const float> tau) override {
    const DeviceScope scope(device_);
    const int m = blas_int(a.rows(), "A.rows"), n = blas_int(a.cols(), "A.cols"), lda = blas_int(a.ld(), "A.ld");
    int lwork = 0;
    RANDNLA_CUDA(cusolverDnSorgqr_bufferSize(solver_.get(), m, n, n, a.data(), lda, tau.data(), &lwork));
    Matrix<float> work(*this, std::max(lwork, 1), 1, "work");
    RANDNLA_CUDA(cusolverDnSorgqr(solver_.get(), m, n, n, a.data(), lda, tau.data(), work.data(), lwork, device_info()));
    require_info_zero("orgqr");
  }

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

  cudaStream_t stream() const { return stream_->get(); }
  static cublasComputeType_t compute_type(ProductMode mode) {
    return mode == ProductMode::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  }

  static int set_device(int device) {
    const int count = cuda_device_count();
    require(device >= 0 && device < count, "device", device, "must lie in 0.." + std::to_string(count - 1));
    RANDNLA_CUDA(cudaSetDevice(device));
    return device;
  }
  /// A's slices as one operand whose K runs over them.
  static TcOperand sliced(const StridedBatch<const float>& a, Op op) {
    TcOperand x = operand(a.first, op, false);
    x.slices = a.count, x.slice_stride = a.stride;
    return x;
  }
  /// B's matrices as the rows of one (they follow one another: checked by summed_in_one).
  template <class T>
  static MatrixView<const T> stacked(const StridedBatch<const T>& b) {
    return MatrixView<const T>(b.first.data(), b.first.rows() * b.count, b.first.cols(), b.first.ld(), b.first.space());
  }
  template <class T>
  static bool summed_in_one(Op ta, Op tb, const StridedBatch<const float>& a, const StridedBatch<const T>& b,
                            const ProductPrecision& precision) {
    return precision.mode == ProductMode::Split && tb == Op::N && b.stride == b.first.rows() &&
           b.first.rows() * b.count <= b.first.ld() && cuda::tc_gemm_takes_slices(sliced(a, ta));
  }
  template <class T>
  static TcOperand operand(const MatrixView<T>& v, Op op, bool fp16) {
    return TcOperand{v.data(), v.rows(), v.cols(), v.ld(), op, fp16};
  }

  /// A contiguous pair in one linear copy: cudaMemcpy2DAsync moved a 35840^2 FP32 matrix between
  /// two device buffers at 1.7 TB/s (bench_dense_parts passes), the linear copy at 3.0.
  template <class T>
  void copy2d(MatrixView<const T> s, MatrixView<T> d) {
    if (s.ld() == s.rows() && d.ld() == d.rows())
      RANDNLA_CUDA(cudaMemcpyAsync(d.data(), s.data(), s.size() * sizeof(T), cudaMemcpyDefault, stream()));
    else
      RANDNLA_CUDA(cudaMemcpy2DAsync(d.data(), d.ld() * sizeof(T), s.data(), s.ld() * sizeof(T), s.rows() * sizeof(T),
                                     s.cols(), cudaMemcpyDefault, stream()));
    if (s.space() == MemorySpace::Host || d.space() == MemorySpace::Host) synchronize();
  }

  template <class T>
  double sum_squares_root(MatrixView<const T> x) {
    auto* d = static_cast<double*>(scratch(sizeof(double)));
    RANDNLA_CUDA(cudaMemsetAsync(d, 0, sizeof(double), stream()));
    cuda::launch_sum_squares(x, d, stream());
    double h = 0;
    read_back(d, &h, 1);
    return std::sqrt(h);
  }

  /// `count` values of device memory into `host`, waiting for the stream, through page-locked
  /// memory: a copy into pageable memory returned 8-18 us after the device had finished it (CUPTI),
  /// and each input check and norm paid that.
  template <class T>
  void read_back(const T* device, T* host, std::size_t count) {
    require(count * sizeof(T) <= kReadBackBytes, "read_back.count", count, "fits the page-locked buffer");
    const std::shared_ptr<cuda::PinnedSlots::Slot> slot = read_back_slots_->take();
    RANDNLA_CUDA(cudaMemcpyAsync(slot->data, device, count * sizeof(T), cudaMemcpyDeviceToHost, stream()));
    synchronize();
    std::memcpy(host, slot->data, count * sizeof(T));
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
    read_back(device_info(), &h, 1);
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
  cuda::TcWorkspace ws_{device_, [this](std::size_t bytes) { return allocate(bytes); }};
  std::string name_;
  Capabilities capabilities_;
  static constexpr std::size_t kReadBackBytes = kExponentBins * sizeof(unsigned long long);
  std::shared_ptr<cuda::PinnedSlots> read_back_slots_ = std::make_shared<cuda::PinnedSlots>(device_, kReadBackBytes);
  std::shared_ptr<void> scratch_, info_, histogram_bins_;
  std::size_t scratch_bytes_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int device, void* stream) {
  return std::make_unique<CudaBackend>(device, static_cast<cudaStream_t>(stream));
}

}  // namespace randnla
