#include "tensor.hpp"

#include <algorithm>
#include <vector>

namespace randnla {

index_t PackedTensor::before(int n) const {
  index_t p = 1;
  for (int k = 0; k < n; ++k) p *= extents[k];
  return p;
}

index_t PackedTensor::after(int n) const {
  index_t p = 1;
  for (int k = n + 1; k < modes(); ++k) p *= extents[k];
  return p;
}

MatrixView<const float> PackedTensor::matrix(int split) const {
  const index_t rows = before(split), cols = rows == 0 ? 0 : size() / rows;
  return MatrixView<const float>(data, rows, cols, std::max<index_t>(rows, 1), space, "X");
}

PackedTensor PackedTensor::last_mode_slab(index_t r0, index_t count) const {
  PackedTensor slab{data + r0 * before(modes() - 1), extents, space};
  slab.extents.back() = count;
  return slab;
}

template <class T>
StridedBatch<T> mode_blocks(const PackedTensor& x, int n, MatrixView<T> m) {
  if (n == 0 || n == x.modes() - 1) return {m, 0, 1};
  const index_t slice = x.before(n);
  return {m.block(0, 0, slice, m.cols()), slice, x.after(n)};
}
template StridedBatch<const float> mode_blocks(const PackedTensor&, int, MatrixView<const float>);
template StridedBatch<const fp16> mode_blocks(const PackedTensor&, int, MatrixView<const fp16>);
template StridedBatch<float> mode_blocks(const PackedTensor&, int, MatrixView<float>);

namespace {

/// The slices X(:, .., :, i_n, r) (before(n) x I_n each) of a middle mode, one per r.
StridedBatch<const float> slices(const PackedTensor& x, int n) {
  const index_t rows = x.before(n), cols = x.extents[n];
  return {MatrixView<const float>(x.data, rows, cols, std::max<index_t>(rows, 1), x.space), rows * cols, x.after(n)};
}

template <class T>
void unfolding_times_impl(Products& prod, const PackedTensor& x, int n, StridedBatch<const T> b, float beta,
                          MatrixView<float> w) {
  if (n == 0) return prod.gemm(Op::N, Op::N, 1.0f, x.matrix(1), b.first, beta, w);
  if (n == x.modes() - 1) return prod.gemm(Op::T, Op::N, 1.0f, x.matrix(n), b.first, beta, w);
  prod.gemm_summed(Op::T, Op::N, 1.0f, slices(x, n), b, beta, w);
}

}  // namespace

void unfolding_times(Products& prod, const PackedTensor& x, int n, StridedBatch<const float> b, float beta,
                     MatrixView<float> w) {
  unfolding_times_impl(prod, x, n, b, beta, w);
}

void unfolding_times(Products& prod, const PackedTensor& x, int n, StridedBatch<const fp16> b, float beta,
                     MatrixView<float> w) {
  unfolding_times_impl(prod, x, n, b, beta, w);
}

void unfolding_times(Products& prod, const PackedTensor& x, int n, const StoredOperator& omega, float beta,
                     MatrixView<float> w, std::function<std::string()>* kernel) {
  if (n == 0 || n == x.modes() - 1) {
    const Op op = n == 0 ? Op::N : Op::T;
    const MatrixView<const float> xm = x.matrix(n == 0 ? 1 : n);
    if (kernel)
      *kernel = prod.times_named_later(op, 1.0f, xm, omega, beta, w);
    else
      prod.times(op, 1.0f, xm, omega, beta, w);
    return;
  }
  if (omega.is_fp16())
    unfolding_times(prod, x, n, mode_blocks(x, n, MatrixView<const fp16>(omega.half.view())), beta, w);
  else
    unfolding_times(prod, x, n, mode_blocks(x, n, MatrixView<const float>(omega.single.view())), beta, w);
}

Matrix<float> unfolding_transpose_times(Backend& b, Products& prod, const PackedTensor& x, int n,
                                        MatrixView<const float> q) {
  const index_t in = x.extents[n];
  Matrix<float> z(b, x.size() / std::max<index_t>(in, 1), q.cols(), "Z");
  if (n == 0)
    prod.gemm(Op::T, Op::N, 1.0f, x.matrix(1), q, 0.0f, z);
  else if (n == x.modes() - 1)
    prod.gemm(Op::N, Op::N, 1.0f, x.matrix(n), q, 0.0f, z);
  else
    prod.gemm_batched(Op::N, Op::N, 1.0f, slices(x, n), StridedBatch<const float>{q, 0, x.after(n)},
                      0.0f, mode_blocks(x, n, z.view()));
  return z;
}

namespace {
std::vector<index_t> rotated_extents(const PackedTensor& x, index_t l) {
  std::vector<index_t> e(x.extents.begin() + 1, x.extents.end());
  e.push_back(l);
  return e;
}
}  // namespace

OwnedTensor contract_first_mode(Backend& b, Products& prod, const PackedTensor& x, MatrixView<const float> m, Op op) {
  const MatrixView<const float> x0 = x.matrix(1);
  const index_t l = op_cols(op, m.rows(), m.cols());
  OwnedTensor y{Matrix<float>(b, x0.cols(), l, "X"), rotated_extents(x, l)};
  prod.gemm(Op::T, op, 1.0f, x0, m, 0.0f, y.storage);
  return y;
}

OwnedTensor contract_first_mode(Backend& b, Products& prod, const PackedTensor& x, const StoredOperator& phi) {
  const MatrixView<const float> x0 = x.matrix(1);
  OwnedTensor y{Matrix<float>(b, x0.cols(), phi.cols(), "X"), rotated_extents(x, phi.cols())};
  prod.times(Op::T, 1.0f, x0, phi, 0.0f, y.storage);
  return y;
}

void add_contract_first_mode(Products& prod, const PackedTensor& x, const StoredOperator& phi, OwnedTensor& into) {
  prod.times(Op::T, 1.0f, x.matrix(1), phi, 1.0f, into.storage);
}

}  // namespace randnla
