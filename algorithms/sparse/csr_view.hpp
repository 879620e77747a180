// A CSR sparse matrix in a backend's memory, described, not owned.
#pragma once

#include <cstdint>

#include "randnla/matrix_view.hpp"

namespace randnla {

/// A (rows x cols) in compressed sparse row form, zero-based, in `space` (a backend's memory),
/// as cuSPARSE's CSR with CUSPARSE_INDEX_32I and KokkosSparse::CrsMatrix<float, int, Device, void,
/// int> store it: FP32 values, 32-bit offsets and column indices. Row i's entries are positions
/// row_ptr[i] .. row_ptr[i + 1] - 1 of col_idx and values. The arrays are the caller's and are
/// only read. The algorithms require (and check once, on the backend, before any product:
/// see sparse_rsvd.hpp) row_ptr[0] = 0, row_ptr non-decreasing, row_ptr[rows] = nnz, each row's
/// column indices strictly increasing (sorted, no duplicates) and in 0 .. cols - 1, and finite values.
struct CsrView {
  index_t rows = 0;               ///< m, at most 2^31 - 1
  index_t cols = 0;               ///< n, at most 2^31 - 1
  index_t nnz = 0;                ///< stored entries, at most 2^31 - 1 (32-bit offsets)
  const std::int32_t* row_ptr = nullptr;  ///< rows + 1 offsets
  const std::int32_t* col_idx = nullptr;  ///< nnz column indices
  const float* values = nullptr;          ///< nnz values
  MemorySpace space = MemorySpace::Host;  ///< where all three arrays are
};

}  // namespace randnla
