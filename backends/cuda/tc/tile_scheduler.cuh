// The tile scheduler of the persistent Tensor Core kernels: the order in which blocks take C's
// tiles (bands for L2 reuse), and how a product's last, partial round of tiles is split along K so
// that it occupies every SM. Hardware facts (the SM count) come in as arguments.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "randnla/error.hpp"
#include "randnla/matrix_view.hpp"

namespace randnla {
namespace cuda {
namespace tc {

/// The grid of BM x BN tiles over rows x cols in the order blocks take it: bands of kBandRows row
/// tiles, each band column by column, so that the tiles in flight at once (one per SM) share a few
/// row panels of one operand and a few column panels of the other in L2 instead of all of the
/// second's panels (an 8192 x 8192 FP16 operand, 128 MB, would otherwise cross device memory with
/// every wave of 132 tiles). With `lower`, only the tiles that hold an element on or below the
/// diagonal, column by column (a Gram matrix's lower triangle: a few tiles, no bands needed).
template <int BM, int BN>
struct TileOrder {
  static constexpr int kBandRows = 8;
  int row_tiles, col_tiles;
  bool lower;
  __host__ __device__ TileOrder(index_t rows, index_t cols, bool lower_only = false)
      : row_tiles(static_cast<int>((rows + BM - 1) / BM)),
        col_tiles(static_cast<int>((cols + BN - 1) / BN)),
        lower(lower_only) {}
  /// The first row tile of column tile j that reaches the diagonal (its last row at or below j's
  /// first column).
  __host__ __device__ int first_lower_row(int j) const {
    const index_t first = index_t{j} * BN / BM;
    return first < row_tiles ? static_cast<int>(first) : row_tiles;
  }
  __host__ __device__ index_t tiles() const {
    if (!lower) return index_t{row_tiles} * col_tiles;
    index_t count = 0;
    for (int j = 0; j < col_tiles; ++j) count += row_tiles - first_lower_row(j);
    return count;
  }
  /// (row tile, column tile) of the tile taken t-th.
  __device__ int2 operator()(int t) const {
    if (lower) {
      for (int j = 0;; ++j) {
        const int first = first_lower_row(j), count = row_tiles - first;
        if (t < count) return make_int2(first + t, j);
        t -= count;
      }
    }
    const int band = t / (kBandRows * col_tiles), first = band * kBandRows;
    const int rows = min(kBandRows, row_tiles - first), in_band = t - band * kBandRows * col_tiles;
    return make_int2(first + in_band % rows, in_band / rows);
  }
};

/// A product's last `tail` tiles of the TileOrder (fewer than the blocks) split along K into
/// `parts` (tail 0, parts 1: none). The launch of whole tiles (SPLIT false) computes the others:
/// block b takes tiles b, b + gridDim.x, ... The split launch (SPLIT true) runs tail x parts
/// blocks: block b computes part b % parts, a range of K slices, of tail tile b / parts, and the
/// part that arrives last adds the parts' sums in part order (a fixed order whatever the timing).
struct TileRange {
  int tail, parts;
};

/// The most parts a tail tile is split into (RANDNLA_TC_SPLIT_PARTS overrides; 1: no split):
/// about sqrt(2 nk), which balances a part's slices against the last part's reading of all
/// partial sums if a slice of Tensor Core work takes about twice as long as reading one part's
/// sums from L2 (an estimate, not measured; only the 8192^3 gain of the whole split was).
inline int max_parts(int nk) {
  if (const char* env = std::getenv("RANDNLA_TC_SPLIT_PARTS")) {
    const int forced = std::atoi(env);
    require(forced >= 1, "RANDNLA_TC_SPLIT_PARTS", std::string(env), "must be an integer >= 1");
    return forced;
  }
  return std::max(2, static_cast<int>(std::lround(std::sqrt(2.0 * nk))));
}

/// How a product's tiles are shared out among `sms` persistent blocks (TileRange): rounds of one
/// whole tile per SM, then the last `tail` tiles (fewer than the SMs) each split along K into
/// `parts`, so that the last round occupies tail x parts SMs instead of tail (4 of 132 at 8192^3:
/// 3% of the product's time). Split only where each tail tile gets at least two parts.
struct Schedule {
  int sms, tiles, tail, parts;
};
inline Schedule schedule(index_t tiles, int nk, int sms) {
  require(tiles <= std::numeric_limits<int>::max(), "tiles", tiles, "exceed the kernel's int tile index");
  const int t = static_cast<int>(tiles), tail = t % sms;
  const int parts = tail == 0 ? 1 : std::min({sms / tail, nk, max_parts(nk)});
  return parts < 2 ? Schedule{sms, t, 0, 1} : Schedule{sms, t, tail, parts};
}

}  // namespace tc
}  // namespace cuda
}  // namespace randnla
