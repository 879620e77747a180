// Very sparse random projection Y = S A without storing S (Achlioptas 2003; Li, Hastie & Church,
// "Very sparse random projections", KDD 2006): S's non-zeros come from the counter-based
// generator wherever a kernel needs them (sparse_projection/sparse_sign_operator.hpp), so the work is O(k p D b)
// instead of O(k D b) and the memory O(k b) besides A (the Tensor Core kernel for dense-ish S
// adds a workspace of A's size: SparseKernel).
#pragma once

#include <cstdint>
#include <string>

#include "randnla/backend.hpp"
#include "randnla/sparse_projection/sparse_sign_operator.hpp"
#include "randnla/sparse_projection/sparse_projection_ops.hpp"

namespace randnla {

/// The probability p of a non-zero in S.
enum class SparseDensity {
  VerySparse,  ///< p = 1/sqrt(D) (Li, Hastie & Church)
  Achlioptas,  ///< p = 1/3 (Achlioptas's database-friendly projection)
  Given        ///< p = SparseProjectionOptions::density_value
};

/// The magnitude of S's non-zeros.
enum class SparseScaling {
  None,      ///< +-1
  Isometric  ///< +-sqrt(1/(p k)), so that E||S x||^2 = ||x||^2 for every x (Johnson-Lindenstrauss)
};

/// The names of SparseDensity's values as the command-line tool spells them ("very-sparse", "achlioptas", "given").
inline const EnumNames<SparseDensity>& names_of(SparseDensity) {
  static const EnumNames<SparseDensity> names{
      {SparseDensity::VerySparse, "very-sparse"}, {SparseDensity::Achlioptas, "achlioptas"}, {SparseDensity::Given, "given"}};
  return names;
}
/// The names of SparseScaling's values as the command-line tool spells them ("none", "isometric").
inline const EnumNames<SparseScaling>& names_of(SparseScaling) {
  static const EnumNames<SparseScaling> names{{SparseScaling::None, "none"}, {SparseScaling::Isometric, "isometric"}};
  return names;
}

/// Options of the very sparse random projection, sparse_sign_projection(); every field has a default.
struct SparseProjectionOptions {
  SparseDensity density = SparseDensity::VerySparse;  ///< p, the probability of a non-zero in S
  double density_value = 0.0;  ///< p for SparseDensity::Given, in (0, 1]
  SparseScaling scaling = SparseScaling::Isometric;   ///< the non-zeros' magnitude
  SampleLayout layout = SampleLayout::Columns;        ///< A's samples as columns (D x b) or rows (b x D)
  std::uint64_t seed = 42;     ///< S's Philox seed: the same S on every backend for the same k, D and options
  SparseKernel kernel = SparseKernel::Auto;  ///< the GPU kernel (the report names the one that ran)
};

/// How the sparse projection ran.
struct SparseProjectionReport {
  /// backend: where it ran (the GPU's name or "host"); kernel: which kernel ran
  std::string backend, kernel;  ///< where it ran and which kernel
  double density = 0.0;         ///< p
  float value = 0.0f;           ///< the non-zeros' magnitude
  double ms = 0.0;              ///< wall time, the device synchronised
};

/// Y = S A as a matrix in the backend's memory (FP32, column-major).
struct SparseProjectionResult {
  Matrix<float> Y;  ///< k x b
  SparseProjectionReport report;  ///< the kernel, the density, the non-zeros' value and the time
};

/// S (k x D) as the options define it: the same operator for every call with the same k, D and
/// options, so that streamed batches of one dataset share it. Throws InvalidArgument for k or D
/// out of range ([1, 2^24) and [1, 2^40]) and a density outside (0, 1].
SparseSignOperator sparse_sign_operator(index_t k, index_t d, const SparseProjectionOptions& options = {});

/// Y = S A (k x b, FP32) for a batch A of b samples of dimension D (FP32, LayoutLeft, in the
/// backend's memory; D x b or b x D as options.layout says). Each Y(j, c) sums S's non-zeros in
/// row j times A's entries in FP32; on one backend the result does not depend on the thread count.
/// Throws InvalidArgument for k <= 0, an empty A, a density outside (0, 1], k or D beyond the
/// operator's range, and non-finite entries of A that S touches (or sums that overflow FP32):
/// Y is checked, and A scanned only when Y is not finite, to name the cause.
SparseProjectionResult sparse_sign_projection(Backend& backend, MatrixView<const float> a, index_t k,
                                              const SparseProjectionOptions& options = {},
                                              const MatrixAllocator& outputs = nullptr);

}  // namespace randnla
