// Owning matrices in a context's memory, and the allocator an algorithm makes its results with.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "randnla/context.hpp"

namespace randnla {

/// An owning column-major matrix in a backend's memory space (ld = rows, or aligned()'s).
template <class T>
class Matrix {
 public:
  Matrix() = default;
  Matrix(DeviceContext& context, index_t rows, index_t cols, const std::string& name = "A")
      : Matrix(context, rows, cols, name, rows > 1 ? rows : 1) {}
  /// A rows x cols matrix whose columns start on 16-byte boundaries: ld is max(rows, 1) rounded up
  /// to a multiple of 16 / sizeof(T). The CUDA backend's Tensor Core products stream such an operand as
  /// it lies; any other they first copy into that layout (their copy engine reads 16-byte rows).
  static Matrix<T> aligned(DeviceContext& context, index_t rows, index_t cols, const std::string& name = "A") {
    constexpr index_t per16 = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    return Matrix<T>(context, rows, cols, name, (std::max<index_t>(rows, 1) + per16 - 1) / per16 * per16);
  }
  /// A matrix over memory that `owner` keeps alive (e.g. a Kokkos::View the caller keeps).
  Matrix(std::shared_ptr<void> owner, MatrixView<T> view) : storage_(std::move(owner)), view_(view) {}
  /// The same elements, sharing the memory, as a packed rows x cols matrix. Throws InvalidArgument
  /// where this matrix is not packed (ld = rows) or holds another number of elements.
  Matrix<T> reshaped(index_t rows, index_t cols, const std::string& name = "A") const {
    require(view_.ld() == view_.rows() || view_.cols() <= 1, name + ".ld", view_.ld(),
            "must equal the rows " + std::to_string(view_.rows()) + " to reshape");
    require(rows * cols == view_.size(), name + ".size", rows * cols, "must equal " + std::to_string(view_.size()));
    return Matrix<T>(storage_, MatrixView<T>(view_.data(), rows, cols, rows > 1 ? rows : 1, view_.space(), name));
  }
  const MatrixView<T>& view() const { return view_; }
  operator MatrixView<T>() const { return view_; }              // NOLINT: a matrix is usable as its view
  operator MatrixView<const T>() const { return view_; }        // NOLINT
  T* data() const { return view_.data(); }
  index_t rows() const { return view_.rows(); }
  index_t cols() const { return view_.cols(); }
  MemorySpace space() const { return view_.space(); }

 private:
  Matrix(DeviceContext& context, index_t rows, index_t cols, const std::string& name, index_t ld) {
    require(rows >= 0, name + ".rows", rows, "must be >= 0");
    require(cols >= 0, name + ".cols", cols, "must be >= 0");
    storage_ = context.allocate(static_cast<std::size_t>(ld * cols) * sizeof(T) + sizeof(T));
    view_ = MatrixView<T>(static_cast<T*>(storage_.get()), rows, cols, ld, context.memory_space(), name);
  }

  std::shared_ptr<void> storage_;
  MatrixView<T> view_;
};

/// Makes the matrices an algorithm returns (rows x cols, of T, in the backend's memory): by default
/// new matrices of the backend; the Kokkos-native entry points pass one that allocates Kokkos
/// views, so that results are returned as views without a copy.
template <class T>
using MatrixAllocatorOf = std::function<Matrix<T>(index_t rows, index_t cols, const std::string& name)>;
/// The allocator of FP32 results, which every algorithm but the FP64 ones returns.
using MatrixAllocator = MatrixAllocatorOf<float>;

/// The default allocator: Matrix<T>(context, rows, cols, name).
template <class T = float>
MatrixAllocatorOf<T> backend_matrices(DeviceContext& context) {
  return [&context](index_t rows, index_t cols, const std::string& name) { return Matrix<T>(context, rows, cols, name); };
}

}  // namespace randnla
