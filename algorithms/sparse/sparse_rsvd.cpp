// The randomized SVD and PCA of CSR matrices and user operators: each is a LinearOperator, and the
// range finder, the small SVD and the PCA's steps are the dense algorithms' own.
#include "sparse_rsvd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "randnla/common/checks.hpp"
#include "randnla/common/linear_operator.hpp"
#include "randnla/pca/pca_of_operator.hpp"
#include "randnla/rsvd/rsvd_of_operator.hpp"
#include "randnla/sparse/sparse_ops.hpp"

namespace randnla {
namespace {

constexpr index_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
const char* const kStoredOmega = "Omega stored in FP32, then ";

/// The values of A as an nnz x 1 matrix (for their norm).
MatrixView<const float> values_of(const CsrView& a) {
  return MatrixView<const float>(a.values, a.nnz, 1, a.nnz > 1 ? a.nnz : 1, a.space);
}

/// A's shape and arrays, before anything is read: `name` is "A" or "X".
void require_csr_shape(const CsrView& a, const std::string& name) {
  require(a.rows >= 0 && a.rows <= kMaxInt32, name + ".rows", a.rows, "must lie in 0 .. 2^31 - 1 (32-bit indices)");
  require(a.cols >= 0 && a.cols <= kMaxInt32, name + ".cols", a.cols, "must lie in 0 .. 2^31 - 1 (32-bit indices)");
  require(a.nnz >= 0 && a.nnz <= kMaxInt32, name + ".nnz", a.nnz, "must lie in 0 .. 2^31 - 1 (32-bit offsets)");
  require(a.rows == 0 || a.row_ptr != nullptr, name + ".row_ptr", "null", "must point to rows + 1 offsets");
  require(a.nnz == 0 || a.col_idx != nullptr, name + ".col_idx", "null", "must point to nnz column indices");
  require(a.nnz == 0 || a.values != nullptr, name + ".values", "null", "must point to nnz values");
}

/// The defect at row_ptr[i] (SparseOps::first_defects), named with its value and its bounds.
[[noreturn]] void throw_offset_defect(SparseOps& ops, const CsrView& a, index_t i, const std::string& name) {
  const std::string at = name + ".row_ptr[" + std::to_string(i) + "]";
  if (i == 0) throw InvalidArgument(at, std::to_string(ops.entry(a, 0, -1).row_begin), "must be 0 (zero-based offsets)");
  const CsrEntry row = ops.entry(a, i - 1, -1);  // row_end is row_ptr[i]
  if (row.row_end >= row.row_begin && row.row_end <= a.nnz)
    throw InvalidArgument(at, std::to_string(row.row_end), "must equal nnz = " + std::to_string(a.nnz));
  throw InvalidArgument(at, std::to_string(row.row_end),
                        "must lie in row_ptr[" + std::to_string(i - 1) + "] = " + std::to_string(row.row_begin) +
                            " .. nnz = " + std::to_string(a.nnz) + " (offsets non-decreasing)");
}

/// The defect at position j (SparseOps::first_defects), named with its value.
[[noreturn]] void throw_entry_defect(SparseOps& ops, const CsrView& a, index_t j, const std::string& name) {
  const CsrEntry e = ops.entry(a, 0, j);
  const std::string at = "[" + std::to_string(j) + "]";
  require(e.column >= 0 && e.column < a.cols, name + ".col_idx" + at, e.column,
          "must lie in 0 .. cols - 1 = " + std::to_string(a.cols - 1));
  require(std::isfinite(e.value), name + ".values" + at, e.value, "must be finite");
  throw InvalidArgument(name + ".col_idx" + at, std::to_string(e.column),
                        "must be above the column index before it in its row, " + name + ".col_idx[" +
                            std::to_string(j - 1) + "] = " + std::to_string(ops.entry(a, 0, j - 1).column) +
                            " (each row's indices sorted, without duplicates)");
}

/// The CSR invariants of CsrView, checked on the backend in one pass; the first defect found (the
/// offsets' before the entries') is named with its value.
void require_valid_csr(Backend& b, SparseOps& ops, const CsrView& a, const std::string& name) {
  require(a.space == b.memory_space(), name + ".space", to_string(a.space),
          std::string("must be ") + to_string(b.memory_space()) + " memory for this backend");
  const CsrDefects defects = ops.first_defects(a);
  if (defects.offset >= 0) throw_offset_defect(ops, a, defects.offset, name);
  if (defects.entry >= 0) throw_entry_defect(ops, a, defects.entry, name);
}

/// A validated CSR matrix: every product one SparseOps::spmm in FP32; the sketch by a stored
/// Gaussian Omega or, with SketchOperator::SparseSign, the sparse sign Omega never stored
/// (SparseOps::sparse_sign_sketch).
class CsrOperator final : public LinearOperator {
 public:
  CsrOperator(Backend& b, SparseOps& ops, const CsrView& a, std::string name,
              SketchOperator sketch_operator = SketchOperator::Gaussian)
      : LinearOperator(b), ops_(ops), a_(a), name_(std::move(name)), sketch_operator_(sketch_operator) {}

