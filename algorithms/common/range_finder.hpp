// The one range finder of the randomized algorithms: Y = A Omega and the power iterations on any
// LinearOperator, with one orthonormaliser policy, one l = k + p, and the phases and methods it
// reports. RSVD (fixed rank and fixed accuracy), the distributed RSVD and the RP-HOSVD (per mode)
// use it; their drivers add only what differs (the small SVD, block Gram-Schmidt, the core).
#pragma once

#include <string>
#include <vector>

#include "randnla/common/linear_operator.hpp"
#include "randnla/report.hpp"

namespace randnla {

/// The range finder's knobs, the same in every algorithm's options.
struct RangeFinderOptions {
  index_t oversampling = 0;  ///< p: l = k + p columns (each algorithm documents its default)
  int power_iterations = 0;  ///< q
  /// The final basis's method; with Auto, the bases between two products of a power iteration get
  /// one CholeskyQR pass, Orthonormalizer::OnePass (they only carry the span to the next product).
  Orthonormalizer orthonormalizer = Orthonormalizer::Auto;
  std::uint64_t seed = 42;  ///< Omega's Philox seed
};

/// The range finder's knobs of an algorithm's options, which name them alike.
template <class Options>
RangeFinderOptions range_options(const Options& o) {
  RangeFinderOptions r;
  r.oversampling = o.oversampling, r.power_iterations = o.power_iterations;
  r.orthonormalizer = o.orthonormalizer, r.seed = o.seed;
  return r;
}

/// l = k + p, checked against overflow (InvalidArgument naming k + oversampling).
index_t sketch_columns(index_t k, index_t oversampling);

/// Halko, Martinsson & Tropp (2011), Alg. 4.4 (randomized subspace iteration) on a LinearOperator,
/// in the operator's products (Ootomo & Yokota's FP16 sketch through SHGEMM where they are split).
/// Phases lapped on `clock` (none where it is null): `products_phase` (the sketch and every
/// product), "input check", "orthonormalisation"; the method of every orthonormalisation is
/// appended to `methods`.
class RangeFinder {
 public:
  RangeFinder(LinearOperator& a, Stopwatch* clock, std::vector<std::string>& methods,
              const char* products_phase = "projection")
      : a_(a), clock_(clock), methods_(methods), products_phase_(products_phase) {}

  /// Y (m x l) := A Omega, Omega (n x l) drawn from `state`; then A's own check of the sketch.
  /// Returns the state after Omega's, for the next block's draw.
  RngState sketch(const RngState& state, MatrixView<float> y, std::string* kernel);
  /// Y := (A A^T)^q Y by q steps of orth(Y), Z = A^T Y, orth(Z), Y = A Z, each basis between two
  /// products orthonormalised by `between(chosen)`; Y is left as the last product made it.
  void power_iterations(MatrixView<float> y, int q, Orthonormalizer chosen);
  /// Q (m x l): an orthonormal basis of (A A^T)^q A Omega (Alg. 4.4): sketch, power iterations,
  /// and the final basis by `o.orthonormalizer`. Omega is drawn from `state`.
  Matrix<float> basis(index_t l, const RangeFinderOptions& o, const RngState& state, std::string* kernel);
  /// The same basis written into Y (m x l).
  void basis_into(MatrixView<float> y, const RangeFinderOptions& o, const RngState& state, std::string* kernel);

  /// The orthonormaliser of the bases between two products: Auto runs one CholeskyQR pass there by
  /// the backend's fastest path (OnePass), without the check that a second is not needed
  /// (scikit-learn uses LU there).
  static Orthonormalizer between(Orthonormalizer chosen) {
    return chosen == Orthonormalizer::Auto ? Orthonormalizer::OnePass : chosen;
  }
  void orthonormalize_range(MatrixView<float> y, Orthonormalizer method) { note(a_.orthonormalize_range(y, method)); }
  void orthonormalize_domain(MatrixView<float> z, Orthonormalizer method) { note(a_.orthonormalize_domain(z, method)); }

 private:
  void note(std::string method) {
    if (!method.empty()) methods_.push_back(std::move(method));
  }
  void lap(const char* phase) {
    if (clock_) clock_->lap(phase);
  }

  LinearOperator& a_;
  Stopwatch* clock_;
  std::vector<std::string>& methods_;
  const char* products_phase_;
};

}  // namespace randnla
