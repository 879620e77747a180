// The very sparse sign operator S (k x D) of Achlioptas (2003) and Li, Hastie & Church ("Very
// sparse random projections", 2006), generated on the fly and never stored: its non-zeros at any
// place come straight from the counter-based generator, the same on host and device.
#pragma once

#include <cmath>
#include <cstdint>

#include "randnla/error.hpp"
#include "randnla/philox.hpp"

namespace randnla {

/// S(j, i) = +-value with probability p/2 each, 0 otherwise, independently (k rows, D columns).
/// Row j is cut into segments of 2^b columns, b the least in [12, 20] with 2^b p >= 8 (about 8
/// non-zeros a segment or more: 2^12 from p = 1/512 up, 2^15 at p = 10^-3.5, 2^17 at 10^-4);
/// segment g's non-zeros are 1 + G apart from the segment's start on, G geometric with
/// P(G = g) = (1 - p)^g p, drawn as floor(log U / log(1 - p)) with U uniform in (0, 1) on a 2^-24
/// grid from a Philox word's top 23 bits (philox.hpp's uniform and log, identical on host and
/// device; the grid cuts G's tail at P(G > 16.6 / p) = e^-16.6 ~ 6e-8), the sign from the same
/// word's lowest bit. Restarting at each segment leaves the distribution exact (a geometric gap
/// has no memory) and lets any segment of any row be drawn alone, in any order: the four words of
/// Philox block (j << 40) + (g << b) + t / 4 give the non-zeros t .. t + 3 of (j, g) (t a multiple
/// of 4; a segment draws at most 2^b + 1 of them). Hence k < 2^24 and D <= 2^40.
struct SparseSignOperator {
  static constexpr int kMinSegmentBits = 12, kMaxSegmentBits = 20;
  static constexpr std::int64_t kMaxRows = std::int64_t{1} << 24, kMaxCols = std::int64_t{1} << 40;

  std::int64_t rows = 0, cols = 0;  ///< k and D
  std::uint64_t seed = 0;
  double density = 1.0;             ///< p, in (0, 1]
  float value = 1.0f;               ///< the non-zeros' magnitude
  float log1m_density = 0.0f;       ///< log(1 - p), rounded once to FP32 on the host
  int segment_bits = kMinSegmentBits;

  /// Throws InvalidArgument naming k, D or density when out of range.
  SparseSignOperator(std::int64_t k, std::int64_t d, double p, float magnitude, std::uint64_t seed_)
      : rows(k), cols(d), seed(seed_), density(p), value(magnitude) {
    require(k > 0 && k < kMaxRows, "k", k, "must lie in [1, 2^24)");
    require(d > 0 && d <= kMaxCols, "D", d, "must lie in [1, 2^40]");
    require(p > 0.0 && p <= 1.0, "density", p, "must lie in (0, 1]");
    log1m_density = static_cast<float>(std::log1p(-p));  // -Inf for p = 1: every gap 0
    while (segment_bits < kMaxSegmentBits && std::ldexp(p, segment_bits) < 8.0) ++segment_bits;
  }
  SparseSignOperator() = default;

  RANDNLA_HD std::int64_t segment() const { return std::int64_t{1} << segment_bits; }
  RANDNLA_HD std::int64_t segments() const { return (cols + segment() - 1) >> segment_bits; }

  /// The t-th draw of segment g of row j: the gap (zeros before the next non-zero, geometric with
  /// parameter p, in FP32: may be +Inf or NaN) and that non-zero's sign. walk() and the kernels
  /// take a Philox block at a time (block()) and draw each of its words through draw_from().
  struct Draw {
    float gap;
    bool negative;
  };
  RANDNLA_HD Draw draw(std::int64_t j, std::int64_t g, std::uint64_t t) const {
    return draw_from(block(j, g, t >> 2).v[t & 3u]);
  }
  /// The draw a Philox word gives: the gap from its top 23 bits, the sign from bit 0.
  RANDNLA_HD Draw draw_from(std::uint32_t word) const { return {gap_of(word, log1m_density), (word & 1u) != 0u}; }
  RANDNLA_HD static float gap_of(std::uint32_t word, float log1m_density) {
    return exact::div(detail::log_deterministic(detail::uniform_open01(word)), log1m_density);
  }
  /// Philox block b of segment g of row j: the words of draws 4 b .. 4 b + 3.
  RANDNLA_HD PhiloxCounter block(std::int64_t j, std::int64_t g, std::uint64_t b) const {
    return block_at(block_index(j, g, b), philox_schedule(detail::philox_key(seed)));
  }
  RANDNLA_HD std::uint64_t block_index(std::int64_t j, std::int64_t g, std::uint64_t b) const {
    return (static_cast<std::uint64_t>(j) << 40) + (static_cast<std::uint64_t>(g) << segment_bits) + b;
  }
  /// The block of a block_index, the seed's round keys worked out once by the caller.
  RANDNLA_HD static PhiloxCounter block_at(std::uint64_t index, const PhiloxSchedule& keys) {
    return philox4x32_10(detail::philox_counter(0, index), keys);
  }

  /// Calls visit(i, negative) for each non-zero S(j, i) of segment g of row j, i ascending;
  /// `negative` is its sign (the magnitude is `value`).
  template <class Visit>
  RANDNLA_HD void walk(std::int64_t j, std::int64_t g, const Visit& visit) const {
    const std::int64_t begin = g << segment_bits;
    const std::int64_t end = begin + segment() < cols ? begin + segment() : cols;
    std::int64_t i = begin - 1;
    PhiloxCounter words{};
    for (std::uint64_t t = 0;; ++t) {
      if ((t & 3u) == 0) words = block(j, g, t >> 2);
      const Draw d = draw_from(words.v[t & 3u]);
      if (!(d.gap < static_cast<float>(end - i - 1))) return;  // also ends a NaN gap
      i += 1 + static_cast<std::int64_t>(d.gap);
      visit(i, d.negative);
    }
  }
};

}  // namespace randnla