  index_t rows() const override { return a_.rows; }
  index_t cols() const override { return a_.cols; }

  void sketch(const RandomOperator& omega, MatrixView<float> y, std::string* kernel) override {
    if (sketch_operator_ == SketchOperator::SparseSign) {
      const SparseSignSketch sparse(a_.cols, omega.distribution().cols, omega.state());
      const std::string ran = ops_.sparse_sign_sketch(a_, sparse, y);
      if (kernel) *kernel = "sparse sign Omega (" + std::to_string(sparse.nonzeros) + " non-zeros a row, never stored), " + ran;
      return;
    }
    const Matrix<float> stored = omega.materialize<float>(b_);
    const std::string ran = ops_.spmm(a_, Op::N, stored, y);
    if (kernel) *kernel = kStoredOmega + ran;
  }
  void apply(MatrixView<const float> x, MatrixView<float> y) override { ops_.spmm(a_, Op::N, x, y); }
  Matrix<float> apply_transpose(MatrixView<const float> y) override {
    Matrix<float> z(b_, a_.cols, y.cols(), "A^T Y");
    ops_.spmm(a_, Op::T, y, z);
    return z;
  }
  /// A's values are finite (validated): only an FP32 overflow of the sums makes Y non-finite.
  bool check_sketch(MatrixView<const float> y) override {
    if (b_.exponent_histogram(y).nonfinite() > 0)
      throw InvalidArgument(name_, "a matrix with ||" + name_ + "||_F = " + detail::to_text(b_.frobenius_norm(values_of(a_))),
                            "is too large: the sketch " + name_ + " Omega overflows FP32 (scale it down)");
    return true;
  }

 private:
  SparseOps& ops_;
  CsrView a_;
  std::string name_;
  SketchOperator sketch_operator_;
};

/// The user's operator: its callbacks get views with ld = rows; others are copied to and from such.
class CallbackOperator final : public LinearOperator {
 public:
  CallbackOperator(Backend& b, const OperatorCallbacks& f) : LinearOperator(b), f_(f) {}

  index_t rows() const override { return f_.rows; }
  index_t cols() const override { return f_.cols; }

  void sketch(const RandomOperator& omega, MatrixView<float> y, std::string* kernel) override {
    const Matrix<float> stored = omega.materialize<float>(b_);
    apply(stored, y);
    if (kernel) *kernel = std::string(kStoredOmega) + "the user's apply";
  }
  void apply(MatrixView<const float> x, MatrixView<float> y) override { call(f_.apply, x, y); }
  Matrix<float> apply_transpose(MatrixView<const float> y) override {
    Matrix<float> z(b_, f_.cols, y.cols(), "A^T Y");
    call(f_.apply_transpose, y, z);
    return z;
  }
  bool check_sketch(MatrixView<const float> y) override {
    const std::int64_t bad = b_.exponent_histogram(y).nonfinite();
    require(bad == 0, "apply", "a result A Omega with " + std::to_string(bad) + " non-finite entries",
            "must be finite (the operator holds Inf or NaN, or overflows FP32)");
    return true;
  }

 private:
  using Callback = std::function<void(MatrixView<const float>, MatrixView<float>)>;
  static bool packed(index_t rows, index_t ld) { return ld == (rows > 1 ? rows : 1); }

