// The a-posteriori error estimate of a low-rank approximation.
#pragma once

#include <cstdint>

#include "randnla/backend.hpp"

namespace randnla {

/// ||A - U diag(S) V^T||_F / ||A||_F estimated with `probes` Gaussian probes g (E||E g||^2 =
/// ||E||_F^2; Halko, Martinsson & Tropp 2011, Sec. 4.3), in FP32 products. A is m x n, U m x k,
/// S k x 1, V n x k, all in the backend's memory; norm_a = ||A||_F. Returns -1 for probes <= 0,
/// 0 for a zero A.
double residual_estimate(Backend& b, MatrixView<const float> a, MatrixView<const float> u, MatrixView<const float> s,
                         MatrixView<const float> v, int probes, std::uint64_t seed, double norm_a);

}  // namespace randnla
