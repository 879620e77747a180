// CholeskyQR's own operations (algorithms/orthonormalize/cholesky_qr_ops.hpp) as CUDA kernels on
// the backend's device and stream.
#include "cholesky_qr_ops.cuh"

#include <algorithm>
#include <functional>
#include <string>
#include <memory>

#include "cuda/elementwise/for_each.cuh"
#include "cuda/context/pinned_slots.cuh"
#include "cuda/tc/kernel_choice.hpp"
#include "fused_cholesky_qr.cuh"
#include "inverse_cholesky.cuh"
#include "orthogonality_probe.cuh"

namespace randnla {
namespace cuda {

// Launchers with external linkage: nvcc takes no extended lambda in a function of an unnamed namespace.
void launch_equilibrate(MatrixView<double> g, MatrixView<double> d, cudaStream_t s) {
  for_each(g.rows(), 1, s, "equilibration factors",
           [=] __device__(index_t i, index_t) { at(d, i, 0) = equilibration_factor(at(g, i, i)); });
  for_each(g.rows(), g.cols(), s, "equilibrate",
           [=] __device__(index_t i, index_t j) { at(g, i, j) *= at(d, i, 0) * at(d, j, 0); });
}

void launch_convert_scaled(MatrixView<const double> src, MatrixView<const double> scale, MatrixView<float> dst,
                           cudaStream_t s) {
  const double* f = scale.data();
  for_each(src.rows(), src.cols(), s, "convert f64->f32, columns scaled",
           [=] __device__(index_t i, index_t j) { at(dst, i, j) = static_cast<float>(at(src, i, j) * f[j]); });
}

namespace {

class CholeskyQrKernels final : public CholeskyQrOps {
 public:
  CholeskyQrKernels(int device, cudaStream_t stream, cublasHandle_t blas, TcWorkspace& products)
      : CholeskyQrOps(MemorySpace::Device),
        device_(device),
        stream_(stream),
        blas_(blas),
        products_(products),
        slots_(std::make_shared<PinnedSlots>(device, std::max(sizeof(FusedCholeskyQrStatus), sizeof(double)))) {}

  index_t fused_max_columns() const override { return kFusedCholeskyQrMaxColumns; }
  /// Wherever it takes Y: at 1048576 x 64 its three sweeps over Y on the FP64 Tensor Cores beat the
  /// FP64 path (an FP64 copy of Y, cuBLAS and cuSOLVER) in time and memory
  /// (perf_tests/results/bench_qr.md).
  bool fused_preferred(index_t /*m*/, index_t n) const override { return n <= fused_max_columns(); }
  index_t inverse_cholesky_max_order() const override { return kInverseCholeskyMaxOrder; }
  /// Past the fused path's widths, up to the inverse Cholesky kernel's order and the probe's width:
  /// Auto at 65536 x 512 took 0.906 ms against the FP64 path's 1.746, at 65536 x 128 0.307 against
  /// 0.442 (perf_tests/results/bench_qr.md).
  bool split_preferred(index_t m, index_t n) const override {
    const DeviceScope scope(device_);
    return n > fused_max_columns() && n <= kInverseCholeskyMaxOrder && n <= orthogonality_probe_max_columns() &&
           m >= 4 * n;
  }
  bool split_streams_in_place(MatrixView<const float> y) const override {
    const DeviceScope scope(device_);
    return !choose_wgmma() || tc_gemm_streams_in_place(y.data(), y.ld());
  }
  index_t orthogonality_probe_workspace(index_t /*m*/, index_t n, index_t s) const override {
    const DeviceScope scope(device_);
    return cuda::orthogonality_probe_workspace(n, s);
  }
  index_t inverse_cholesky_workspace(index_t n) const override { return cuda::inverse_cholesky_workspace(n); }
  index_t fused_workspace(index_t m, index_t n) const override {
    const DeviceScope scope(device_);
    return cuda::fused_cholesky_qr_workspace(m, n);
  }