  void call(const Callback& f, MatrixView<const float> x, MatrixView<float> y) {
    if (packed(x.rows(), x.ld()) && packed(y.rows(), y.ld())) return f(x, y);
    Matrix<float> xp(b_, x.rows(), x.cols(), "X"), yp(b_, y.rows(), y.cols(), "Y");
    b_.copy(x, xp.view());
    f(xp, yp.view());
    b_.copy(yp, y);
  }

  OperatorCallbacks f_;
};

/// ||A G - U diag(S) V^T G||_F / sqrt(probes) / ||A||_F for Gaussian probes G (the dense
/// residual_estimate's, from the same draw); `norm_a` < 0: ||A||_F estimated by ||A G||_F / sqrt(probes).
double residual_of_operator(LinearOperator& a, const RsvdResult& r, int probes, std::uint64_t seed, double norm_a) {
  Backend& b = a.backend();
  const index_t m = a.rows(), n = a.cols(), k = r.S.rows();
  Matrix<float> g(b, n, probes, "G"), y(b, m, probes, "Y"), t(b, k, probes, "T"), us(b, m, k, "US");
  b.fill_random(RandomSpec{Distribution::Gaussian, seed, 0xE5717A7Eull}, g.view());
  a.apply(g, y.view());
  const double root = std::sqrt(static_cast<double>(probes));
  if (norm_a < 0) norm_a = b.frobenius_norm(y) / root;
  if (norm_a == 0.0) return 0.0;
  b.product(Op::T, Op::N, 1.0f, r.V, g, 0.0f, t, ProductPrecision::fp32());
  b.copy(r.U, us.view());
  b.scale_columns(r.S, us.view());
  b.product(Op::N, Op::N, -1.0f, us, t, 1.0f, y, ProductPrecision::fp32());
  return b.frobenius_norm(y) / root / norm_a;
}

/// The user's apply takes a stored Omega: only the Gaussian one.
void require_callback_options(const RsvdOptions& o) {
  require(o.sketch_operator == SketchOperator::Gaussian, "sketch_operator", to_string(o.sketch_operator),
          "must be gaussian for a user's operator (its apply takes a stored Omega)");
}

/// The RSVD's steps on a checked operator: the range finder, the small SVD, U, the error estimate.
RsvdResult operator_rsvd(LinearOperator& op, index_t k, const RsvdOptions& o, const MatrixAllocator& out,
                         double norm_a, RsvdResult& res, Stopwatch& clock) {
  Backend& b = op.backend();
  Products prod(b, o.products);
  rsvd_of_operator(op, prod, k, range_options(o), o.small_svd, /*form_u=*/true, clock, out ? out : backend_matrices(b),
                   res);
  if (o.error_probes > 0) {
    res.report.relative_error_estimate = residual_of_operator(op, res, o.error_probes, o.seed, norm_a);
    clock.lap("error estimate");
  }
  clock.finish();
  return std::move(res);
}

std::vector<float> to_host(Backend& b, MatrixView<const float> column) {
  std::vector<float> h(static_cast<std::size_t>(column.rows()));
  b.copy(column, MatrixView<float>(h.data(), column.rows(), 1, column.rows() > 1 ? column.rows() : 1, MemorySpace::Host));
  return h;
}

/// Rows of the FP64 blocks relative_error converts (8 MB of doubles for k = 256 per operand).
constexpr index_t kErrorBlockRows = 4096;

/// X^T Y (k x k, X and Y m x k) in FP64: the sum over blocks of rows, each converted to FP64.
std::vector<double> gram_fp64(Backend& b, MatrixView<const float> x, MatrixView<const float> y) {
  const index_t m = x.rows(), k = x.cols(), rows = std::min<index_t>(std::max<index_t>(m, 1), kErrorBlockRows);
  std::vector<double> h(static_cast<std::size_t>(k * k), 0.0);
  if (m == 0 || k == 0) return h;
  Matrix<double> xd(b, rows, k, "X block"), yd(b, rows, k, "Y block"), g(b, k, k, "X^T Y");
  for (index_t i0 = 0; i0 < m; i0 += rows) {
    const index_t r = std::min(rows, m - i0);
    b.convert(x.block(i0, 0, r, k), xd.view().block(0, 0, r, k));
    b.convert(y.block(i0, 0, r, k), yd.view().block(0, 0, r, k));
    b.product(Op::T, Op::N, 1.0, xd.view().block(0, 0, r, k), yd.view().block(0, 0, r, k), i0 == 0 ? 0.0 : 1.0, g.view());
  }
  b.copy(g.view(), MatrixView<double>(h.data(), k, k, k, MemorySpace::Host));
  return h;
}

}  // namespace

double relative_error(Backend& b, const CsrView& a, MatrixView<const float> u, MatrixView<const float> s,
                      MatrixView<const float> v) {
  require_csr_shape(a, "A");
  const index_t k = s.rows();
  require_space(u, b.memory_space(), "U"), require_space(s, b.memory_space(), "S"), require_space(v, b.memory_space(), "V");
  require_shape(u, a.rows, k, "U"), require_shape(s, k, 1, "S"), require_shape(v, a.cols, k, "V");
  SparseOps& ops = b.ops<SparseOps>();
  require_valid_csr(b, ops, a, "A");
  const double norm = b.frobenius_norm(values_of(a));
  if (norm == 0.0) return 0.0;
  Matrix<float> av(b, a.rows, k, "A V");
  ops.spmm(a, Op::N, v, av.view());
  const std::vector<double> gu = gram_fp64(b, u, u), cross = gram_fp64(b, u, av), gv = gram_fp64(b, v, v);
  const std::vector<float> sh = to_host(b, s);
  double squares = norm * norm;
  for (std::size_t i = 0; i < static_cast<std::size_t>(k); ++i) {
    squares -= 2.0 * sh[i] * cross[i + i * static_cast<std::size_t>(k)];
    for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j)
      squares += static_cast<double>(sh[i]) * sh[j] * gu[i + j * k] * gv[i + j * k];
  }
  return std::sqrt(std::max(squares, 0.0)) / norm;
}

