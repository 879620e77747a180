#include "range_finder.hpp"

#include <limits>

#include "randnla/common/checks.hpp"

namespace randnla {

index_t sketch_columns(index_t k, index_t oversampling) {
  require(oversampling <= std::numeric_limits<index_t>::max() - k, "k + oversampling",
          std::to_string(k) + " + " + std::to_string(oversampling), "overflows a 64-bit index");
  return k + oversampling;
}

bool DenseOperator::check_sketch(MatrixView<const float> y) {
  if (checked_) return false;
  require_finite_sketch(b_, s_, y);
  return true;
}

RngState RangeFinder::sketch(const RngState& state, MatrixView<float> y, std::string* kernel) {
  const RandomOperator omega(RandomDistribution{a_.cols(), y.cols(), Distribution::Gaussian}, state);
  a_.sketch(omega, y, kernel);
  lap(products_phase_);
  if (a_.check_sketch(y)) lap("input check");
  return omega.next_state();
}

void RangeFinder::power_iterations(MatrixView<float> y, int q, Orthonormalizer chosen) {
  for (int i = 0; i < q; ++i) {
    orthonormalize_range(y, between(chosen));
    lap("orthonormalisation");
    Matrix<float> z = a_.apply_transpose(y);
    lap(products_phase_);
    orthonormalize_domain(z.view(), between(chosen));
    lap("orthonormalisation");
    a_.apply(z, y);
    lap(products_phase_);
  }
}

Matrix<float> RangeFinder::basis(index_t l, const RangeFinderOptions& o, const RngState& state, std::string* kernel) {
  Matrix<float> y(a_.backend(), a_.rows(), l, "Y");
  basis_into(y.view(), o, state, kernel);
  return y;
}

void RangeFinder::basis_into(MatrixView<float> y, const RangeFinderOptions& o, const RngState& state,
                             std::string* kernel) {
  sketch(state, y, kernel);
  power_iterations(y, o.power_iterations, o.orthonormalizer);
  orthonormalize_range(y, o.orthonormalizer);
  lap("orthonormalisation");
}

}  // namespace randnla
