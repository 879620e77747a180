// The random generation family: matrices drawn from the counter-based generator (Philox4x32-10).
#pragma once

#include <string>

#include "randnla/context.hpp"
#include "randnla/random.hpp"

namespace randnla {

/// Fills matrices in the context's memory with blocks of a random operator, identically on every
/// backend and for any thread count (Salmon et al. 2011; RandBLAS's submatrix semantics).
class RandomOps : public virtual DeviceContext {
 public:
  /// Fills X with the random matrix `spec` (Philox4x32-10; identical on every backend and for any
  /// thread count), or with the block of it that `block` names. FP16: each element rounded to
  /// nearest. Throws InvalidArgument for a Ternary density outside (0, 1] or a block outside
  /// its operator.
  void fill_random(const RandomSpec& spec, MatrixView<float> x, const RandomBlock& block = {}) {
    mine(x, "X"), do_fill_random(random_draw(spec, block, x.rows()), x);
  }
  void fill_random(const RandomSpec& spec, MatrixView<fp16> x, const RandomBlock& block = {}) {
    mine(x, "X"), do_fill_random(random_draw(spec, block, x.rows()), x);
  }

 protected:
  virtual void do_fill_random(const RandomDraw& draw, MatrixView<float> x) = 0;
  virtual void do_fill_random(const RandomDraw& draw, MatrixView<fp16> x) = 0;

 private:
  /// The draw of `block` of the operator `spec` into a matrix of `rows` rows (any number of
  /// columns: an operator has as many as its blocks reach).
  static RandomDraw random_draw(const RandomSpec& spec, RandomBlock block, index_t rows) {
    if (block.rows == 0) block = RandomBlock{0, 0, rows};
    require(block.row0 >= 0 && block.col0 >= 0, "block.row0, block.col0",
            std::to_string(block.row0) + ", " + std::to_string(block.col0), "must be >= 0");
    require(block.row0 + rows <= block.rows, "block.row0 + X.rows", block.row0 + rows,
            "must be <= block.rows = " + std::to_string(block.rows));
    return RandomDraw(spec, block);
  }
};

}  // namespace randnla