CsrArrays copy_csr(Backend& b, const CsrView& a) {
  require(a.rows >= 0, "A.rows", a.rows, "must be >= 0");
  require(a.nnz >= 0, "A.nnz", a.nnz, "must be >= 0");
  require(a.row_ptr != nullptr, "A.row_ptr", "null", "must hold rows + 1 offsets");
  require(a.nnz == 0 || (a.col_idx != nullptr && a.values != nullptr), "A.col_idx or A.values", "null",
          "must hold nnz = " + std::to_string(a.nnz) + " entries");
  // The index arrays travel through the float copy, which moves bytes unchanged.
  static_assert(sizeof(std::int32_t) == sizeof(float), "int32 offsets and indices are copied as floats");
  auto copied = [&](const void* src, index_t count) {
    const index_t n = std::max<index_t>(count, 1);
    std::shared_ptr<void> dst = b.allocate(sizeof(float) * static_cast<std::size_t>(n));
    if (count > 0)
      b.copy(MatrixView<const float>(static_cast<const float*>(src), count, 1, n, a.space),
             MatrixView<float>(static_cast<float*>(dst.get()), count, 1, n, b.memory_space()));
    return dst;
  };
  CsrArrays c{copied(a.row_ptr, a.rows + 1), copied(a.col_idx, a.nnz), copied(a.values, a.nnz), a};
  c.view.row_ptr = static_cast<const std::int32_t*>(c.row_ptr.get());
  c.view.col_idx = static_cast<const std::int32_t*>(c.col_idx.get());
  c.view.values = static_cast<const float*>(c.values.get());
  c.view.space = b.memory_space();
  return c;
}

RsvdResult rsvd(Backend& b, const CsrView& a, index_t k, const RsvdOptions& o, const MatrixAllocator& out) {
  require_csr_shape(a, "A");
  require_rank_arguments(a.rows, a.cols, k, o.oversampling, o.power_iterations);
  RsvdResult res;
  res.report.backend = b.description();
  Stopwatch clock(b, &res.report.phases, o.progress);
  SparseOps& ops = b.ops<SparseOps>();
  require_valid_csr(b, ops, a, "A");
  const double norm_a = b.frobenius_norm(values_of(a));
  clock.lap("input check");
  CsrOperator op(b, ops, a, "A", o.sketch_operator);
  return operator_rsvd(op, k, o, out, norm_a, res, clock);
}

