// CholeskyQR2 over the ranks as a step of the distributed algorithms: Q only, in place, with no
// argument checks of its own (its callers' checks cover Y), so that the step waits for the other
// ranks only in its sums.
#pragma once

#include "randnla/distributed/distributed.hpp"

namespace randnla {

/// Y_i (this rank's m_i x l rows, FP32, the backend's memory) := this rank's rows of the Q of
/// distributed_cholesky_qr2 on Y, in place. Throws NumericalBreakdown on every rank where that
/// breaks down (Y then unchanged).
void orthonormalize_rows_by_cholesky_qr2(Backend& backend, Communicator& comm, MatrixView<float> y,
                                         DistributedReport& report);

}  // namespace randnla
