// The sparse algorithms' operations (algorithms/sparse/sparse_ops.hpp) on a CUDA device: the CSR
// products by cuSPARSE's SpMM (CUSPARSE_SPMM_CSR_ALG1, which takes A and A^T with column-major
// blocks), its workspace kept and grown, its size cached per shape; the sparse sign sketch by its
// own kernel (sparse_sign_sketch.cu); the checks by one small kernel.
// cuSPARSE documents that products with A^T may differ slightly from run to run (atomics): the
// CUDA backend's sparse results are reproducible to rounding, not bit for bit.
#include "cusparse_ops.cuh"

#include <cusparse.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "cuda/context/cuda_check.hpp"
#include "sparse_sign_sketch.cuh"

namespace randnla {
namespace cuda {
namespace {

void check(cusparseStatus_t s, const char* call) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw DeviceError(std::string(call) + ": " + cusparseGetErrorName(s) + " (" + cusparseGetErrorString(s) + ")");
}
#define RANDNLA_CUSPARSE(call) check((call), #call)

constexpr unsigned long long kNone = ~0ull;
constexpr int kThreads = 256;

unsigned blocks_for(index_t n) {
  const index_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 4096 ? b : 4096);  // grid-stride beyond
}

/// Whether a row starts at position j: some row_ptr[i] == j, found by binary search over row_ptr
/// (non-decreasing where the offsets are valid, the only case in which CsrDefects::entry is read).
__device__ bool row_starts_at(const std::int32_t* row_ptr, index_t rows, index_t j) {
  index_t lo = 0, hi = rows;
  while (lo < hi) {
    const index_t mid = lo + (hi - lo) / 2;
    if (row_ptr[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return row_ptr[lo] == j;
}

/// SparseOps::first_defects in one launch: a thread per offset i in 0 .. rows checks row_ptr[i],
/// and a thread per entry j its column index (in range, above the one before it unless j starts
/// a row) and its value (v - v is 0 exactly for finite v). A thread per entry, not per row: a
/// graph's rows are as long as its nodes' degrees (up to 673 entries in WordNet's, against 3 on
/// average), and one thread walking the longest row took 131 us of the check's 0.21 ms on the
/// H100. first[0]: the offset, first[1]: the entry.
__global__ void first_defects_kernel(const std::int32_t* row_ptr, const std::int32_t* col_idx, const float* values,
                                     index_t rows, std::int32_t cols, index_t nnz, unsigned long long* first) {
  const index_t start = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t i = start; i <= rows; i += stride) {
    const std::int32_t o = row_ptr[i];
    if (i == 0 ? o != 0 : o < row_ptr[i - 1] || o > nnz || (i == rows && o != nnz))
      atomicMin(first, static_cast<unsigned long long>(i));
  }
  for (index_t j = start; j < nnz; j += stride) {
    const std::int32_t c = col_idx[j];
    const bool bad = c < 0 || c >= cols || !(values[j] - values[j] == 0.0f) ||
                     (j > 0 && c <= col_idx[j - 1] && !row_starts_at(row_ptr, rows, j));
    if (bad) atomicMin(first + 1, static_cast<unsigned long long>(j));
  }
}

class CusparseOps final : public SparseOps {
 public:
  explicit CusparseOps(std::shared_ptr<StreamMemory> memory) : SparseOps(MemorySpace::Device), memory_(std::move(memory)) {
    RANDNLA_CUSPARSE(cusparseCreate(&handle_));
    RANDNLA_CUSPARSE(cusparseSetStream(handle_, memory_->get()));
  }
  ~CusparseOps() override { cusparseDestroy(handle_); }

  std::string do_spmm(const CsrView& a, Op op, MatrixView<const float> x, MatrixView<float> y) override {
    cusparseConstSpMatDescr_t sa = nullptr;
    cusparseConstDnMatDescr_t dx = nullptr;
    cusparseDnMatDescr_t dy = nullptr;
    RANDNLA_CUSPARSE(cusparseCreateConstCsr(&sa, a.rows, a.cols, a.nnz, a.row_ptr, a.col_idx, a.values, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    RANDNLA_CUSPARSE(cusparseCreateConstDnMat(&dx, x.rows(), x.cols(), x.ld(), x.data(), CUDA_R_32F, CUSPARSE_ORDER_COL));
    RANDNLA_CUSPARSE(cusparseCreateDnMat(&dy, y.rows(), y.cols(), y.ld(), y.data(), CUDA_R_32F, CUSPARSE_ORDER_COL));
    const cusparseOperation_t opa = op == Op::N ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE;
    const float one = 1.0f, zero = 0.0f;
    try {
      void* buffer = workspace(a, op, x, y, opa, sa, dx, dy);
      RANDNLA_CUSPARSE(cusparseSpMM(handle_, opa, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sa, dx, &zero, dy, CUDA_R_32F,
                                    CUSPARSE_SPMM_CSR_ALG1, buffer));
    } catch (...) {
      destroy(sa, dx, dy);
      throw;
    }
    destroy(sa, dx, dy);
    return "csr spmm (cuSPARSE SpMM, CSR_ALG1)";
  }
  std::string do_sparse_sign_sketch(const CsrView& a, const SparseSignSketch& omega, MatrixView<float> y) override {
    queue_sparse_sign_sketch(a, omega, y, memory_->get());
    return "sparse sign sketch (rows of Y summed in shared memory, a thread per row and block of columns)";
  }
  CsrDefects do_first_defects(const CsrView& a) override {
    unsigned long long* first = result_slots();
    first_defects_kernel<<<blocks_for(std::max(a.rows + 1, a.nnz)), kThreads, 0, memory_->get()>>>(
        a.row_ptr, a.col_idx, a.values, a.rows, static_cast<std::int32_t>(a.cols), a.nnz, first);
    RANDNLA_CUDA_LAUNCH("CSR check");
    unsigned long long h[2] = {kNone, kNone};
    RANDNLA_CUDA(cudaMemcpyAsync(h, first, sizeof h, cudaMemcpyDeviceToHost, memory_->get()));
    RANDNLA_CUDA(cudaStreamSynchronize(memory_->get()));
    const auto found = [](unsigned long long v) { return v == kNone ? index_t{-1} : static_cast<index_t>(v); };
    return CsrDefects{found(h[0]), found(h[1])};
  }
  CsrEntry do_entry(const CsrView& a, index_t row, index_t position) override {
    CsrEntry e;
    const cudaStream_t s = memory_->get();
    RANDNLA_CUDA(cudaMemcpyAsync(&e.row_begin, a.row_ptr + row, sizeof(std::int32_t), cudaMemcpyDeviceToHost, s));
    RANDNLA_CUDA(cudaMemcpyAsync(&e.row_end, a.row_ptr + row + 1, sizeof(std::int32_t), cudaMemcpyDeviceToHost, s));
    if (position >= 0) {
      RANDNLA_CUDA(cudaMemcpyAsync(&e.column, a.col_idx + position, sizeof(std::int32_t), cudaMemcpyDeviceToHost, s));
      RANDNLA_CUDA(cudaMemcpyAsync(&e.value, a.values + position, sizeof(float), cudaMemcpyDeviceToHost, s));
    }
    RANDNLA_CUDA(cudaStreamSynchronize(s));
    return e;
  }

 private:
  using Shape = std::tuple<index_t, index_t, index_t, index_t, int, index_t, index_t>;

  static void destroy(cusparseConstSpMatDescr_t sa, cusparseConstDnMatDescr_t dx, cusparseDnMatDescr_t dy) {
    cusparseDestroySpMat(sa), cusparseDestroyDnMat(dx), cusparseDestroyDnMat(dy);
  }

  /// SpMM's workspace for this shape: its size asked once per shape, the buffer grown to the largest.
  void* workspace(const CsrView& a, Op op, MatrixView<const float> x, MatrixView<float> y, cusparseOperation_t opa,
                  cusparseConstSpMatDescr_t sa, cusparseConstDnMatDescr_t dx, cusparseDnMatDescr_t dy) {
    const Shape shape{a.rows, a.cols, a.nnz, x.cols(), static_cast<int>(op), x.ld(), y.ld()};
    auto it = sizes_.find(shape);
    if (it == sizes_.end()) {
      const float one = 1.0f, zero = 0.0f;
      std::size_t bytes = 0;
      RANDNLA_CUSPARSE(cusparseSpMM_bufferSize(handle_, opa, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, sa, dx, &zero, dy,
                                               CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG1, &bytes));
      it = sizes_.emplace(shape, bytes).first;
    }
    if (it->second > buffer_bytes_) {
      buffer_ = StreamMemory::allocate(memory_, it->second);
      buffer_bytes_ = it->second;
    }
    return buffer_.get();
  }

  /// Two verdicts, each kNone until the kernel lowers it.
  unsigned long long* result_slots() {
    if (!result_) result_ = StreamMemory::allocate(memory_, 2 * sizeof(unsigned long long));
    auto* p = static_cast<unsigned long long*>(result_.get());
    RANDNLA_CUDA(cudaMemsetAsync(p, 0xff, 2 * sizeof(unsigned long long), memory_->get()));
    return p;
  }

  std::shared_ptr<StreamMemory> memory_;
  cusparseHandle_t handle_ = nullptr;
  std::map<Shape, std::size_t> sizes_;
  std::shared_ptr<void> buffer_, result_;
  std::size_t buffer_bytes_ = 0;
};

}  // namespace

std::shared_ptr<SparseOps> make_sparse_ops(std::shared_ptr<StreamMemory> memory) {
  return std::make_shared<CusparseOps>(std::move(memory));
}

}  // namespace cuda
}  // namespace randnla
