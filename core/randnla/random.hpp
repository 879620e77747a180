// A validated, ready-to-evaluate random matrix description, shared by host and device code.
#pragma once

#include <cmath>
#include <cstdint>

#include "randnla/error.hpp"
#include "randnla/philox.hpp"

namespace randnla {

/// Which block of a random operator to draw: the block whose top-left element is (row0, col0) of
/// the operator with `rows` rows (element (i, j) of the operator is draw(i + j * rows)), so that a
/// block drawn alone equals the same block of the whole operator (RandBLAS's submatrix semantics).
/// rows = 0: the matrix filled is the whole operator.
struct RandomBlock {
  std::int64_t row0 = 0, col0 = 0, rows = 0;
};

/// A random operator's draws with the per-operator constants computed once on the host.
/// Throws InvalidArgument for a Ternary density outside (0, 1].
struct RandomDraw {
  RandomSpec spec;
  float log1m_density = 0.0f;  ///< Ternary: log(1 - density), rounded once to FP32 on the host
  float ternary_scale = 1.0f;   ///< Ternary: 1/sqrt(density)
  RandomBlock block;

  RandomDraw(const RandomSpec& s, const RandomBlock& b) : RandomDraw(s) { block = b; }
  explicit RandomDraw(const RandomSpec& s) : spec(s) {
    if (!ternary()) return;
    require(s.density > 0.0 && s.density <= 1.0, "density", s.density, "must lie in (0, 1]");
    log1m_density = static_cast<float>(std::log1p(-s.density));  // -Inf for density 1: every gap 0
    ternary_scale = static_cast<float>(1.0 / std::sqrt(s.density));
  }

  RANDNLA_HD bool ternary() const { return spec.distribution == Distribution::Ternary; }

  /// The operator's index of element (i, j) of the filled matrix (random_element's e).
  RANDNLA_HD std::uint64_t index_of(std::int64_t i, std::int64_t j) const {
    return static_cast<std::uint64_t>(block.row0 + i) +
           static_cast<std::uint64_t>(block.col0 + j) * static_cast<std::uint64_t>(block.rows);
  }

  /// Dense distributions: element (i, j) of the filled matrix, i.e. element (row0 + i, col0 + j)
  /// of the operator.
  RANDNLA_HD float at(std::int64_t i, std::int64_t j) const { return random_element(spec, index_of(i, j)); }

  /// Dense distributions, for fills: visit(i, value) for the rows i in [0, rows) of column j of the
  /// filled matrix that Philox block q of that column (q = 0: the block holding row 0) gives, up to
  /// four, from one Philox call. Blocks 0 .. blocks_per_column(rows) - 1 cover the column.
  template <class Visit>
  RANDNLA_HD void visit_block(std::int64_t q, std::int64_t j, std::int64_t rows, const Visit& visit) const {
    if (block_row(q, j) >= rows) return;
    float v[4];
    const std::int64_t i0 = block_values(q, j, philox_schedule(detail::philox_key(spec.seed)), v);
    for (int w = 0; w < 4; ++w)
      if (i0 + w >= 0 && i0 + w < rows) visit(i0 + w, v[w]);
  }
  /// Dense distributions: the row of the filled matrix that the first of Philox block q of column
  /// j gives (the block's four rows start there; those outside [0, rows) are not the column's).
  RANDNLA_HD std::int64_t block_row(std::int64_t q, std::int64_t j) const {
    const std::int64_t first = static_cast<std::int64_t>(index_of(0, j));
    return 4 * ((first >> 2) + q) - first;
  }
  /// The four values of that block and its first row (block_row), `keys` being
  /// philox_schedule(detail::philox_key(spec.seed)).
  RANDNLA_HD std::int64_t block_values(std::int64_t q, std::int64_t j, const PhiloxSchedule& keys, float (&v)[4]) const {
    const std::int64_t first = static_cast<std::int64_t>(index_of(0, j));
    random_block(spec, keys, static_cast<std::uint64_t>((first >> 2) + q), v);
    return 4 * ((first >> 2) + q) - first;
  }
  RANDNLA_HD static std::int64_t blocks_per_column(std::int64_t rows) { return (rows + 6) / 4; }

  /// Ternary: calls visit(row, value) for each non-zero of operator column `col` above
  /// `row_end`, rows ascending. Consecutive non-zeros are 1 + G rows apart, G geometric with
  /// P(G = g) = (1 - p)^g p, drawn exactly as G = floor(log U / log(1 - p)), U uniform in (0, 1)
  /// (the 24-bit uniform and log of philox.hpp, identical on host and device); the sign from a
  /// second word. One Philox call per two non-zeros: O(nnz) calls, whatever the column's length
  /// (Li, Hastie & Church, KDD 2006). Column col uses the Philox
  /// blocks col * 2^32 + t, so a column holds up to 2^33 non-zeros.
  template <class Visit>
  RANDNLA_HD void walk_column_nonzeros(std::int64_t col, std::int64_t row_end, const Visit& visit) const {
    std::int64_t row = -1;
    for (std::uint64_t t = 0;; ++t) {
      const PhiloxCounter r =
          detail::philox_block(spec.seed, spec.stream, (static_cast<std::uint64_t>(col) << 32) + (t >> 1));
      const unsigned w = static_cast<unsigned>(t & 1u) * 2u;
      const float gap = exact::div(detail::log_deterministic(detail::uniform_open01(r.v[w])), log1m_density);
      if (!(gap < static_cast<float>(row_end - row - 1))) return;  // also ends a NaN gap
      row += 1 + static_cast<std::int64_t>(gap);
      visit(row, (r.v[w + 1] >> 31) ? -ternary_scale : ternary_scale);
    }
  }
};

}  // namespace randnla