 protected:
  std::function<int()> do_queue_fused_cholesky_qr(MatrixView<float> y, int passes, MatrixView<double> work) override {
    const DeviceScope scope(device_);
    std::shared_ptr<PinnedSlots::Slot> slot = slots_->take();
    cuda::queue_fused_cholesky_qr(y, passes, work, static_cast<FusedCholeskyQrStatus*>(slot->device_data),
                                  slot->written, stream_);
    return [slot] {
      wait_written(*slot);
      const auto* status = static_cast<const volatile FusedCholeskyQrStatus*>(slot->data);
      return status->breakdown ? -1 : status->passes;
    };
  }
  std::function<int()> do_queue_inverse_cholesky_factor(MatrixView<const double> g, MatrixView<double> rinv,
                                                        MatrixView<double> work) override {
    const DeviceScope scope(device_);
    std::shared_ptr<PinnedSlots::Slot> slot = slots_->take();
    cuda::queue_inverse_cholesky_factor(g, rinv, work.data(), static_cast<int*>(slot->device_data), stream_);
    return reader<int>(slot);
  }
  /// The Tensor Core product's tiles on or below the diagonal alone: 10 of 16 at n = 512.
  void do_split_gram(MatrixView<const float> y, MatrixView<float> g) override {
    const DeviceScope scope(device_);
    const TcOperand yt{y.data(), y.rows(), y.cols(), y.ld(), Op::T, false}, yn{y.data(), y.rows(), y.cols(), y.ld()};
    tc_gemm(yt, yn, 1.0f, 0.0f, g, TensorCore::Auto, nullptr, products_, stream_, TcStructure{true, false});
  }
  /// The Tensor Core product's K for C's column tile J up to J's last column: 5/8 of the work at n = 512.
  void do_split_multiply_upper_triangular(MatrixView<const float> y, MatrixView<const float> r,
                                          MatrixView<float> q) override {
    const DeviceScope scope(device_);
    const TcOperand yn{y.data(), y.rows(), y.cols(), y.ld()}, rn{r.data(), r.rows(), r.cols(), r.ld()};
    tc_gemm(yn, rn, 1.0f, 0.0f, q, TensorCore::Auto, nullptr, products_, stream_, TcStructure{false, true});
  }
  double do_orthogonality_probe(MatrixView<const float> w, MatrixView<const float> omega, MatrixView<float> copy_to,
                                MatrixView<double> work) override {
    const DeviceScope scope(device_);
    const index_t widest = orthogonality_probe_max_columns();
    require(w.cols() <= widest, "W.cols", w.cols(), "must be <= " + std::to_string(widest) + " on this device");
    std::shared_ptr<PinnedSlots::Slot> slot = slots_->take();
    queue_orthogonality_probe(w, omega, copy_to, work.data(), static_cast<double*>(slot->device_data), stream_);
    return reader<double>(slot)();
  }
  void do_equilibrate(MatrixView<double> g, MatrixView<double> d) override {
    const DeviceScope scope(device_);
    launch_equilibrate(g, d, stream_);
  }
  void do_convert_scaled(MatrixView<const double> src, MatrixView<const double> s, MatrixView<float> dst) override {
    const DeviceScope scope(device_);
    launch_convert_scaled(src, s, dst, stream_);
  }
  void do_multiply_upper_triangular(MatrixView<const double> y, MatrixView<const double> r,
                                    MatrixView<double> q) override {
    const DeviceScope scope(device_);
    const double one = 1.0;
    RANDNLA_CUDA(cublasDtrmm(blas_, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT,
                             blas_int(y.rows(), "Y.rows"), blas_int(y.cols(), "Y.cols"), &one, r.data(),
                             blas_int(r.ld(), "R.ld"), y.data(), blas_int(y.ld(), "Y.ld"), q.data(),
                             blas_int(q.ld(), "Q.ld")));
  }

 private:
  /// The value a kernel queued before this call writes into `slot`, read once the stream gets there.
  template <class T>
  std::function<T()> reader(std::shared_ptr<PinnedSlots::Slot> slot) const {
    RANDNLA_CUDA(cudaEventRecord(slot->written, stream_));
    return [slot] {
      wait_written(*slot);
      return *static_cast<const volatile T*>(slot->data);
    };
  }

  int device_;
  cudaStream_t stream_;
  cublasHandle_t blas_;  // the backend's, on stream_
  TcWorkspace& products_;
  std::shared_ptr<PinnedSlots> slots_;  // where the verdicts land
};

}  // namespace

std::shared_ptr<CholeskyQrOps> make_cholesky_qr_ops(int device, cudaStream_t stream, cublasHandle_t blas,
                                                    TcWorkspace& products) {
  return std::make_shared<CholeskyQrKernels>(device, stream, blas, products);
}

}  // namespace cuda
}  // namespace randnla
