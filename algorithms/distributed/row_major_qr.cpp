// The distributed QR factorisations of row-major blocks (distributed.hpp).
#include <string>

#include "distributed.hpp"

namespace randnla {
namespace {

/// factor(A_i) for a row-major A_i given as A_i^T: A_i transposed into the memory of its Q factor,
/// which `factor` takes as A and, reading A in full before it allocates Q (each of the
/// factorisations does), gets back from the allocator as Q: no memory beyond the column-major call's.
DistributedQrResult factored_in_q_memory(Backend& b, Communicator& comm, Transposed<const float> a,
                                         const MatrixAllocator& out, DistributedQr factor) {
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  const index_t m = a.stored.cols(), n = a.stored.rows();
  Matrix<float> q = outputs(m, n, "Q");
  b.transpose(a.stored, q.view());
  bool handed = false;
  const MatrixAllocator q_first = [&](index_t rows, index_t cols, const std::string& name) {
    if (handed || name != "Q" || rows != m || cols != n) return outputs(rows, cols, name);
    handed = true;
    return q;
  };
  return factor(b, comm, q.view(), q_first);
}

}  // namespace

DistributedQrResult distributed_tsqr(Backend& b, Communicator& comm, Transposed<const float> a,
                                     const MatrixAllocator& out) {
  return factored_in_q_memory(b, comm, a, out, distributed_tsqr);
}

DistributedQrResult distributed_cholesky_qr2(Backend& b, Communicator& comm, Transposed<const float> a,
                                             const MatrixAllocator& out) {
  return factored_in_q_memory(b, comm, a, out, distributed_cholesky_qr2);
}

DistributedQrResult distributed_rand_cholesky_qr(Backend& b, Communicator& comm, Transposed<const float> a,
                                                 const MatrixAllocator& out) {
  return factored_in_q_memory(b, comm, a, out, distributed_rand_cholesky_qr);
}

}  // namespace randnla
