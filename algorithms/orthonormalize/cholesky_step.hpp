// The step of a CholeskyQR pass taken from a Gram matrix, for the callers that form the Gram matrix
// and apply the step themselves (the small SVD streams them through U's memory: svd_through_gram.cpp).
#pragma once

#include <type_traits>

#include "randnla/backend.hpp"

namespace randnla {

/// The unit roundoff of Q's precision T: how near I an equilibrated Gram matrix must be for Auto to
/// take Q = Y D without another pass.
template <class T>
constexpr double unit_roundoff() {
  return std::is_same<T, float>::value ? 0x1p-24 : 0x1p-53;
}

/// What a CholeskyQR pass on Y does, from G = Y^T Y.
enum class CholeskyStep {
  Scaled,     ///< D G D is within the tolerance of I: Q = Y D
  Factored,   ///< Q = Y R^{-1}
  Breakdown,  ///< a Cholesky pivot was not positive and finite
};

/// The step from G = Y^T Y (l x l, FP64, backend memory; overwritten): d (l x 1) := diag(G)^{-1/2}
/// (van der Sluis equilibration); Scaled where ||D G D - I||_F <= identity_tolerance (> 0), else
/// rinv (l x l) := R^{-1} = D R'^{-1} with R'^T R' = D G D (Factored), or Breakdown.
CholeskyStep cholesky_step(Backend& b, MatrixView<double> g, MatrixView<double> d, MatrixView<double> rinv,
                           double identity_tolerance);

}  // namespace randnla
