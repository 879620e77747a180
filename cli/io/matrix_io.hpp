// File formats of the randnla tool: NumPy .npy, scipy.sparse .npz, Matrix Market .mtx, IDX (MNIST-style, optionally
// gzip-compressed) and .npy output. Parsers work on bytes in memory (so they can be fuzzed) and
// throw randnla::InvalidArgument naming the file and the problem; nothing here knows Kokkos.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
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

template <class T>
struct BasicDenseMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<T, UninitializedAllocator<T>> data;
  std::string source_type;  ///< e.g. "float64 (C order)", converted to T
  /// An N-D (N > 2) array's extents, first index fastest as in data (rows = extents[0], cols the
  /// product of the others: the mode-1 unfolding); empty for a matrix.
  std::vector<std::int64_t> extents;
};
using DenseMatrix = BasicDenseMatrix<float>;
/// A matrix kept in FP64 (--precision double): a float64 .npy exactly, other files widened.
using DenseMatrix64 = BasicDenseMatrix<double>;

/// A sparse matrix on the host in compressed sparse row form, as randnla::CsrView describes it:
/// zero-based, row i's entries at row_ptr[i] .. row_ptr[i + 1] - 1, each row's column indices
/// strictly increasing (repeated positions of the file summed), FP32 values.
struct SparseMatrix {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int32_t> row_ptr, col_idx;
  std::vector<float> values;
  std::string source_type;  ///< e.g. "Matrix Market coordinate real symmetric"
};

/// Largest matrix the readers accept (elements), so a corrupt header cannot ask for terabytes.
/// The fuzzers build with a smaller cap so that each input stays cheap.
#ifndef RANDNLA_IO_MAX_ELEMENTS
#define RANDNLA_IO_MAX_ELEMENTS (std::int64_t(1) << 32)
#endif
constexpr std::int64_t kMaxElements = RANDNLA_IO_MAX_ELEMENTS;

/// The whole file, decompressed when it is gzip data (by its magic bytes, whatever its name), to
/// at most 1032 times its size (deflate's largest ratio) and the machine's memory. Throws
/// InvalidArgument(file, ...) when it cannot be read: missing, a directory, pipe or device, too
/// large, corrupt or truncated gzip data.
std::string read_file(const std::string& path);

/// The gzip data `compressed` (one or more members, RFC 1952, each checked against its CRC-32 and
/// length) decompressed in memory, never to more than `limit` bytes. Throws InvalidArgument naming
/// the file `name` for corrupt or truncated data, bytes after the last member that are not gzip
/// data, or data that decompresses to more than `limit` bytes (the trailer's declared size only
/// sizes the first allocation); std::bad_alloc when memory runs out.
std::string gunzip(const std::string& compressed, const std::string& name, std::size_t limit);

/// A .npy array of float32 or float64 (little-endian), C or Fortran order, of 1 to `max_dims`
/// dimensions: a 1-D array is n x 1; an N-D one (N > 2) is kept with its extents (see DenseMatrix).
DenseMatrix parse_npy(const std::string& bytes, const std::string& name, int max_dims = 2);
/// A Matrix Market file (array or coordinate; real, integer, double or pattern; general, symmetric
/// or skew-symmetric, mirrors stored) as a dense matrix; repeated coordinate positions are summed.
DenseMatrix parse_mtx(const std::string& bytes, const std::string& name);
/// Whether the bytes start with a Matrix Market coordinate (sparse) banner.
bool is_mtx_coordinate(const std::string& bytes);
/// A coordinate Matrix Market file as CSR (fields and symmetries as parse_mtx; mirrors stored,
/// repeated positions summed), checked as parse_mtx checks it; refused when it is an array file or
/// exceeds 32-bit CSR (2^31 - 1 rows, columns or entries with mirrors).
SparseMatrix parse_mtx_sparse(const std::string& bytes, const std::string& name);
/// A scipy.sparse.save_npz file (a zip archive of format, shape, indptr, indices and data .npy
/// members, stored or deflated, each CRC-checked; read by libzip) holding a csr or csc matrix, as
/// CSR: unsorted indices sorted and repeated positions summed, values (any int or float dtype)
/// rounded to FP32. Refused, naming the member: another format, offsets or indices out of range
/// or not integers, lengths that disagree, more than 32-bit CSR holds.
SparseMatrix parse_npz_sparse(const std::string& bytes, const std::string& name);
/// IDX: a 1-D file is n x 1, 2-D n x m, 3-D or more n x (product of the rest): one row per item.
DenseMatrix parse_idx(const std::string& bytes, const std::string& name);
/// By extension (.npy, .npz, .mtx, .idx/-ubyte, optionally .gz), after read_file; a .npy of up to
/// `max_dims` dimensions (2: a matrix only); a sparse .mtx or .npz densified.
DenseMatrix read_matrix(const std::string& path, int max_dims = 2);
/// As read_matrix, the elements in FP64: a float64 .npy (optionally .gz) read exactly, any other
/// dense file read as read_matrix reads it and widened (exactly: FP32 and the integer formats); a
/// sparse one (coordinate .mtx, .npz) refused.
DenseMatrix64 read_matrix_fp64(const std::string& path);
/// As read_matrix, except that a coordinate Matrix Market file (.mtx, optionally .gz) and a
/// scipy.sparse .npz stay sparse: CSR as parse_mtx_sparse and parse_npz_sparse read them.
std::variant<DenseMatrix, SparseMatrix> read_matrix_or_csr(const std::string& path);

/// .npy bytes of a float32 column-major matrix (fortran_order: True).
std::string npy_bytes(const float* data, std::int64_t rows, std::int64_t cols);
/// .npy bytes of a float64 column-major matrix.
std::string npy_bytes(const double* data, std::int64_t rows, std::int64_t cols);
/// .npy bytes of a float32 vector of `size` elements (shape (size,): scikit-learn's 1-D attributes).
std::string npy_vector_bytes(const float* data, std::int64_t size);
/// .npy bytes of a float64 vector of `size` elements.
std::string npy_vector_bytes(const double* data, std::int64_t size);

/// Writes bytes to path through a temporary file in the same directory and a rename, so no
/// partial file is ever left. Refuses to replace an existing file unless `force`.
void write_file_atomically(const std::string& path, const std::string& bytes, bool force);

}  // namespace io
}  // namespace randnla
