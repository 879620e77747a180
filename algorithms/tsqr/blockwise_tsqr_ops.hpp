// The generic TSQR operations (tsqr_ops.hpp): one Householder QR (Backend::qr, form_q) and one
// product per block, on any backend. The tree runs on it where the backend registers no TsqrOps
// of its own: LAPACK's blocks on the host, the vendor's on a device.
#pragma once

#include <algorithm>

#include "randnla/tsqr/tsqr_ops.hpp"

namespace randnla {

class BlockwiseTsqrOps final : public TsqrOps {
 public:
  explicit BlockwiseTsqrOps(Backend& backend) : TsqrOps(backend.memory_space()), b_(backend) {}
  index_t max_columns() const override { return kNoLimit; }
  index_t max_block_rows(index_t n) const override { return n >= 1 ? kNoLimit : 0; }
  index_t preferred_block_rows(index_t n) const override { return std::max<index_t>(4 * n, 512); }

 protected:
  void do_factor_blocks(MatrixView<const float> a, index_t blocks, MatrixView<float> q,
                        MatrixView<float> r_stack) override;
  void do_multiply_blocks(MatrixView<float> q, index_t blocks, MatrixView<const float> s_stack) override;

 private:
  static constexpr index_t kNoLimit = index_t(1) << 40;
  Backend& b_;
};

}  // namespace randnla
