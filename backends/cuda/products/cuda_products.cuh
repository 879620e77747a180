// The CUDA product family: the library's Tensor Core kernels (SHGEMM, TCEC; cuda/tc_gemm.cuh) for split
// products, cuBLAS for FP32, TF32, FP16 and FP64.
#pragma once

#include <cuda_fp16.h>

#include "cuda/context/cuda_context.cuh"

namespace randnla {
namespace cuda {

class CudaProducts : public virtual ProductOps, public virtual CudaContext {
 public:
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
    if (!summed_in_one(ta, tb, a, b, precision)) return ProductOps::do_product_summed(ta, tb, alpha, a, b, beta, c, precision);
    cuda::tc_gemm(sliced(a, ta), operand(stacked(b), tb, true), alpha, beta, c, precision.split, nullptr, ws_, stream());
  }
  void do_product_summed(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b, float beta,
                         MatrixView<float> c, const ProductPrecision& precision) override {
    const DeviceScope scope(device_);
    if (!summed_in_one(ta, tb, a, b, precision)) return ProductOps::do_product_summed(ta, tb, alpha, a, b, beta, c, precision);
    cuda::tc_gemm(sliced(a, ta), operand(stacked(b), tb, false), alpha, beta, c, precision.split, nullptr, ws_, stream());
  }

  /// cuBLAS's strided-batched GEMM for FP32 and TF32; FP16 and Split run one product per matrix.
  void do_product_strided_batched(Op ta, Op tb, float alpha, StridedBatch<const float> a, StridedBatch<const float> b,
                                  float beta, StridedBatch<float> c, const ProductPrecision& precision) override {
    if (precision.mode != ProductMode::FP32 && precision.mode != ProductMode::TF32)
      return ProductOps::do_product_strided_batched(ta, tb, alpha, a, b, beta, c, precision);
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

 private:
  using TcOperand = cuda::TcOperand;
  static cublasComputeType_t compute_type(ProductMode mode) {
    return mode == ProductMode::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
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
};

}  // namespace cuda
}  // namespace randnla
