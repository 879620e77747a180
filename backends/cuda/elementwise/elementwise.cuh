// Launchers of the elementwise, reduction and packing kernels (elementwise.cu).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "randnla/backend.hpp"
#include "randnla/random.hpp"

namespace randnla {
namespace cuda {

void launch_fill_random(const RandomDraw& draw, MatrixView<float> x, cudaStream_t s);
void launch_fill_random(const RandomDraw& draw, MatrixView<fp16> x, cudaStream_t s);
void launch_convert(MatrixView<const float> src, MatrixView<double> dst, cudaStream_t s);
void launch_convert(MatrixView<const double> src, MatrixView<float> dst, cudaStream_t s);
void launch_convert(MatrixView<const float> src, MatrixView<fp16> dst, cudaStream_t s);
void launch_convert(MatrixView<const fp16> src, MatrixView<float> dst, cudaStream_t s);
void launch_transpose(MatrixView<const float> src, MatrixView<float> dst, cudaStream_t s);
/// X := alpha X (alpha = 0 writes zeros).
void launch_add(float alpha, MatrixView<const float> x, float beta, MatrixView<float> y, cudaStream_t s);
void launch_scale(float alpha, MatrixView<float> x, cudaStream_t s);
void launch_scale(double alpha, MatrixView<double> x, cudaStream_t s);
/// X(i, j) *= scale[i] (by_row) or scale[j].
void launch_scale(const float* scale, MatrixView<float> x, bool by_row, cudaStream_t s);
void launch_scale(const double* scale, MatrixView<double> x, bool by_row, cudaStream_t s);
void launch_add_to_diagonal(MatrixView<double> g, double shift, cudaStream_t s);
void launch_zero_lower(MatrixView<double> g, cudaStream_t s);
/// Where a histogram pass counts: `bins` (256, on the device, zero before the pass) and, where
/// `published` is given (page-locked host memory mapped for the device), the pass's last block
/// copies the bins there and leaves `bins` and `finished` (its block counter, zero before the pass)
/// zero again: the caller then needs neither a memset nor a copy, each a few microseconds of
/// waiting on the device between short steps.
struct HistogramTarget {
  unsigned long long* bins;
  unsigned long long* published = nullptr;
  unsigned int* finished = nullptr;
};
/// Counts of x's non-zero elements per FP32 exponent, added into the target's bins.
void launch_histogram(MatrixView<const float> x, HistogramTarget target, cudaStream_t s);
/// h := scale x rounded to FP16 (scale a power of two), and x's exponent histogram added into the
/// target's bins, in one pass.
void launch_convert_measured(MatrixView<const float> x, MatrixView<fp16> h, float scale, HistogramTarget target,
                             cudaStream_t s);
/// *out += sum of squares of x, in FP64 (out zeroed by the caller).
void launch_sum_squares(MatrixView<const float> x, double* out, cudaStream_t s);
void launch_sum_squares(MatrixView<const double> x, double* out, cudaStream_t s);
/// signs[j] := the sign of column j's entry of largest magnitude (the first on ties), one block per column.
void launch_signs_of_largest(MatrixView<const float> x, float* signs, cudaStream_t s);
/// Reverses the order of G's columns and w's entries (ascending eigenpairs to descending).
void launch_reverse_eigenpairs(MatrixView<double> g, MatrixView<double> w, cudaStream_t s);

}  // namespace cuda
}  // namespace randnla