RsvdResult rsvd_fixed_accuracy(Backend& b, const CsrView& a, const FixedAccuracyOptions& o, const MatrixAllocator& out) {
  require_csr_shape(a, "A");
  require_fixed_accuracy_arguments(a.rows, a.cols, o);
  RsvdResult res;
  res.report.backend = b.description();
  Stopwatch clock(b, &res.report.phases, o.progress);
  SparseOps& ops = b.ops<SparseOps>();
  require_valid_csr(b, ops, a, "A");
  const double norm_a = b.frobenius_norm(values_of(a));
  clock.lap("input check");
  Products prod(b, o.products);
  CsrOperator op(b, ops, a, "A");
  rsvd_fixed_accuracy_of_operator(op, prod, o, norm_a, clock, out ? out : backend_matrices(b), res);
  return res;
}

namespace {
/// The checks every entry on a user's operator makes; `norm_needed`: the entry needs ||A||_F.
void require_callbacks(const OperatorCallbacks& a, bool norm_needed) {
  require(a.rows > 0, "a.rows", a.rows, "must be > 0");
  require(a.cols > 0, "a.cols", a.cols, "must be > 0");
  require(static_cast<bool>(a.apply), "apply", "empty", "must be set");
  require(static_cast<bool>(a.apply_transpose), "apply_transpose", "empty", "must be set");
  if (norm_needed)
    require(a.frobenius_norm >= 0, "a.frobenius_norm", a.frobenius_norm,
            "must be given (>= 0): ||A||_F, to which the tolerance and the variances are relative");
}
}  // namespace

RsvdResult rsvd(Backend& b, const OperatorCallbacks& a, index_t k, const RsvdOptions& o, const MatrixAllocator& out) {
  require_callbacks(a, false);
  require_rank_arguments(a.rows, a.cols, k, o.oversampling, o.power_iterations);
  require_callback_options(o);
  RsvdResult res;
  res.report.backend = b.description();
  Stopwatch clock(b, &res.report.phases, o.progress);
  CallbackOperator op(b, a);
  return operator_rsvd(op, k, o, out, a.frobenius_norm >= 0 ? a.frobenius_norm : -1.0, res, clock);
}

RsvdResult rsvd_fixed_accuracy(Backend& b, const OperatorCallbacks& a, const FixedAccuracyOptions& o,
                               const MatrixAllocator& out) {
  require_callbacks(a, true);
  require_fixed_accuracy_arguments(a.rows, a.cols, o);
  RsvdResult res;
  res.report.backend = b.description();
  Stopwatch clock(b, &res.report.phases, o.progress);
  Products prod(b, o.products);
  CallbackOperator op(b, a);
  rsvd_fixed_accuracy_of_operator(op, prod, o, a.frobenius_norm, clock, out ? out : backend_matrices(b), res);
  return res;
}

PcaResult pca(Backend& b, const OperatorCallbacks& x, index_t k, const PcaOptions& o, const MatrixAllocator& outputs) {
  require_callbacks(x, true);
  require(x.rows >= 2, "a.rows", x.rows, "must be >= 2: the variances divide by m - 1 (m samples)");
  require_rank_arguments(x.rows, x.cols, k, o.oversampling, o.power_iterations);
  RsvdResult svd;  // its report, the RSVD's, becomes the PCA's
  svd.report.backend = b.description();
  Stopwatch clock(b, &svd.report.phases, o.progress);
  CallbackOperator xop(b, x);
  return pca_of_operator(xop, x.frobenius_norm, k, o, outputs, svd, clock);
}

PcaResult pca(Backend& b, const CsrView& x, index_t k, const PcaOptions& o, const MatrixAllocator& outputs) {
  require_csr_shape(x, "X");
  require(x.rows >= 2, "X.rows", x.rows, "must be >= 2: the variances divide by m - 1 (m samples)");
  require_rank_arguments(x.rows, x.cols, k, o.oversampling, o.power_iterations);
  RsvdResult svd;  // its report, the RSVD's, becomes the PCA's
  svd.report.backend = b.description();
  Stopwatch clock(b, &svd.report.phases, o.progress);
  SparseOps& ops = b.ops<SparseOps>();
  require_valid_csr(b, ops, x, "X");
  CsrOperator xop(b, ops, x, "X");
  return pca_of_operator(xop, b.frobenius_norm(values_of(x)), k, o, outputs, svd, clock);
}

}  // namespace randnla
