// The sparse sign projection's operation (algorithms/sparse_projection/sparse_projection_ops.hpp)
// as a Kokkos kernel on the portable backend's execution space.
#pragma once

#include "portable/kernels.hpp"
#include "sparse_projection/sparse_projection_ops.hpp"

namespace randnla {
namespace portable {

/// A work item per row j of S: it walks the row's segments in order and adds +-A's row i to
/// Y(j, :) for each non-zero S(j, i), then scales by S's magnitude. Every Y(j, c) is summed in
/// the order of i, whatever the thread count.
template <class Exec>
void sparse_sign_project(const Exec& exec, const SparseSignOperator& s, MatrixView<const float> a, bool columns,
                         MatrixView<float> y) {
  const index_t b = y.cols(), segments = s.segments();
  Kokkos::parallel_for("randnla::portable::sparse_sign_project", Policy<Exec>(exec, 0, s.rows),
                       KOKKOS_LAMBDA(index_t j) {
                         for (index_t c = 0; c < b; ++c) y(j, c) = 0.0f;
                         for (index_t g = 0; g < segments; ++g)
                           s.walk(j, g, [&](std::int64_t i, bool negative) {
                             for (index_t c = 0; c < b; ++c) {
                               const float v = columns ? a(i, c) : a(c, i);
                               y(j, c) += negative ? -v : v;
                             }
                           });
                         for (index_t c = 0; c < b; ++c) y(j, c) *= s.value;
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
