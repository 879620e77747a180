// The Tensor Core TSQR variants' blocks (algorithms/tsqr/tensor_core_tsqr_ops.hpp) as Kokkos
// kernels on the portable backend's execution space, after Ootomo & Yokota's batched QR: each
// block's Householder reflector H = I - tau v v^T is formed explicitly and applied as a product, H R
// for R and H Q' for Q, in the variant's arithmetic (TsqrDot). Without Tensor Cores that arithmetic
// is emulated element by element, as the backend's split products are: these kernels define the
// variants' numerics for validation, and run them wherever a Kokkos execution space does.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "portable/kernels.hpp"
#include "randnla/tsqr/tensor_core_tsqr_ops.hpp"

namespace randnla {
namespace portable {

/// The block of row i when m rows are split as tsqr_block_start.
KOKKOS_INLINE_FUNCTION index_t tsqr_block_of(index_t i, index_t m, index_t blocks) {
  index_t b = i * blocks / m;
  while (b + 1 < blocks && tsqr_block_start(b + 1, m, blocks) <= i) ++b;
  return b;
}

/// A block of `rows` rows of w (from row r0) and its column of scratch, as one work item sees them.
struct ReflectorBlock {
  MatrixView<float> w;
  index_t r0, rows, n;
  float* out;  ///< rows floats: a column of a product before it is written back

  KOKKOS_INLINE_FUNCTION float& at(index_t i, index_t j) const { return w(r0 + i, j); }

  /// Scales the block by block_scale of its largest column norm, and returns that power of two.
  KOKKOS_INLINE_FUNCTION float scale_into_range() const {
    double big = 0.0;
    for (index_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (index_t i = 0; i < rows; ++i) s += double(at(i, j)) * at(i, j);
      big = s > big ? s : big;
    }
    const float s = block_scale(static_cast<float>(std::sqrt(big)));
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < rows; ++i) at(i, j) *= s;
    return s;
  }

  /// The reflector of column j from row j: beta into (j, j), v's tail below it (v_j = 1); tau.
  KOKKOS_INLINE_FUNCTION float reflector(index_t j) const {
    float tail = 0.0f;
    for (index_t i = j + 1; i < rows; ++i) tail += at(i, j) * at(i, j);
    const Reflector h = householder(at(j, j), tail);
    for (index_t i = j + 1; i < rows; ++i) at(i, j) *= h.to_v;
    at(j, j) = h.beta;
    return h.tau;
  }

  /// x(j:rows) := H_j x(j:rows), H_j = I - tau v v^T formed element by element, for column c of
  /// the matrix `x` (w itself, or Q's block), in `arithmetic`.
  template <class X>
  KOKKOS_INLINE_FUNCTION void apply(index_t j, float tau, const X& x, index_t c, TsqrArithmetic arithmetic) const {
    for (index_t i = j; i < rows; ++i) {
      const float vi = i == j ? 1.0f : at(i, j);
      TsqrDot dot(arithmetic);
      for (index_t k = j; k < rows; ++k) {
        const float vk = k == j ? 1.0f : at(k, j);
        dot.add(reflector_entry(i == k, tau, vi, vk), x(k, c));
      }
      out[i] = dot.value();
    }
    for (index_t i = j; i < rows; ++i) x(i, c) = out[i];
  }
};

/// Every block of A (A m x n, split as tsqr_block_start) factored by explicit reflectors in
/// `arithmetic`: R_i into r_stack, Q_i into q (when q is not empty). A is copied first, so q may be A.
template <class Exec>
void factor_by_reflectors(const Exec& exec, Backend& b, TsqrArithmetic arithmetic, MatrixView<const float> a,
                          index_t blocks, MatrixView<float> q, MatrixView<float> r_stack) {
  const index_t m = a.rows(), n = a.cols(), tallest = (m + blocks - 1) / blocks;
  Matrix<float> work(b, m, n, "reflectors"), taus(b, n, blocks, "tau"), scratch(b, tallest, blocks, "H x");
  b.copy(a, work.view());
  const MatrixView<float> w = work.view(), tau = taus.view(), out = scratch.view();
  const bool form_q = !q.empty();
  Kokkos::parallel_for(
      "randnla::portable::factor_by_reflectors", Policy<Exec>(exec, 0, blocks), KOKKOS_LAMBDA(const index_t blk) {
        const index_t r0 = tsqr_block_start(blk, m, blocks), rows = tsqr_block_start(blk + 1, m, blocks) - r0;
        const ReflectorBlock block{w, r0, rows, n, &out(0, blk)};
        const float s = block.scale_into_range();
        const auto mine = [&](index_t i, index_t j) -> float& { return block.at(i, j); };
        for (index_t j = 0; j < n; ++j) {
          tau(j, blk) = block.reflector(j);
          for (index_t c = j + 1; c < n; ++c) block.apply(j, tau(j, blk), mine, c, arithmetic);
        }
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < n; ++i) r_stack(blk * n + i, j) = i <= j ? block.at(i, j) / s : 0.0f;
        if (!form_q) return;
        const auto qi = [&](index_t i, index_t j) -> float& { return q(r0 + i, j); };
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < rows; ++i) qi(i, j) = i == j ? 1.0f : 0.0f;
        for (index_t j = n - 1; j >= 0; --j)
          for (index_t c = j; c < n; ++c) block.apply(j, tau(j, blk), qi, c, arithmetic);
      });
}

