// The random operator in three parts, as in RandBLAS: an immutable distribution, an RNG state that
// every draw returns advanced (and never modifies), and the operator itself, implicit (generated
// block by block on demand) or stored.
#pragma once

#include <cstdint>

#include "randnla/backend.hpp"

namespace randnla {

/// Philox's key (the seed) and counter (which operator: its draws use the counter's upper 64
/// bits, the element or column index the lower). RandBLAS's RNGState.
struct RngState {
  std::uint64_t key = 0;
  std::uint64_t counter = 0;
  /// The state after one operator's draws: an operator drawn from it is independent of the last.
  RngState next() const { return RngState{key, counter + 1}; }
};

/// The distribution of a rows x cols random operator (immutable). RandBLAS's distributions (its DenseDist; Ternary as its sign-and-zero entries).
struct RandomDistribution {
  index_t rows = 0, cols = 0;
  Distribution family = Distribution::Gaussian;
  double density = 1.0 / 3.0;  ///< Ternary only, in (0, 1]
};

/// A random operator Omega (rows x cols): a distribution and the state it is drawn from. Nothing is
/// stored: any block is generated on demand on a backend, and equals that block of the whole
/// operator, on every backend and for any thread count; materialize() stores all of it.
class RandomOperator {
 public:
  /// Throws InvalidArgument for negative dimensions or a Ternary density outside (0, 1].
  RandomOperator(const RandomDistribution& distribution, const RngState& state) : dist_(distribution), state_(state) {
    require(dist_.rows >= 0, "distribution.rows", dist_.rows, "must be >= 0");
    require(dist_.cols >= 0, "distribution.cols", dist_.cols, "must be >= 0");
    RandomDraw check(spec());  // validates the density
    (void)check;
  }

  const RandomDistribution& distribution() const { return dist_; }
  const RngState& state() const { return state_; }
  /// The state to draw the next operator from.
  RngState next_state() const { return state_.next(); }
  /// The same operator as the backends' fill_random names it.
  RandomSpec spec() const { return RandomSpec{dist_.family, state_.key, state_.counter, dist_.density}; }

  /// X := the block of Omega whose top-left element is (row0, col0), of X's shape, in the
  /// backend's memory (FP16: each element rounded to nearest). Throws InvalidArgument for a block
  /// outside Omega.
  template <class T>
  void fill(Backend& b, MatrixView<T> x, index_t row0 = 0, index_t col0 = 0) const {
    require(col0 >= 0 && col0 + x.cols() <= dist_.cols, "col0 + X.cols", col0 + x.cols(),
            "must lie in 0.." + std::to_string(dist_.cols));
    b.fill_random(spec(), x, RandomBlock{row0, col0, dist_.rows});
  }
  /// All of Omega, stored in the backend's memory.
  template <class T>
  Matrix<T> materialize(Backend& b, const std::string& name = "Omega") const {
    Matrix<T> omega(b, dist_.rows, dist_.cols, name);
    fill(b, omega.view());
    return omega;
  }

 private:
  RandomDistribution dist_;
  RngState state_;
};

/// X := a random operator of X's shape drawn from `state`; returns the next state (the input is
/// not modified). RandBLAS's fill_dense.
template <class T>
RngState fill_random(Backend& b, Distribution family, const RngState& state, MatrixView<T> x,
                     double density = 1.0 / 3.0) {
  const RandomOperator omega(RandomDistribution{x.rows(), x.cols(), family, density}, state);
  omega.fill(b, x);
  return omega.next_state();
}

}  // namespace randnla
