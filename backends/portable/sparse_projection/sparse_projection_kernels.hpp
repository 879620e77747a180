// The sparse sign projection's operation (algorithms/sparse_projection/sparse_projection_ops.hpp)
// as a Kokkos kernel on the portable backend's execution space.
#pragma once

#include "portable/kernels.hpp"
#include "randnla/sparse_projection/sparse_projection_ops.hpp"

namespace randnla {
namespace portable {

/// Columns of Y a work item holds while it walks a row of S.
constexpr index_t kProjectionBlock = 64;

/// A work item per row j of S and block of kProjectionBlock columns of Y: it walks the row's
/// segments in order, adding +-A's row i (those columns) for each non-zero S(j, i) into local
/// sums, then scales them by S's magnitude into Y. Every Y(j, c) is summed in the order of i,
/// whatever the thread count; each block re-draws the row (O(nnz) Philox calls) instead of
/// scattering into Y's strided rows.
template <class Exec>
void sparse_sign_project(const Exec& exec, const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                         MatrixView<float> y) {
  const index_t b = y.cols(), segments = s.segments(), blocks = (b + kProjectionBlock - 1) / kProjectionBlock;
  Kokkos::parallel_for("randnla::portable::sparse_sign_project", Policy<Exec>(exec, 0, s.rows * blocks),
                       KOKKOS_LAMBDA(index_t item) {
                         const index_t j = item % s.rows, c0 = item / s.rows * kProjectionBlock;
                         const index_t width = b - c0 < kProjectionBlock ? b - c0 : kProjectionBlock;
                         float sum[kProjectionBlock];
                         for (index_t c = 0; c < width; ++c) sum[c] = 0.0f;
                         for (index_t g = 0; g < segments; ++g)
                           s.walk(j, g, [&](std::int64_t i, bool negative) {
                             for (index_t c = 0; c < width; ++c) {
                               const float v = columns ? a(i, c0 + c) : a(c0 + c, i);
                               sum[c] += negative ? -v : v;
                             }
                           });
                         for (index_t c = 0; c < width; ++c) y(j, c0 + c) = sum[c] * s.value;
                       });
}

template <class Exec>
class SparseProjectionKernels final : public SparseProjectionOps {
 public:
  SparseProjectionKernels(const Exec& exec, MemorySpace space) : SparseProjectionOps(space), exec_(exec) {}

  // Public: nvcc takes no extended lambda in a protected member function.
  std::string do_project(const SparseSignOperator& s, MatrixView<const float> a, SampleLayout layout, SparseKernel,
                         MatrixView<float> y) override {
    portable::sparse_sign_project(exec_, s, a, layout == SampleLayout::Columns, y);
    return std::string("portable (Kokkos ") + Exec::name() + "): a work item per row of S";
  }

 private:
  Exec exec_;
};

}  // namespace portable
}  // namespace randnla
