// Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC'11) and the draws built on it. Every element of a random
// matrix is a pure function of (seed, stream, element index), so host and device, and any
// thread or block count, give the same bits.
#pragma once

#include <cstdint>

#include "randnla/hostdevice.hpp"

namespace randnla {

struct PhiloxCounter {
  std::uint32_t v[4];
};
struct PhiloxKey {
  std::uint32_t v[2];
};

namespace detail {
RANDNLA_HD void mulhilo32(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}
}  // namespace detail

/// The round keys of Philox4x32-10 for one key: worked out once where many blocks share a key.
struct PhiloxSchedule {
  std::uint32_t k0[10], k1[10];
};

RANDNLA_HD PhiloxSchedule philox_schedule(PhiloxKey k) {
  constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  PhiloxSchedule s{};
  for (int round = 0; round < 10; ++round) {
    s.k0[round] = k.v[0] + static_cast<std::uint32_t>(round) * W0;
    s.k1[round] = k.v[1] + static_cast<std::uint32_t>(round) * W1;
  }
  return s;
}

/// Philox4x32 with 10 rounds, as in Random123 (and cuRAND's PHILOX4_32_10).
RANDNLA_HD PhiloxCounter philox4x32_10(PhiloxCounter c, const PhiloxSchedule& keys) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    detail::mulhilo32(M0, c.v[0], hi0, lo0);
    detail::mulhilo32(M1, c.v[2], hi1, lo1);
    c = PhiloxCounter{{hi1 ^ c.v[1] ^ keys.k0[round], lo1, hi0 ^ c.v[3] ^ keys.k1[round], lo0}};
  }
  return c;
}
RANDNLA_HD PhiloxCounter philox4x32_10(PhiloxCounter c, PhiloxKey k) { return philox4x32_10(c, philox_schedule(k)); }

/// Which random matrix to draw.
enum class Distribution {
  Gaussian,    ///< N(0, 1), Box–Muller
  Rademacher,  ///< ±1 with probability 1/2 each
  Ternary     ///< ±1/sqrt(density) with probability density/2 each, else 0 (Achlioptas 2003; Li, Hastie &
              ///< Church 2006), drawn column by column in O(nnz) Philox calls (RandomDraw::walk_column_nonzeros)
};

/// Identifies one random matrix: its distribution and the RNG state it is drawn from (key = seed,
/// counter = stream; random_operator.hpp names them so). Dense: element (i, j) of an m x n matrix
/// is random_element(e = i + j*m).
struct RandomSpec {
  Distribution distribution = Distribution::Gaussian;
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;  ///< independent sequences under one seed (e.g. one per power iteration)
  double density = 1.0 / 3.0;  ///< Ternary only, in (0, 1]
};

