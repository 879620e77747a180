// The PCA's steps on any centred operator, which the dense and the sparse PCA share.
#pragma once

#include <vector>

#include "randnla/common/linear_operator.hpp"
#include "randnla/pca/pca.hpp"

namespace randnla {

/// ||X - 1 mu^T||_F^2 = ||X||_F^2 - m ||mu||^2 in FP64 sums (X m x n, `norm_x` = ||X||_F), refused
/// as pca() documents where it does not exceed the rounding of m ||mu||^2, 2^-19 m ||mu||^2 (mu off
/// by about 16 roundings of 2^-24, squared).
double centred_squares(double norm_x, index_t m, const std::vector<float>& mu);

/// The PCA after the mean: the rank-k RSVD of the centred operator `xc` (m x n, Xc = X - 1 mu^T;
/// `mean` is mu, n x 1, from `out`; `squares` = ||Xc||_F^2), then svd_flip's signs, the variances
/// and the exact residual (see PcaResult). `svd` holds the report `clock` laps into; the
/// result takes it over, after the "signs" lap and clock.finish().
PcaResult pca_of_centred(LinearOperator& xc, Products& prod, index_t k, const PcaOptions& o, Matrix<float> mean,
                         double squares, RsvdResult& svd, Stopwatch& clock, const MatrixAllocator& out);

}  // namespace randnla
