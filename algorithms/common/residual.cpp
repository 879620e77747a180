#include "residual.hpp"

#include <cmath>

namespace randnla {

double residual_estimate(Backend& b, MatrixView<const float> a, MatrixView<const float> u, MatrixView<const float> s,
                         MatrixView<const float> v, int probes, std::uint64_t seed, double norm_a) {
  if (probes <= 0) return -1.0;
  if (norm_a == 0.0) return 0.0;
  const index_t m = a.rows(), n = a.cols(), k = s.rows();
  Matrix<float> g(b, n, probes, "G"), y(b, m, probes, "Y"), t(b, k, probes, "T"), us(b, m, k, "US");
  b.fill_random(RandomSpec{Distribution::Gaussian, seed, 0xE5717A7Eull}, g.view());
  b.product(Op::N, Op::N, 1.0f, a, g, 0.0f, y, ProductPrecision::fp32());
  b.product(Op::T, Op::N, 1.0f, v, g, 0.0f, t, ProductPrecision::fp32());
  b.copy(u, us.view());
  b.scale_columns(s, us.view());
  b.product(Op::N, Op::N, -1.0f, us, t, 1.0f, y, ProductPrecision::fp32());
  return b.frobenius_norm(y) / std::sqrt(static_cast<double>(probes)) / norm_a;
}

}  // namespace randnla
