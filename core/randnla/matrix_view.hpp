// Column-major (LayoutLeft) matrix views over host or device memory.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "randnla/enum_names.hpp"
#include "randnla/error.hpp"
#include "randnla/hostdevice.hpp"

namespace randnla {

using index_t = std::int64_t;

/// Where the bytes of a view live. Device memory is CUDA global memory.
enum class MemorySpace { Host, Device };

inline const EnumNames<MemorySpace>& names_of(MemorySpace) {
  static const EnumNames<MemorySpace> names{{MemorySpace::Host, "host"}, {MemorySpace::Device, "device"}};
  return names;
}

/// FP16 storage (IEEE binary16 bits). Arithmetic happens in the backends, never on this type.
struct fp16 {
  std::uint16_t bits;
};

/// Non-owning view of an m x n column-major matrix: element (i, j) is data[i + j * ld].
/// Construction checks the extents and the leading dimension and throws InvalidArgument naming
/// `name` (e.g. "A", so a bad lda reads "A.ld") — it never asserts.
template <class T>
class MatrixView {
 public:
  using value_type = T;

  MatrixView() = default;
  MatrixView(T* data, index_t rows, index_t cols, index_t ld, MemorySpace space, const std::string& name = "A")
      : data_(data), rows_(rows), cols_(cols), ld_(ld), space_(space) {
    require(rows >= 0, name + ".rows", rows, "must be >= 0");
    require(cols >= 0, name + ".cols", cols, "must be >= 0");
    require(ld >= (rows > 1 ? rows : 1), name + ".ld", ld,
            "must be >= max(1, rows) = " + std::to_string(rows > 1 ? rows : 1));
    require(data != nullptr || rows * cols == 0, name + ".data", "null", "must not be null when the view is not empty");
  }
  /// A view of const elements from a view of mutable ones.
  template <class U, class = std::enable_if_t<std::is_same<const U, T>::value && !std::is_same<U, T>::value>>
  MatrixView(const MatrixView<U>& other)  // NOLINT(google-explicit-constructor): const view from mutable
      : data_(other.data()), rows_(other.rows()), cols_(other.cols()), ld_(other.ld()), space_(other.space()) {}

  RANDNLA_HD T* data() const { return data_; }
  RANDNLA_HD index_t rows() const { return rows_; }
  RANDNLA_HD index_t cols() const { return cols_; }
  RANDNLA_HD index_t ld() const { return ld_; }
  RANDNLA_HD index_t size() const { return rows_ * cols_; }
  RANDNLA_HD bool empty() const { return size() == 0; }
  RANDNLA_HD MemorySpace space() const { return space_; }

  /// Element access; valid for host views only (no check, for inner loops).
  RANDNLA_HD T& operator()(index_t i, index_t j) const { return data_[i + j * ld_]; }

  /// The rows x cols block whose top-left element is (i0, j0); throws if it does not fit.
  MatrixView block(index_t i0, index_t j0, index_t rows, index_t cols) const {
    require(i0 >= 0 && rows >= 0 && i0 + rows <= rows_, "block rows", std::to_string(i0) + "+" + std::to_string(rows),
            "must lie within 0.." + std::to_string(rows_));
    require(j0 >= 0 && cols >= 0 && j0 + cols <= cols_, "block cols", std::to_string(j0) + "+" + std::to_string(cols),
            "must lie within 0.." + std::to_string(cols_));
    MatrixView b = *this;
    b.data_ = data_ + i0 + j0 * ld_;
    b.rows_ = rows;
    b.cols_ = cols;
    return b;
  }

 private:
  T* data_ = nullptr;
  index_t rows_ = 0;
  index_t cols_ = 0;
  index_t ld_ = 1;
  MemorySpace space_ = MemorySpace::Host;
};

template <class T>
using ConstView = MatrixView<const T>;

/// A matrix A given by its transpose: `stored` holds A^T column-major, so A (stored.cols() x
/// stored.rows()) is row-major in that memory, as a Kokkos::LayoutRight view's is
/// (transposed_view_of). The entries that take one read A through it in place, without a copy.
template <class T>
struct Transposed {
  MatrixView<T> stored;  ///< A^T, column-major
};

/// Throws InvalidArgument unless `view` lives in `space`.
template <class T>
void require_space(const MatrixView<T>& view, MemorySpace space, const std::string& name) {
  require(view.space() == space, name + ".space", to_string(view.space()),
          std::string("must be ") + to_string(space) + " memory for this backend");
}

/// Throws InvalidArgument unless `view` is rows x cols.
template <class T>
void require_shape(const MatrixView<T>& view, index_t rows, index_t cols, const std::string& name) {
  require(view.rows() == rows && view.cols() == cols, name + ".shape",
          std::to_string(view.rows()) + "x" + std::to_string(view.cols()),
          "must be " + std::to_string(rows) + "x" + std::to_string(cols));
}

/// Throws InvalidArgument unless G is square.
template <class T>
void require_square(const MatrixView<T>& g, const std::string& name) {
  require(g.rows() == g.cols(), name + ".rows", g.rows(), "must equal " + name + ".cols = " + std::to_string(g.cols()));
}

}  // namespace randnla
