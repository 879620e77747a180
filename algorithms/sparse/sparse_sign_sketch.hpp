// The sparse sign test matrix Omega (n x l) of a sparse operator's sketch Y = A Omega, never
// stored: each row of Omega, drawn on its own from the counter-based generator, has exactly zeta
// non-zeros +-1/sqrt(zeta), so A Omega costs zeta products per non-zero of A where a dense Omega
// costs l, and reads no Omega from memory.
#pragma once

#include <cmath>
#include <cstdint>

#include "randnla/error.hpp"
#include "randnla/philox.hpp"
#include "randnla/random_operator.hpp"

namespace randnla {

/// Omega^T is the block construction of a sparse Johnson-Lindenstrauss transform (Kane & Nelson,
/// "Sparser Johnson-Lindenstrauss transforms", 2014, Sec. 2; OSNAP, Nelson & Nguyen 2013): Omega's l
/// columns are cut into zeta = min(8, l) contiguous blocks, block t = columns
/// floor(t l / zeta) .. floor((t + 1) l / zeta) - 1, and row j has one non-zero in each block, at a
/// column uniform in the block (to within size / 2^31) with a uniform sign: word t of Philox blocks
/// 2 j and 2 j + 1 (stream = the RngState's counter, key = its key) gives the column from its top
/// 31 bits and the sign from bit 0. A sparse sign embedding with zeta = O(log k) non-zeros per
/// column is a subspace embedding for l = O(k log k) (Cohen 2016); the range finder's power
/// iterations then take its basis to the Gaussian sketch's accuracy (Martinsson & Tropp,
/// "Randomized numerical linear algebra", 2020, Sec. 9.2 and 11.5). Any row, on any backend and for
/// any thread count, gives the same entries.
struct SparseSignSketch {
  static constexpr int kMaxNonzeros = 8;

  std::int64_t rows = 0;  ///< n
  std::int32_t cols = 0;  ///< l
  int nonzeros = 0;       ///< zeta = min(8, l)
  float value = 0.0f;     ///< 1/sqrt(zeta), rounded once to FP32 on the host
  std::uint64_t stream = 0;
  PhiloxSchedule keys{};

  /// Throws InvalidArgument naming n or l when out of range (l in 1 .. 2^31 - 1).
  SparseSignSketch(std::int64_t n, std::int64_t l, const RngState& state) : rows(n), stream(state.counter) {
    require(n >= 0, "n", n, "must be >= 0");
    require(l >= 1 && l <= 0x7fffffff, "l", l, "must lie in 1 .. 2^31 - 1");
    cols = static_cast<std::int32_t>(l);
    nonzeros = l < kMaxNonzeros ? static_cast<int>(l) : kMaxNonzeros;
    value = static_cast<float>(1.0 / std::sqrt(static_cast<double>(nonzeros)));
    keys = philox_schedule(detail::philox_key(state.key));
  }
  SparseSignSketch() = default;

  /// The first column of block t (t = zeta: l, the end of the last).
  RANDNLA_HD std::int32_t block_begin(int t) const {
    return static_cast<std::int32_t>(static_cast<std::int64_t>(t) * cols / nonzeros);
  }
  struct Entry {
    std::int32_t column;
    bool negative;
  };
  /// Row j's non-zero in block t (0 <= t < zeta): its column and sign (its magnitude is `value`).
  RANDNLA_HD Entry entry(std::int64_t j, int t) const {
    const PhiloxCounter words =
        philox4x32_10(detail::philox_counter(stream, 2 * static_cast<std::uint64_t>(j) + (t >> 2)), keys);
    const std::uint32_t word = words.v[t & 3];
    const std::int32_t begin = block_begin(t), size = block_begin(t + 1) - begin;
    return {begin + static_cast<std::int32_t>((word >> 1) % static_cast<std::uint32_t>(size)), (word & 1u) != 0u};
  }
};

}  // namespace randnla
