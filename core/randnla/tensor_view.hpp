// Rank-N dense tensor views over host or device memory, first index fastest (the generalised
// column-major order of LayoutLeft): element (i_0, ..., i_{N-1}) is data[sum_k i_k stride_k].
#pragma once

#include <array>
#include <string>

#include "randnla/matrix_view.hpp"

namespace randnla {

/// Non-owning view of an I_0 x ... x I_{N-1} tensor (1 <= N <= 8). Construction checks that the
/// first index is fastest and that no two elements share memory: stride_0 = 1 (or I_0 <= 1) and
/// stride_k >= stride_{k-1} I_{k-1} (padding between slices allowed); it throws InvalidArgument
/// naming `name` otherwise, never asserts.
template <class T, int N>
class TensorView {
  static_assert(N >= 1 && N <= 8, "randnla: tensors of rank 1 to 8");

 public:
  using Index = std::array<index_t, N>;

  TensorView() = default;
  TensorView(T* data, const Index& extents, const Index& strides, MemorySpace space, const std::string& name = "A")
      : data_(data), space_(space) {
    for (int k = 0; k < N; ++k) extents_[k] = extents[k], strides_[k] = strides[k];
    index_t reach = 1;  // the smallest stride the next mode may have
    for (int k = 0; k < N; ++k) {
      const std::string mode = name + ".mode" + std::to_string(k);
      require(extents[k] >= 0, mode + ".extent", extents[k], "must be >= 0");
      require(extents[k] <= 1 || strides[k] >= reach, mode + ".stride", strides[k],
              "must be >= " + std::to_string(reach) + (k == 0 ? " (first index fastest)" : " (no overlap)"));
      reach = (extents[k] <= 1 ? reach : strides[k]) * (extents[k] > 1 ? extents[k] : 1);
    }
    require(extents[0] <= 1 || strides[0] == 1, name + ".mode0.stride", strides[0],
            "must be 1 (first index fastest, LayoutLeft)");
    require(data != nullptr || size() == 0, name + ".data", "null", "must not be null when the tensor is not empty");
  }

  RANDNLA_HD T* data() const { return data_; }
  RANDNLA_HD index_t extent(int k) const { return extents_[k]; }
  RANDNLA_HD index_t stride(int k) const { return strides_[k]; }
  RANDNLA_HD MemorySpace space() const { return space_; }
  RANDNLA_HD index_t size() const {
    index_t s = 1;
    for (int k = 0; k < N; ++k) s *= extents_[k];
    return s;
  }
  static constexpr int rank() { return N; }

  /// Element access; valid for host views only (no check, for inner loops).
  template <class... I>
  RANDNLA_HD T& operator()(I... i) const {
    static_assert(sizeof...(I) == N, "randnla: one index per mode");
    const index_t idx[N] = {static_cast<index_t>(i)...};
    index_t offset = 0;
    for (int k = 0; k < N; ++k) offset += idx[k] * strides_[k];
    return data_[offset];
  }

  /// The mode-0 unfolding A_(0), I_0 x (I_1 ... I_{N-1}), as a matrix view of the same memory:
  /// it exists when modes 1 .. N-1 are packed one after the other (a LayoutLeft tensor's are).
  /// Throws InvalidArgument otherwise.
  MatrixView<T> mode0_unfolding(const std::string& name = "A") const { return unfolding_at(1, name); }
  /// The (I_0 ... I_{N-2}) x I_{N-1} matricization, the transpose of the last mode's unfolding
  /// A_(N-1)^T, as a matrix view: it exists when modes 0 .. N-2 are packed. Throws otherwise.
  MatrixView<T> last_mode_columns(const std::string& name = "A") const { return unfolding_at(N - 1, name); }

 private:
  /// The matrix whose rows are modes 0 .. split-1 and columns modes split .. N-1.
  MatrixView<T> unfolding_at(int split, const std::string& name) const {
    index_t rows = 1, cols = 1;
    for (int k = 0; k < N; ++k) (k < split ? rows : cols) *= extents_[k];
    for (int k = 1; k < N; ++k) {
      if (k == split || extents_[k] <= 1) continue;
      require(strides_[k] == strides_[k - 1] * extents_[k - 1], name + ".mode" + std::to_string(k) + ".stride",
              strides_[k], "must be packed after mode " + std::to_string(k - 1) + " for this matrix view");
    }
    const index_t ld = split < N && extents_[split] > 1 ? strides_[split] : (rows > 1 ? rows : 1);
    return MatrixView<T>(data_, rows, cols, ld, space_, name);
  }

  T* data_ = nullptr;
  index_t extents_[N] = {};  // plain arrays: device code reads them (std::array's operator[] is host-only)
  index_t strides_[N] = {};
  MemorySpace space_ = MemorySpace::Host;
};

}  // namespace randnla
