// The option fields that every randomized algorithm shares, named and documented once here: each
// algorithm's options struct derives from these and adds only what is its own.
#pragma once

#include <cstdint>

#include "randnla/ops/product_types.hpp"
#include "randnla/report.hpp"

namespace randnla {

/// The fields of every randomized algorithm's options: the random operators' seed, the products'
/// precision and the progress callback.
struct CommonOptions {
  /// Philox seed of every random operator of the run (Omega, the error probes): the same operator
  /// on every backend and for any thread count.
  std::uint64_t seed = 42;
  /// The precision of the products with A (ProductPrecision and its presets). Auto, decided once by
  /// ProductOps::resolve: Split where the backend has Tensor Cores (Omega stored in FP16 and SHGEMM
  /// for the sketch, TCEC for the other products, FP16 or TF32 chosen from A's exponents), FP32
  /// without. The report names the kernel that ran and why.
  ProductPrecision products = ProductPrecision::automatic();
  Progress progress;  ///< called after each phase with its name and milliseconds
};

/// The fields of the fixed-rank algorithms' options (RSVD, PCA, LRA, Tucker): those of every
/// algorithm and the oversampling.
struct FixedRankOptions : CommonOptions {
  /// p: the sketch has l = k + p columns (Halko, Martinsson & Tropp 2011, Sec. 4.2; l = k + p is
  /// checked against overflow). Each algorithm's default is the one its source uses: 10 for the RSVD
  /// and the PCA (as scikit-learn's randomized_svd); 0 for the LRA (Baboulin et al. 2024, whose runs
  /// take p = 0) and the Tucker decomposition (the papers' RP-HOSVD: Q_i has J_i columns).
  index_t oversampling;

 protected:
  explicit FixedRankOptions(index_t default_oversampling) : oversampling(default_oversampling) {}
};

/// Throws InvalidArgument (naming `parameter`) unless `p` rounds per product: fp16-once and
/// fp16-all keep a rounded copy of A, which only randomized_lra() does.
void require_rounded_per_product(const ProductPrecision& p, const char* parameter);

}  // namespace randnla
