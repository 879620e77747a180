// The CUDA backend's device context: the device, the stream and its stream-ordered pool, the
// cuBLAS and cuSOLVER handles, page-locked read-backs and the Tensor Core workspace, shared by
// every family of this backend (the families' files beside this folder) and handed to the
// algorithms' operations (Resources).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstring>
#include <memory>
#include <string>

#include "cuda/context/resources.cuh"
#include "cuda/cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda/elementwise/elementwise.cuh"
#include "pinned_slots.cuh"
#include "stream_memory.cuh"
#include "cuda/factorizations/symmetric_eig.cuh"
#include "cuda/products/tc_gemm.cuh"
#include "randnla/backend.hpp"

namespace randnla {
namespace cuda {

inline cublasOperation_t cublas_op(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

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
class SideStreamHandle {
 public:
  SideStreamHandle() {
    RANDNLA_CUDA(cudaStreamCreateWithFlags(&s_.stream, cudaStreamNonBlocking));
    RANDNLA_CUDA(cublasCreate(&s_.blas));
    RANDNLA_CUDA(cublasSetStream(s_.blas, s_.stream));
    RANDNLA_CUDA(cudaEventCreateWithFlags(&s_.reduced, cudaEventDisableTiming));
    RANDNLA_CUDA(cudaEventCreateWithFlags(&s_.formed, cudaEventDisableTiming));
  }
  ~SideStreamHandle() {
    cudaStreamSynchronize(s_.stream);
    cudaEventDestroy(s_.formed);
    cudaEventDestroy(s_.reduced);
    cublasDestroy(s_.blas);
    cudaStreamDestroy(s_.stream);
  }
  SideStreamHandle(const SideStreamHandle&) = delete;
  SideStreamHandle& operator=(const SideStreamHandle&) = delete;
  const cuda::SideStream& get() const { return s_; }

 private:
  cuda::SideStream s_{};
};

/// The state every family of the CUDA backend shares, and the context's own members.
class CudaContext : public virtual DeviceContext {
 public:
  CudaContext(int device, cudaStream_t stream)
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
  /// Waits for `later` (and so for `earlier`, queued before it on this stream) before reading the
  /// time: reading it first returned cudaErrorNotReady for marks still in the queue, 26 API errors
  /// under compute-sanitizer's memcheck in test_gpu (perf_tests/results/sanitizers.md).
  double milliseconds_between(const std::shared_ptr<void>& earlier, const std::shared_ptr<void>& later) override {
    const DeviceScope scope(device_);
    const auto first = static_cast<cudaEvent_t>(earlier.get()), second = static_cast<cudaEvent_t>(later.get());
    RANDNLA_CUDA(cudaEventSynchronize(second));
    float ms = 0.0f;
    RANDNLA_CUDA(cudaEventElapsedTime(&ms, first, second));
    return ms;
  }

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

  /// What the algorithms' own operations are made from (provide_algorithm_ops).
  Resources resources() { return Resources{device_, stream_, blas_.get(), ws_}; }

 protected:
  /// Named by the families' implicit constructors, which never run it: a virtual base is built by
  /// the most derived class alone (CudaBackend, with the constructor above). Not defined.
  CudaContext();

  cudaStream_t stream() const { return stream_->get(); }
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

  static int set_device(int device) {
    const int count = cuda_device_count();
    require(device >= 0 && device < count, "device", device, "must lie in 0.." + std::to_string(count - 1));
    RANDNLA_CUDA(cudaSetDevice(device));
    return device;
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
  SideStreamHandle side_;
  cuda::TcWorkspace ws_{device_, [this](std::size_t bytes) { return allocate(bytes); }};
  std::string name_;
  Capabilities capabilities_;
  static constexpr std::size_t kReadBackBytes = kExponentBins * sizeof(unsigned long long);
  std::shared_ptr<cuda::PinnedSlots> read_back_slots_ = std::make_shared<cuda::PinnedSlots>(device_, kReadBackBytes);
  std::shared_ptr<void> scratch_, info_, histogram_bins_;
  std::size_t scratch_bytes_ = 0;
};

}  // namespace cuda
}  // namespace randnla
