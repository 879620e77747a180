// The portable random generation family: Philox blocks drawn by Kokkos loops, any block alone.
#pragma once

#include "portable/context/portable_context.hpp"
#include "randnla/ops/random_generation.hpp"

namespace randnla {
namespace portable {

/// X(i, j) := draw.at(i, j), rounded to T: dense, a Philox block (up to four elements of a column)
/// per work item.
template <class Exec, class T>
void fill_random(const Exec& exec, const RandomDraw& draw, MatrixView<T> x) {
  if (!draw.ternary()) {
    const index_t rows = x.rows();
    for_each_element(exec, RandomDraw::blocks_per_column(rows), x.cols(), KOKKOS_LAMBDA(index_t q, index_t j) {
      draw.visit_block(q, j, rows, [&](std::int64_t i, float v) { assign(x(i, j), v); });
    });
    return;
  }
  for_each_element(exec, x.rows(), x.cols(), KOKKOS_LAMBDA(index_t i, index_t j) { assign(x(i, j), 0.0f); });
  const std::int64_t row0 = draw.block.row0, col0 = draw.block.col0, row_end = row0 + x.rows();
  Kokkos::parallel_for("randnla::portable::fill_sparse_columns", Policy<Exec>(exec, 0, x.cols()),
                       KOKKOS_LAMBDA(index_t j) {
                         draw.walk_column_nonzeros(col0 + j, row_end, [&](std::int64_t row, float v) {
                           if (row >= row0) assign(x(row - row0, j), v);
                         });
                       });
}

template <class Exec>
class PortableRandom : public virtual RandomOps, public virtual PortableContext<Exec> {
 public:
  using PortableContext<Exec>::exec_;

  void do_fill_random(const RandomDraw& draw, MatrixView<float> x) override { portable::fill_random(exec_, draw, x); }
  void do_fill_random(const RandomDraw& draw, MatrixView<fp16> x) override { portable::fill_random(exec_, draw, x); }
};

}  // namespace portable
}  // namespace randnla
