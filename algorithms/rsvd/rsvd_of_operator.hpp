// The fixed-rank randomized SVD of any LinearOperator: the steps rsvd() and the PCA share.
#pragma once

#include "randnla/common/linear_operator.hpp"
#include "randnla/common/range_finder.hpp"
#include "rsvd.hpp"

namespace randnla {

/// Rank-k SVD A ~ U diag(S) V^T of the operator A (m x n) by Halko, Martinsson & Tropp (2011),
/// Algorithm 4.4 (the RangeFinder on `a`, `range`'s knobs, l = k + range.oversampling columns) and
/// Algorithm 5.1: B^T = A^T Q (a.apply_transpose), the SVD of B by `small_svd`, U = Q Uhat(:, 1:k)
/// in `prod`'s precision. res.S (k x 1, descending), res.V (n x k) and, where `form_u`, res.U
/// (m x k; else left empty) come from `outputs`, FP32 in the backend's memory; res.report gets the
/// sketch's kernel and the orthonormalisers that ran. Laps the range finder's phases, "Q^T A",
/// "small SVD" and "U = Q Uhat" (where formed) on `clock`. The caller has checked k and the knobs
/// (require_rank_arguments).
void rsvd_of_operator(LinearOperator& a, Products& prod, index_t k, const RangeFinderOptions& range,
                      SmallSvd small_svd, bool form_u, Stopwatch& clock, const MatrixAllocator& outputs,
                      RsvdResult& res);

/// Throws InvalidArgument for the options rsvd_fixed_accuracy() refuses, for an m x n operator.
void require_fixed_accuracy_arguments(index_t m, index_t n, const FixedAccuracyOptions& o);

/// The fixed-accuracy RSVD (randQB_EI, as rsvd_fixed_accuracy() documents it) of the checked
/// operator `a` with ||A||_F = `norm_a`: blocks of the RangeFinder on `a`, B_i = Y_i^T A
/// (a.project_rows), the small SVD and U = Q Uhat in `prod`'s precision, into `res` (its outputs
/// from `outputs`). Laps the phases on `clock` and finishes it.
void rsvd_fixed_accuracy_of_operator(LinearOperator& a, Products& prod, const FixedAccuracyOptions& o, double norm_a,
                                     Stopwatch& clock, const MatrixAllocator& outputs, RsvdResult& res);

}  // namespace randnla
