// Input checks shared by the randomized algorithms. Each throws InvalidArgument naming the
// parameter and its value.
#pragma once

#include "randnla/backend.hpp"

namespace randnla {

/// k > 0, p >= 0, q >= 0 and k + p <= min(m, n) for a rank-k approximation of an m x n matrix
/// with oversampling p and q power iterations.
void require_rank_arguments(index_t m, index_t n, index_t k, index_t p, int q);

/// A holds no Inf or NaN (one pass over A).
void require_no_nonfinite_entries(Backend& b, MatrixView<const float> a);

/// Y = A Omega is finite. Any Inf or NaN in a row of A makes that row of Y non-finite (every
/// product of the library keeps IEEE semantics for them), so A itself is scanned only when Y is
/// not finite, to say why: non-finite entries, or entries so large that the product overflows FP32.
void require_finite_sketch(Backend& b, MatrixView<const float> a, MatrixView<const float> y);

/// ||A||_F in FP64, which no finite FP32 matrix can overflow: it is finite exactly when A is.
double require_finite_norm(Backend& b, MatrixView<const float> a);

}  // namespace randnla
