// The linear-operator concept every range finder reads A through (RandLAPACK's LinearOperator):
// its shape, products with blocks of columns, and how bases of its range and domain are made
// orthonormal. A dense matrix, one mode's unfolding of a tensor and a row-distributed matrix
// implement it; a new kind of operator is a new implementation, nothing else.
#pragma once

#include <string>

#include "randnla/common/precision_policy.hpp"
#include "randnla/orthonormalize/orthonormalize.hpp"
#include "randnla/backend.hpp"

namespace randnla {

/// A (m x n) on the backend `backend()`: every view passed is in its memory space, column-major.
class LinearOperator {
 public:
  explicit LinearOperator(Backend& b) : b_(b) {}
  virtual ~LinearOperator() = default;

  Backend& backend() const { return b_; }
  /// m: the rows this process holds (all of A's unless A is distributed by rows).
  virtual index_t rows() const = 0;
  /// n.
  virtual index_t cols() const = 0;

  /// Y (m x l) := A Omega, Omega (n x l) the operator `omega`, stored as the operator's products
  /// take it (FP16 for split products); *kernel, when non-null, names the kernel that ran.
  virtual void sketch(const RandomOperator& omega, MatrixView<float> y, std::string* kernel) = 0;
  /// Y (m x l) := A X, X n x l.
  virtual void apply(MatrixView<const float> x, MatrixView<float> y) = 0;
  /// A^T Y (n x l), Y m x l: summed over the processes where A is distributed by rows.
  virtual Matrix<float> apply_transpose(MatrixView<const float> y) = 0;

  /// B (l x n) := Y^T A for Y (m x l): by default (A^T Y)^T, through apply_transpose.
  virtual void project_rows(MatrixView<const float> y, MatrixView<float> bm) {
    const Matrix<float> z = apply_transpose(y);
    b_.transpose(z, bm);
  }

  /// Makes Y (m x l), a basis of A's range, orthonormal in place; returns the method that ran, or
  /// an empty string where it is queued and its verdict read later.
  virtual std::string orthonormalize_range(MatrixView<float> y, Orthonormalizer method) {
    return to_string(orthonormalize(b_, y, method));
  }
  /// Makes Z (n x l), a basis of A^T's range, orthonormal in place (as orthonormalize_range).
  virtual std::string orthonormalize_domain(MatrixView<float> z, Orthonormalizer method) {
    return to_string(orthonormalize(b_, z, method));
  }
  /// Checks the sketch Y = A Omega, where A has not been checked already: throws InvalidArgument
  /// for a non-finite A or one whose sketch overflows FP32. Returns whether it checked.
  virtual bool check_sketch(MatrixView<const float> /*y*/) { return false; }

 protected:
  Backend& b_;
};

/// A dense matrix A (m x n, FP32) read in place as op(S), S the stored matrix: op N, S is A; op T,
/// S (n x m, column-major) is A^T, so that a row-major A is read without a copy, every product
/// S's with the operands' roles swapped. Multiplied by `prod` (its precision policy). `checked`:
/// the caller has checked A for non-finite entries already, so the sketch is not checked again.
class DenseOperator : public LinearOperator {
 public:
  DenseOperator(Products& prod, MatrixView<const float> stored, Op op = Op::N, bool checked = false)
      : LinearOperator(prod.backend()), prod_(prod), s_(stored), op_(op), checked_(checked) {}

  index_t rows() const override { return op_ == Op::N ? s_.rows() : s_.cols(); }
  index_t cols() const override { return op_ == Op::N ? s_.cols() : s_.rows(); }
  /// S, as stored (A itself for op N).
  MatrixView<const float> stored() const { return s_; }
  Op op() const { return op_; }

  void sketch(const RandomOperator& omega, MatrixView<float> y, std::string* kernel) override {
    prod_.times(op_, 1.0f, s_, prod_.store(omega), 0.0f, y, kernel);
    if (kernel && op_ == Op::T) *kernel += " (row-major: the transpose's memory, read transposed in place)";
  }
  void apply(MatrixView<const float> x, MatrixView<float> y) override { prod_.gemm(op_, Op::N, 1.0f, s_, x, 0.0f, y); }
  Matrix<float> apply_transpose(MatrixView<const float> y) override {
    Matrix<float> z(b_, cols(), y.cols(), "A^T Y");
    prod_.gemm(op_ == Op::N ? Op::T : Op::N, Op::N, 1.0f, s_, y, 0.0f, z);
    return z;
  }
  /// B := Y^T A in one product, as the fixed-accuracy RSVD has always formed it.
  void project_rows(MatrixView<const float> y, MatrixView<float> bm) override {
    prod_.gemm(Op::T, op_, 1.0f, y, s_, 0.0f, bm);
  }
  bool check_sketch(MatrixView<const float> y) override;

 protected:
  Products& prod_;

 private:
  MatrixView<const float> s_;
  Op op_;
  bool checked_;
};

}  // namespace randnla
