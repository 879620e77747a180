// The gaps of the sparse sign operator's draws on the device, bit for bit the host's
// (SparseSignOperator::gap_of) at a fraction of its cost: lg2.approx (the hardware's, as __log2f)
// times c = ln 2 / log(1 - p) gives each gap's floor unless the product lies within a relative
// 2^-19 plus 2^-21 |c| of an integer; there the exact draw decides. The exact draw and the product
// differ by less than a relative 2^-20.5 plus 2^-22.1 |c|: measured over all 2^23 uniforms, the
// exact log's relative error is at most 2^-22.65 (philox.hpp's log_deterministic, on the host) and
// lg2.approx's 2^-22.15 absolute on [1/2, 1) and 2^-22.06 relative below (H100); log(1 - p), c, the
// division and the product round once each (2^-24). The margins are twice and more these bounds,
// and test_fast_gaps checks the errors and every uniform's floor at 240 densities.
#pragma once

#include <cmath>
#include <cstdint>

#include "randnla/philox.hpp"
#include "randnla/sparse_projection/sparse_sign_operator.hpp"

namespace randnla {
namespace cuda {

/// A gap past any segment's end: where the floors are capped.
constexpr int kBeyond = 1 << 20;

/// The exact draw's floor (SparseSignOperator::gap_of), capped at kBeyond: called for one draw in
/// 10^3 to 10^5, so kept out of line (inlined, its divisions would be issued, predicated off, for
/// every draw).
__device__ __noinline__ static int exact_gap_floor(std::uint32_t word, float log1m_density) {
  const float exact = SparseSignOperator::gap_of(word, log1m_density);
  return exact < static_cast<float>(kBeyond) ? static_cast<int>(exact) : kBeyond;
}

struct FastGaps {
  float log2_to_gap;    ///< ln 2 / log(1 - p)
  float gap_slack;      ///< 2^-21 |ln 2 / log(1 - p)|: lg2.approx's absolute error on [1/2, 1) is 2^-22.15
  float log1m_density;  ///< the operator's, for the exact draw

  static FastGaps of(const SparseSignOperator& s) {
    const double c = 0.6931471805599453 / std::log1p(-s.density);
    return {static_cast<float>(c), static_cast<float>(std::ldexp(-c, -21)), s.log1m_density};
  }

  /// The floor of one word's gap: the fast product's, or the exact draw's near an integer.
  __device__ __forceinline__ int floor_of(std::uint32_t word) const {
    const float fast = fast_gap(word);
    return near_integer(fast) ? exact_gap_floor(word, log1m_density) : static_cast<int>(floorf(fast));
  }

  /// The floors of a Philox block's four gaps (one branch for the rare exact draws of the four).
  /// A product past 2^18 is within its margin of an integer (the margin passes 1/2), so the long
  /// gaps are all exact draws, capped at kBeyond: the positions built from them cannot overflow.
  __device__ __forceinline__ void floors(const PhiloxCounter& words, int (&gaps)[4]) const {
    float fast[4];
    bool unsure = false;
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      fast[w] = fast_gap(words.v[w]);
      gaps[w] = static_cast<int>(floorf(fast[w]));
      unsure = unsure || near_integer(fast[w]);
    }
    if (unsure)
#pragma unroll
      for (int w = 0; w < 4; ++w)
        if (near_integer(fast[w])) gaps[w] = exact_gap_floor(words.v[w], log1m_density);
  }

  /// Within the margin of an integer (the exact draw decides): |rest - 1/2| > 1/2 - margin.
  __device__ __forceinline__ bool near_integer(float fast) const {
    return fabsf(fast - floorf(fast) - 0.5f) > 0.5f - fmaf(fast, 0x1p-19f, gap_slack);
  }
  /// lg2.approx (what __log2f runs, without its subnormal path: u >= 2^-24) of the word's
  /// uniform, times ln 2 / log(1 - p).
  __device__ __forceinline__ float fast_gap(std::uint32_t word) const {
    float lg;
    asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(lg) : "f"(detail::uniform_open01(word)));
    return lg * log2_to_gap;
  }
};

}  // namespace cuda
}  // namespace randnla
