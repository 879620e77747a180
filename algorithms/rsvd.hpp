// Randomized SVD with a low-precision (FP16) Gaussian sketch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "orthonormalize.hpp"
#include "randnla/backend.hpp"

namespace randnla {

/// The product that forms the sketch Y = A * Omega (and the other products with A).
enum class SketchPrecision {
  FP32,         ///< Omega in FP32, SGEMM everywhere: the reference
  TF32,         ///< Omega in FP32, TF32 Tensor Core GEMM everywhere (faster, visibly less accurate)
  ShgemmFP16,   ///< Omega in FP16, SHGEMM on FP16 Tensor Cores; other products TCEC halfhalf
  ShgemmTF32,   ///< Omega in FP16, SHGEMM on TF32 Tensor Cores; other products TCEC tf32tf32
  Auto          ///< Omega in FP16, SHGEMM/TCEC choosing FP16 or TF32 from A's exponents
};
const char* to_string(SketchPrecision s);
SketchPrecision parse_sketch_precision(const std::string& text, const std::string& parameter = "sketch");

struct RsvdOptions {
  index_t oversampling = 10;        ///< p: the sketch has l = k + p columns
  int power_iterations = 0;         ///< q: Y = (A A^T)^q A Omega, re-orthonormalised between products
  std::uint64_t seed = 42;          ///< Omega's Philox seed (same Omega on host and device)
  SketchPrecision sketch = SketchPrecision::Auto;
  /// Every basis; with Auto, the bases between two products of a power iteration get one
  /// CholeskyQR pass (they only carry the span to the next product) and the basis Q of B = Q^T A
  /// is made orthonormal to FP32 precision (Orthonormalizer::Auto).
  Orthonormalizer orthonormalizer = Orthonormalizer::Auto;
  SvdMethod small_svd = SvdMethod::Auto;  ///< Auto = Gram: svd_through_gram on B^T
  int error_probes = 16;            ///< Gaussian probes of the residual estimate; 0 skips it
  /// Called after each phase with its name and the milliseconds it took (e.g. for progress output).
  std::function<void(const std::string& phase, double ms)> progress;
};

/// What ran and how long each phase took (milliseconds, wall clock with the device synchronised).
struct RsvdReport {
  std::string backend;
  std::string sketch_kernel;                   ///< e.g. "shgemm fp16-TC (A scaled by 2^3)"
  std::vector<std::string> orthonormalizers;   ///< the method each orthonormalisation actually used
  /// ms_check: the non-finite check, done on the sketch Y (A is scanned only when Y is not finite)
  double ms_check = 0, ms_projection = 0, ms_orthonormalization = 0, ms_qt_a = 0, ms_small_svd = 0, ms_u = 0,
         ms_error = 0;
  double relative_error_estimate = -1;         ///< ~ ||A - U S V^T||_F / ||A||_F; -1 when not estimated
  double total_ms() const {
    return ms_check + ms_projection + ms_orthonormalization + ms_qt_a + ms_small_svd + ms_u + ms_error;
  }
};

struct RsvdResult {
  Matrix<float> U;  ///< m x k, orthonormal columns
  Matrix<float> S;  ///< k x 1, descending
  Matrix<float> V;  ///< n x k, orthonormal columns; A ~ U diag(S) V^T
  RsvdReport report;
};

/// Rank-k randomized SVD of A (m x n, FP32, LayoutLeft, in the backend's memory; A is not modified).
/// Halko, Martinsson & Tropp (2011), Algorithms 4.4 and 5.1, with Omega in FP16 as in Ootomo &
/// Yokota, "Mixed-Precision Random Projection for RandNLA on Tensor Cores" (Algorithm 1).
/// Throws InvalidArgument for k <= 0, p < 0, q < 0, k + p > min(m, n), non-finite entries in A,
/// or entries so large that A * Omega overflows FP32 (both found from the sketch, not by a pass
/// over A).
RsvdResult rsvd(Backend& backend, MatrixView<const float> a, index_t k, const RsvdOptions& options = {});

struct FixedAccuracyOptions {
  double tolerance = 1e-2;          ///< stop when ||A - Q Q^T A||_F <= tolerance * ||A||_F, in (0, 1)
  index_t block_size = 32;          ///< columns added to Q per step
  index_t max_rank = -1;            ///< -1: min(m, n)
  int power_iterations = 0;
  std::uint64_t seed = 42;
  SketchPrecision sketch = SketchPrecision::Auto;
  SvdMethod small_svd = SvdMethod::Auto;
};

/// Fixed-accuracy randomized SVD: a blocked range finder grows Q block by block until the
/// residual bound holds (Martinsson & Voronin 2016, randQB_b; error indicator of Yu, Gu & Li 2018,
/// randQB_EI: ||A - Q B||_F^2 = ||A||_F^2 - ||B||_F^2), then returns the rank found (S.rows).
/// The indicator cancels below ~3e-4 relative (FP32 data), so tolerances under 1e-3 may run to
/// max_rank. Throws InvalidArgument for a tolerance outside (0, 1) or block_size <= 0;
/// UnsupportedConfiguration never; reaching max_rank without meeting the tolerance is reported in
/// relative_error_estimate, not thrown.
RsvdResult rsvd_fixed_accuracy(Backend& backend, MatrixView<const float> a, const FixedAccuracyOptions& options);

}  // namespace randnla