/// Q's block i := Q_i S_i in `arithmetic`, S_i rows [i n, (i + 1) n) of s_stack.
template <class Exec>
void multiply_in(const Exec& exec, Backend& b, TsqrArithmetic arithmetic, MatrixView<float> q, index_t blocks,
                 MatrixView<const float> s_stack) {
  const index_t m = q.rows(), n = q.cols();
  Matrix<float> before(b, m, n, "Q blocks");
  b.copy(MatrixView<const float>(q), before.view());
  const MatrixView<const float> t = before.view();
  for_each_element(exec, m, n, KOKKOS_LAMBDA(index_t i, index_t c) {
    const index_t s0 = tsqr_block_of(i, m, blocks) * n;
    TsqrDot dot(arithmetic);
    for (index_t k = 0; k < n; ++k) dot.add(t(i, k), s_stack(s0 + k, c));
    q(i, c) = dot.value();
  });
}

template <class Exec>
class ReflectorBlocks final : public TsqrOps {
 public:
  ReflectorBlocks(const Exec& exec, Backend& b, TsqrArithmetic arithmetic)
      : TsqrOps(b.memory_space()), exec_(exec), b_(b), arithmetic_(arithmetic) {}

  index_t max_columns() const override { return kMaxColumns; }
  index_t max_block_rows(index_t n) const override { return n >= 1 && n <= kMaxColumns ? 4 * kMaxColumns : 0; }
  /// The poster's blocks: twice as many rows as columns (32 x 16), the fewest the tree takes.
  index_t preferred_block_rows(index_t n) const override { return std::max<index_t>(2 * n, 32); }

  // Public: nvcc takes no extended lambda in a protected member function.
  void do_factor_blocks(MatrixView<const float> a, index_t blocks, MatrixView<float> q,
                        MatrixView<float> r_stack) override {
    factor_by_reflectors(exec_, b_, arithmetic_, a, blocks, q, r_stack);
  }
  void do_multiply_blocks(MatrixView<float> q, index_t blocks, MatrixView<const float> s_stack) override {
    multiply_in(exec_, b_, arithmetic_, q, blocks, s_stack);
  }

 private:
  static constexpr index_t kMaxColumns = 128;
  Exec exec_;
  Backend& b_;
  TsqrArithmetic arithmetic_;
};

template <class Exec>
class ReflectorTsqrKernels final : public TensorCoreTsqrOps {
 public:
  ReflectorTsqrKernels(const Exec& exec, Backend& b) : exec_(exec), b_(b) {}
  bool runs(TsqrArithmetic arithmetic) const override { return arithmetic != TsqrArithmetic::FP32; }
  std::unique_ptr<TsqrOps> blocks_in(TsqrArithmetic arithmetic) override {
    return std::make_unique<ReflectorBlocks<Exec>>(exec_, b_, arithmetic);
  }
  std::string description(TsqrArithmetic arithmetic) const override {
    return std::string("explicit Householder reflectors, products in ") + to_string(arithmetic) +
           " emulated element by element";
  }

 private:
  Exec exec_;
  Backend& b_;
};

}  // namespace portable
}  // namespace randnla
