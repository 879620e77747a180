// The block operations of the Tensor Core TSQR variants, behind their own small interface: a
// backend that runs them registers one (the portable backend's Kokkos kernels:
// backends/portable/tsqr); the tree asks it for the blocks of one arithmetic and runs as it does
// for FP32.
#pragma once

#include <memory>
#include <string>

#include "randnla/tsqr/tsqr_arithmetic.hpp"
#include "randnla/tsqr/tsqr_ops.hpp"

namespace randnla {

class TensorCoreTsqrOps {
 public:
  static constexpr const char* kName = "TensorCoreTsqrOps";
  virtual ~TensorCoreTsqrOps() = default;
  /// Whether blocks_in(arithmetic) runs here.
  virtual bool runs(TsqrArithmetic arithmetic) const = 0;
  /// The TSQR block operations with every Householder update and every product Q_i S_i in
  /// `arithmetic` (TsqrDot); R_i with LAPACK's signs, as TsqrOps.
  virtual std::unique_ptr<TsqrOps> blocks_in(TsqrArithmetic arithmetic) = 0;
  /// How the blocks are factored, for TsqrReport::blocks.
  virtual std::string description(TsqrArithmetic arithmetic) const = 0;
};

}  // namespace randnla
