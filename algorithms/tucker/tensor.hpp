// Packed N-way tensors of any number of modes, and the mode products of the Tucker algorithms:
// each is one product, or one strided-batched product, over the tensor's own memory.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "randnla/common/precision_policy.hpp"
#include "randnla/backend.hpp"
#include "randnla/tensor_view.hpp"

namespace randnla {

/// A dense I_0 x ... x I_{N-1} FP32 tensor, first index fastest and packed (stride_k =
/// I_0 ... I_{k-1}), in one memory space; the number of modes is known at run time.
struct PackedTensor {
  const float* data = nullptr;
  std::vector<index_t> extents;
  MemorySpace space = MemorySpace::Host;

  int modes() const { return static_cast<int>(extents.size()); }
  index_t size() const { return before(modes()); }
  index_t before(int n) const;  ///< I_0 ... I_{n-1}
  index_t after(int n) const;   ///< I_{n+1} ... I_{N-1}
  /// The matrix of the same memory whose rows are modes 0 .. split-1: before(split) x the rest.
  MatrixView<const float> matrix(int split) const;
  /// Slices r0 .. r0 + count - 1 of the last mode.
  PackedTensor last_mode_slab(index_t r0, index_t count) const;
};

/// The packed tensor of a TensorView; throws InvalidArgument naming `name`'s stride that is not.
template <class T, int N>
PackedTensor packed_tensor(const TensorView<T, N>& v, const std::string& name) {
  PackedTensor t{v.data(), std::vector<index_t>(N), v.space()};
  index_t stride = 1;
  for (int k = 0; k < N; ++k) {
    t.extents[k] = v.extent(k);
    require(v.extent(k) <= 1 || v.stride(k) == stride, name + ".mode" + std::to_string(k) + ".stride", v.stride(k),
            "must be " + std::to_string(stride) + " (packed, as a LayoutLeft view)");
    stride *= v.extent(k);
  }
  return t;
}

/// A packed tensor that owns its memory (a matrix of the backend).
struct OwnedTensor {
  Matrix<float> storage;
  std::vector<index_t> extents;
  PackedTensor view() const { return PackedTensor{storage.data(), extents, storage.space()}; }
};

/// The (prod_{k != n} I_k) x l operand of mode n's products, as the blocks that the products with
/// the mode-n unfolding read: for a middle mode one L x l block per slice r of the modes after n
/// (L = I_0 ... I_{n-1}), its rows (i_0 .. i_{n-1}) for that r; for the first and last modes one
/// matrix, rows in the order of the remaining modes.
template <class T>
StridedBatch<T> mode_blocks(const PackedTensor& x, int n, MatrixView<T> m);

/// W (I_n x l) := X_(n) B + beta W, B given as mode_blocks (FP32, or FP16 for SHGEMM).
void unfolding_times(Products& prod, const PackedTensor& x, int n, StridedBatch<const float> b, float beta,
                     MatrixView<float> w);
void unfolding_times(Products& prod, const PackedTensor& x, int n, StridedBatch<const fp16> b, float beta,
                     MatrixView<float> w);
/// W (I_n x l) := X_(n) Omega + beta W for an operator stored by Products::store (rows in
/// mode_blocks' order). Where `kernel` is non-null and the product has a report (n first or
/// last), *kernel names its kernel as Products::times_named_later does, without a wait now.
void unfolding_times(Products& prod, const PackedTensor& x, int n, const StoredOperator& omega, float beta,
                     MatrixView<float> w, std::function<std::string()>* kernel = nullptr);

/// Z := X_(n)^T Q, Q I_n x l; Z (prod_{k != n} I_k x l) stored as mode_blocks read it.
Matrix<float> unfolding_transpose_times(Backend& b, Products& prod, const PackedTensor& x, int n,
                                        MatrixView<const float> q);

/// Y := X_(0)^T op(M) + beta Y, op(M) I_0 x l: the tensor X x_0 op(M)^T with its new mode moved
/// last (I_1 x ... x I_{N-1} x l). N such contractions, by every mode in turn, return the modes to
/// their order.
OwnedTensor contract_first_mode(Backend& b, Products& prod, const PackedTensor& x, MatrixView<const float> m,
                                Op op = Op::N);
/// The same with an operator stored by Products::store (op(M) = Phi).
OwnedTensor contract_first_mode(Backend& b, Products& prod, const PackedTensor& x, const StoredOperator& phi);
/// into := into + X_(0)^T Phi (the streamed core sketch's last contraction).
void add_contract_first_mode(Products& prod, const PackedTensor& x, const StoredOperator& phi, OwnedTensor& into);

}  // namespace randnla
