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

/// random_element() with the per-matrix constants computed once on the host.
/// Throws InvalidArgument for a SparseSign density outside (0, 1].
struct RandomDraw {
  RandomSpec spec;
  std::uint32_t sparse_threshold = 0xffffffffu;
  float sparse_scale = 1.0f;
  RandomBlock block;

  /// Element (i, j) of the filled matrix: element (row0 + i, col0 + j) of the operator.
  RANDNLA_HD float at(std::int64_t i, std::int64_t j) const {
    return (*this)(static_cast<std::uint64_t>(block.row0 + i) +
                   static_cast<std::uint64_t>(block.col0 + j) * static_cast<std::uint64_t>(block.rows));
  }

  RandomDraw(const RandomSpec& s, const RandomBlock& b) : RandomDraw(s) { block = b; }
  explicit RandomDraw(const RandomSpec& s) : spec(s) {
    if (s.distribution != Distribution::SparseSign) return;
    require(s.density > 0.0 && s.density <= 1.0, "density", s.density, "must lie in (0, 1]");
    const double t = std::round(s.density * 4294967296.0);
    sparse_threshold = t >= 4294967295.0 ? 0xffffffffu : static_cast<std::uint32_t>(t);
    sparse_scale = static_cast<float>(1.0 / std::sqrt(s.density));
  }
  RANDNLA_HD float operator()(std::uint64_t e) const { return random_element(spec, e, sparse_threshold, sparse_scale); }
};

}  // namespace randnla