namespace detail {

RANDNLA_HD PhiloxCounter philox_counter(std::uint64_t stream, std::uint64_t block) {
  return PhiloxCounter{{static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                        static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32)}};
}
RANDNLA_HD PhiloxKey philox_key(std::uint64_t seed) {
  return PhiloxKey{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
}
RANDNLA_HD PhiloxCounter philox_block(std::uint64_t seed, std::uint64_t stream, std::uint64_t block) {
  return philox4x32_10(philox_counter(stream, block), philox_key(seed));
}

/// Uniform in (0, 1), exactly (2*(x>>9)+1) * 2^-24: never 0, so log() is finite.
RANDNLA_HD float uniform_open01(std::uint32_t x) {
  return exact::mul(static_cast<float>(2u * (x >> 9) + 1u), 0x1p-24f);
}

/// Natural log of u in (0, 1], from exactly rounded operations only (host and device agree).
/// u = 2^e * m, m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172.
RANDNLA_HD float log_deterministic(float u) {
  std::uint32_t b = exact::bits_of(u);
  int e = static_cast<int>(b >> 23) - 127;
  float m = exact::float_of((b & 0x7fffffu) | 0x3f800000u);
  if (m > 1.41421356f) {
    m = exact::mul(m, 0.5f);
    e += 1;
  }
  const float s = exact::div(exact::sub(m, 1.0f), exact::add(m, 1.0f));
  const float s2 = exact::mul(s, s);
  float p = 2.0f / 13.0f;
  p = exact::fma(p, s2, 2.0f / 11.0f);
  p = exact::fma(p, s2, 2.0f / 9.0f);
  p = exact::fma(p, s2, 2.0f / 7.0f);
  p = exact::fma(p, s2, 2.0f / 5.0f);
  p = exact::fma(p, s2, 2.0f / 3.0f);
  const float log_m = exact::fma(exact::mul(p, s2), s, exact::mul(2.0f, s));
  const float ef = static_cast<float>(e);
  return exact::add(exact::fma(ef, 0.693145751953125f, log_m), exact::mul(ef, 1.428606765330187e-06f));
}

/// cos(2*pi*v), sin(2*pi*v) for v in [0, 1), from exactly rounded operations only.
RANDNLA_HD void sincos_2pi_deterministic(float v, float& c, float& s) {
  const float t = exact::mul(v, 4.0f);
  int q = static_cast<int>(t);
  float f = exact::sub(t, static_cast<float>(q));  // exact
  if (f > 0.5f) {
    f = exact::sub(f, 1.0f);
    ++q;
  }
  const float x = exact::mul(f, 1.57079632679f);  // |x| <= pi/4
  const float x2 = exact::mul(x, x);
  float ps = 2.7557319e-06f;
  ps = exact::fma(ps, x2, -1.98412698e-04f);
  ps = exact::fma(ps, x2, 8.33333333e-03f);
  ps = exact::fma(ps, x2, -1.66666667e-01f);
  const float sin_x = exact::fma(exact::mul(ps, x2), x, x);
  float pc = 2.48015873e-05f;
  pc = exact::fma(pc, x2, -1.38888889e-03f);
  pc = exact::fma(pc, x2, 4.16666667e-02f);
  pc = exact::fma(pc, x2, -0.5f);
  const float cos_x = exact::fma(pc, x2, 1.0f);
  switch (q & 3) {
    case 0: c = cos_x; s = sin_x; break;
    case 1: c = -sin_x; s = cos_x; break;
    case 2: c = -cos_x; s = -sin_x; break;
    default: c = sin_x; s = -cos_x; break;
  }
}

/// The Box-Muller pair of words w and w + 1 of a Philox block: (radius cos, radius sin).
RANDNLA_HD void gaussian_pair(const PhiloxCounter& r, unsigned w, float& c, float& s) {
  const float u = uniform_open01(r.v[w]);
  const float v = exact::mul(static_cast<float>(r.v[w + 1] >> 8), 0x1p-24f);
  const float radius = exact::sqrt(exact::mul(-2.0f, log_deterministic(u)));
  float cos_v, sin_v;
  sincos_2pi_deterministic(v, cos_v, sin_v);
  c = exact::mul(radius, cos_v);
  s = exact::mul(radius, sin_v);
}

}  // namespace detail

/// Element e of the dense random matrix described by `spec` (Gaussian or Rademacher), as float.
RANDNLA_HD float random_element(const RandomSpec& spec, std::uint64_t e) {
  const PhiloxCounter r = detail::philox_block(spec.seed, spec.stream, e >> 2);
  if (spec.distribution == Distribution::Rademacher) return (r.v[e & 3u] >> 31) ? -1.0f : 1.0f;
  float c, s;
  detail::gaussian_pair(r, static_cast<unsigned>(e & 2u), c, s);
  return (e & 1u) ? s : c;
}

/// Elements 4b .. 4b + 3 of the same matrix, random_element's values from one Philox call (and
/// two Box-Muller pairs) instead of four: what a fill of many elements should call.
/// `keys`: philox_schedule(detail::philox_key(spec.seed)), worked out once for many blocks.
RANDNLA_HD void random_block(const RandomSpec& spec, const PhiloxSchedule& keys, std::uint64_t b, float (&v)[4]) {
  const PhiloxCounter r = philox4x32_10(detail::philox_counter(spec.stream, b), keys);
  if (spec.distribution == Distribution::Rademacher) {
    for (int w = 0; w < 4; ++w) v[w] = (r.v[w] >> 31) ? -1.0f : 1.0f;
    return;
  }
  detail::gaussian_pair(r, 0, v[0], v[1]);
  detail::gaussian_pair(r, 2, v[2], v[3]);
}
RANDNLA_HD void random_block(const RandomSpec& spec, std::uint64_t b, float (&v)[4]) {
  random_block(spec, philox_schedule(detail::philox_key(spec.seed)), b, v);
}

}  // namespace randnla
