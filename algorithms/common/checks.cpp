#include "checks.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "randnla/common/range_finder.hpp"

namespace randnla {

void require_rank_arguments(index_t m, index_t n, index_t k, index_t p, int q) {
  require(k > 0, "k", k, "must be > 0");
  require(p >= 0, "oversampling", p, "must be >= 0");
  require(q >= 0, "power_iterations", q, "must be >= 0");
  const index_t l = sketch_columns(k, p);
  require(l <= std::min(m, n), "k + oversampling", l,
          "must be <= min(m, n) = " + std::to_string(std::min(m, n)));
}

void require_no_nonfinite_entries(Backend& b, MatrixView<const float> a) {
  const std::int64_t bad = b.exponent_histogram(a).nonfinite();
  require(bad == 0, "A", std::to_string(bad) + " non-finite entries", "must be finite");
}

void require_finite_sketch(Backend& b, MatrixView<const float> a, MatrixView<const float> y) {
  if (b.exponent_histogram(y).nonfinite() == 0) return;
  require_no_nonfinite_entries(b, a);
  throw InvalidArgument("A", "a matrix with ||A||_F = " + detail::to_text(b.frobenius_norm(a)),
                        "is too large: the sketch A * Omega overflows FP32 (scale A down; its SVD scales with it)");
}

double require_finite_norm(Backend& b, MatrixView<const float> a) {
  const double norm = b.frobenius_norm(a);
  if (!std::isfinite(norm)) require_no_nonfinite_entries(b, a);
  return norm;
}

}  // namespace randnla
