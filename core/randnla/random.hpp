// A validated, ready-to-evaluate random matrix description, shared by host and device code.
#pragma once

#include <cmath>
#include <cstdint>

#include "randnla/error.hpp"
#include "randnla/philox.hpp"

namespace randnla {

/// random_element() with the per-matrix constants computed once on the host.
/// Throws InvalidArgument for a SparseSign density outside (0, 1].
struct RandomDraw {
  RandomSpec spec;
  std::uint32_t sparse_threshold = 0xffffffffu;
  float sparse_scale = 1.0f;

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
