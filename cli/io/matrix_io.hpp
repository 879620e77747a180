// File formats of the randnla tool: NumPy .npy, Matrix Market .mtx, IDX (MNIST-style, optionally
// gzip-compressed) and .npy output. Parsers work on bytes in memory (so they can be fuzzed) and
// throw randnla::InvalidArgument naming the file and the problem; nothing here knows Kokkos.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace randnla {
namespace io {

/// A dense matrix on the host, column-major (element (i, j) at data[i + j * rows]).
/// std::allocator, except that resize() leaves new elements uninitialised: a matrix the reader is
/// about to overwrite (188 MB for Fashion-MNIST) is not zeroed first.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}  // NOLINT: as std::allocator's
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using FloatBuffer = std::vector<float, UninitializedAllocator<float>>;

struct DenseMatrix {
  std::int64_t rows = 0, cols = 0;
  FloatBuffer data;
  std::string source_type;  ///< e.g. "float64 (C order)", converted to float32
};

/// Largest matrix the readers accept (elements), so a corrupt header cannot ask for terabytes.
/// The fuzzers build with a smaller cap so that each input stays cheap.
#ifndef RANDNLA_IO_MAX_ELEMENTS
#define RANDNLA_IO_MAX_ELEMENTS (std::int64_t(1) << 32)
#endif
constexpr std::int64_t kMaxElements = RANDNLA_IO_MAX_ELEMENTS;

/// The whole file, decompressed when it is gzip data. Throws InvalidArgument(file, ...) when it
/// cannot be read.
std::string read_file(const std::string& path);

DenseMatrix parse_npy(const std::string& bytes, const std::string& name);
DenseMatrix parse_mtx(const std::string& bytes, const std::string& name);
/// IDX: a 1-D file is n x 1, 2-D n x m, 3-D or more n x (product of the rest): one row per item.
DenseMatrix parse_idx(const std::string& bytes, const std::string& name);
/// By extension (.npy, .mtx, .idx/-ubyte, optionally .gz), after read_file.
DenseMatrix read_matrix(const std::string& path);

/// .npy bytes of a float32 column-major matrix (fortran_order: True).
std::string npy_bytes(const float* data, std::int64_t rows, std::int64_t cols);
/// .npy bytes of a float32 vector of `size` elements (shape (size,): scikit-learn's 1-D attributes).
std::string npy_vector_bytes(const float* data, std::int64_t size);

/// Writes bytes to path through a temporary file in the same directory and a rename, so no
/// partial file is ever left. Refuses to replace an existing file unless `force`.
void write_file_atomically(const std::string& path, const std::string& bytes, bool force);

}  // namespace io
}  // namespace randnla
