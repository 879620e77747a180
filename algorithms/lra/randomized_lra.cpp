// Randomized LRA with refinement and recompression (randomized_lra.hpp).
#include "randnla/lra/randomized_lra.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "randnla/common/checks.hpp"
#include "randnla/common/range_finder.hpp"
#include "randnla/rsvd/svd_through_gram.hpp"
#include "randnla/random_operator.hpp"

namespace randnla {
namespace {

/// The precision of each FP32 product: fp16-once and fp16-all round A once (rounds_once) and take
/// FP32 products of the rest as fp16 does.
ProductPrecision per_product(ProductPrecision p) { return {p.mode, p.split}; }

/// fp16-all implies fp16-once, which implies fp16: the combinations the presets name.
void require_lra_products(const ProductPrecision& p) {
  const bool consistent = (!p.fp16_sums || p.rounded_once) && (!p.rounded_once || p.mode == ProductMode::FP16);
  require(consistent, "products", to_string(p), "rounds A once only in FP16 (fp16-once), with FP16 sums only so (fp16-all)");
}

/// Auto decided once for the whole run, and said in `described` with why: subspace steps leave the
/// sketch nothing to be accurate about, so there it is the fastest sketch that takes A's whole
/// range (TF32 on Tensor Cores; measured against Split's on the H100: bench_lra.md); otherwise the
/// product family's Auto (ProductOps::resolve).
ProductPrecision resolved_products(Backend& b, ProductPrecision p, bool subspace_steps, std::string& described) {
  if (p.mode != ProductMode::Auto) return described = to_string(p), p;
  if (subspace_steps && b.capabilities().tensor_cores) {
    described = "tf32 (auto: subspace refinement recomputes the span, so the fastest full-range sketch)";
    return ProductPrecision::tf32();
  }
  ProductReport why;
  const ProductPrecision r = b.resolve(p, &why);
  described = std::string(to_string(r)) + " (" + (why.why.empty() ? "auto: Tensor Cores" : why.why) + ")";
  return r;
}

/// What every randLRA step shares.
struct Run {
  Backend& b;
  const LraOptions& o;
  ProductPrecision precision;  ///< per_product(o.products), Auto resolved
  LraReport& report;
  Stopwatch& clock;
};

/// The unbiased exponent of the largest finite entry a histogram counted (as a power of two); 0
/// for a zero matrix.
int largest_exponent(const ExponentHistogram& h) {
  const int biased = h.max_biased_exponent();
  return biased < 0 ? 0 : biased - 127;
}
int largest_exponent(Backend& b, MatrixView<const float> x) { return largest_exponent(b.exponent_histogram(x)); }

/// FP16 products round 2^exponent A: refused where its largest entry (from A's histogram h) leaves
/// FP16's normal range.
void require_fp16_range(const ExponentHistogram& h, int exponent = 0) {
  const int e = largest_exponent(h) + exponent;
  require(e >= -14 && e < kFp16TargetExponent + 1, "products", "fp16",
          "A's largest entry is about 2^" + std::to_string(e) +
              ", outside FP16's normal range [2^-14, 2^15): use split or auto, which scale");
}

/// x rounded to FP16 (round to nearest).
Matrix<fp16> half_of(Backend& b, MatrixView<const float> x) {
  Matrix<fp16> h(b, x.rows(), x.cols(), "FP16");
  b.convert(x, h.view());
  return h;
}

/// 2^exponent A rounded to FP16 once for 16|32 and 16|16, refused as require_fp16_range says: the
/// check and the scale ride on the conversion's pass over A (a pass of its own over a 35840^2 A
/// took 3.4-3.9 ms on the H100, a fifth of the whole 16|32 run at k = 1024).
Matrix<fp16> checked_half_of(Backend& b, MatrixView<const float> a, int exponent) {
  Matrix<fp16> h(b, a.rows(), a.cols(), "FP16");
  require_fp16_range(b.convert_measured(a, h.view(), exponent), exponent);
  return h;
}

/// op(A16) op(B16) into c: FP32 sums, or with 16|16 FP16 sums and an FP16 C widened to c, refused
/// where a partial sum overflowed FP16 (no Inf is passed on as a result).
void half_product(Run& r, Op ta, MatrixView<const fp16> a16, MatrixView<const fp16> b16, MatrixView<float> c) {
  if (!r.o.products.fp16_sums) return r.b.product(ta, Op::N, 1.0f, a16, b16, 0.0f, c);
  Matrix<fp16> c16(r.b, c.rows(), c.cols(), "C16");
  r.b.product(ta, Op::N, 1.0f, a16, b16, 0.0f, c16.view());
  r.b.convert(c16, c);
  require(r.b.exponent_histogram(c).nonfinite() == 0, "products", "fp16-all",
          "overflowed: a partial sum of A's FP16 product left FP16's range (A's column or row norms exceed "
          "about 6e4); scale A down or use fp16-once");
}

/// Omega (n x l) in FP16 with 16|16 scaled by a power of two near 1/sqrt(n), so that its columns
/// have about unit norm and B's FP16 partial sums stay near A's row norms (the basis of range(B)
/// does not depend on Omega's scale); unscaled otherwise.
Matrix<fp16> half_omega(Run& r, const RandomOperator& omega, index_t n) {
  if (!r.o.products.fp16_sums) return omega.materialize<fp16>(r.b);
  Matrix<float> w = omega.materialize<float>(r.b);
  r.b.scale(std::ldexp(1.0f, -static_cast<int>(std::ceil(0.5 * std::log2(static_cast<double>(n))))), w.view());
  return half_of(r.b, w);
}

/// The products run split (SHGEMM / TCEC): asked for, or Auto on a backend with Tensor Cores.
bool runs_split(const Run& r) {
  return r.precision.mode == ProductMode::Split;
}

/// 16|32 and 16|16: A rounded to FP16 once, for both products.
bool rounds_once(const Run& r) {
  return r.o.products.rounded_once;
}

/// A as Algorithm 1 multiplies it: in the products' precision, with A rounded to FP16 once
/// (`a16`) for 16|32 and 16|16 (rounds_once), else taken as it is.
class LraOperator final : public LinearOperator {
 public:
  LraOperator(Run& r, MatrixView<const float> a, const Matrix<fp16>& a16) : LinearOperator(r.b), r_(r), a_(a), a16_(a16) {}

  index_t rows() const override { return a_.rows(); }
  index_t cols() const override { return a_.cols(); }
  void sketch(const RandomOperator& omega, MatrixView<float> y, std::string*) override {
    if (rounds_once(r_))
      half_product(r_, Op::N, a16_, half_omega(r_, omega, a_.cols()), y);
    else if (runs_split(r_))  // SHGEMM: Omega in FP16 needs no split of its own
      b_.product(Op::N, Op::N, 1.0f, a_, omega.materialize<fp16>(b_), 0.0f, y, r_.precision);
    else
      b_.product(Op::N, Op::N, 1.0f, a_, omega.materialize<float>(b_), 0.0f, y, r_.precision);
  }
  void apply(MatrixView<const float> x, MatrixView<float> y) override { multiply(Op::N, x, y); }
  Matrix<float> apply_transpose(MatrixView<const float> y) override {
    Matrix<float> z(b_, a_.cols(), y.cols(), "A^T Y");
    multiply(Op::T, y, z.view());
    return z;
  }
  bool check_sketch(MatrixView<const float> y) override {
    require_finite_sketch(b_, a_, y);
    return true;
  }

 private:
  void multiply(Op op, MatrixView<const float> x, MatrixView<float> y) {
    if (rounds_once(r_)) return half_product(r_, op, a16_, half_of(b_, x), y);
    b_.product(op, Op::N, 1.0f, a_, x, 0.0f, y, r_.precision);
  }

  Run& r_;
  MatrixView<const float> a_;
  const Matrix<fp16>& a16_;
};

/// Q := orth(A Omega) (m x l, Omega drawn from `state`) in the products' precision (Algorithm 1,
/// steps 1-3) by the range finder without power iterations; a16 is A in FP16 for 16|32 and 16|16
/// (rounds_once), else empty.
void range_basis(Run& r, MatrixView<const float> a, const Matrix<fp16>& a16, const RngState& state,
                 MatrixView<float> q) {
  LraOperator op(r, a, a16);
  RangeFinderOptions options;
  options.orthonormalizer = r.o.orthonormalizer;
  RangeFinder(op, &r.clock, r.report.orthonormalizers, "products").basis_into(q, options, state, nullptr);
}

/// Algorithm 1 on `a` with rank k, Omega drawn from `state`: X := Q(:, 1:k), Y := (A^T Q)(:, 1:k),
/// written into x (m x k) and y (n x k). With 16|32 and 16|16, 2^exponent A is rounded to FP16 once
/// for both products (refused outside FP16's range: checked_half_of) and Y scaled back (Q is the
/// same for any scale of A); the other variants take A as it is, whatever the exponent.
void rand_lra(Run& r, MatrixView<const float> a, index_t k, const RngState& state, MatrixView<float> x,
              MatrixView<float> y, int exponent = 0) {
  const index_t m = a.rows(), n = a.cols(), l = sketch_columns(k, r.o.oversampling);
  const bool once = rounds_once(r);
  const Matrix<fp16> a16 = once ? checked_half_of(r.b, a, exponent) : Matrix<fp16>();
  // Without oversampling B, Q and A^T Q are X and Y themselves: no copies of their first k columns.
  Matrix<float> own_q = l > k ? Matrix<float>(r.b, m, l, "B") : Matrix<float>();
  const MatrixView<float> q = l > k ? own_q.view() : x;
  range_basis(r, a, a16, state, q);
  Matrix<float> own_at_q = l > k ? Matrix<float>(r.b, n, l, "Y") : Matrix<float>();
  const MatrixView<float> at_q = l > k ? own_at_q.view() : y;
  if (once)
    half_product(r, Op::T, a16, half_of(r.b, q), at_q);
  else
    r.b.product(Op::T, Op::N, 1.0f, a, q, 0.0f, at_q, r.precision);
  if (l > k) {
    r.b.copy(MatrixView<const float>(q.block(0, 0, m, k)), x);
    r.b.copy(MatrixView<const float>(at_q.block(0, 0, n, k)), y);
  }
  if (once && exponent != 0) r.b.scale(std::ldexp(1.0f, -exponent), y);
  r.clock.lap("products");
}

/// The basis x rounded to FP16 after scaling its largest entry into [1, 2): only the span of the
/// product it feeds matters, and the scale keeps a tall basis's small entries out of FP16's
/// subnormals.
Matrix<fp16> half_basis(Backend& b, MatrixView<const float> x) {
  Matrix<fp16> h(b, x.rows(), x.cols(), "FP16 basis");
  b.convert_measured(x, h.view(), -largest_exponent(b, x));
  return h;
}

/// A ~ left right^T (m x l and n x l, l > k), one of them orthonormal (`basis_on_right` says
/// which), truncated to rank k by the SVD of the other, F = U S W^T (through its Gram matrix):
/// X = U_k S_k and Y = V W_k when F = A V, X = Q W_k S_k and Y = U_k when F = A^T Q.
void truncate_to_rank(Run& r, MatrixView<const float> left, MatrixView<const float> right, bool basis_on_right,
                      index_t k, const MatrixAllocator& outputs, LraResult& res) {
  const MatrixView<const float> f = basis_on_right ? left : right, basis = basis_on_right ? right : left;
  const index_t l = f.cols();
  Matrix<float> u(r.b, f.rows(), l, "U"), s(r.b, l, 1, "S"), w(r.b, l, l, "W");
  svd_through_gram(r.b, f, u.view(), s.view(), w.view());
  Matrix<float> uk = outputs(f.rows(), k, basis_on_right ? "X" : "Y"), bk = outputs(basis.rows(), k, basis_on_right ? "Y" : "X");
  r.b.copy(MatrixView<const float>(u.view().block(0, 0, f.rows(), k)), uk.view());
  r.b.product(Op::N, Op::N, 1.0f, basis, MatrixView<const float>(w.view().block(0, 0, l, k)), 0.0f, bk,
              ProductPrecision::automatic());
  res.X = basis_on_right ? std::move(uk) : std::move(bk);
  res.Y = basis_on_right ? std::move(bk) : std::move(uk);
  r.b.scale_columns(MatrixView<const float>(s.view().block(0, 0, k, 1)), res.X.view());
  r.clock.lap("recompression");
}

/// randLRA with subspace refinement (LraRefinement::Subspace): Q = orth(A Omega) in the products'
/// precision, then each step replaces the basis by orth(A^T Q) or orth(A V), A times the basis in
/// FP16 (SHGEMM on Tensor Cores), and the factor on the other side of the last basis is A times
/// the basis as it is (TCEC): A ~ Q (A^T Q)^T or (A V) V^T, truncated to rank k where p > 0. Both
/// products are FP32-accurate: the Split kernels add each K slice's sum outside the Tensor Core,
/// whose own accumulation truncates. (Through A split into two stored FP16 terms and cuBLAS's FP16
/// GEMM, whose FP32 sums stay in the Tensor Cores, one step reached only 4.8e-5 at m = n = 35840,
/// k = 256 on the H100, against 6.4e-7.)
void subspace_lra(Run& r, MatrixView<const float> a, index_t k, const MatrixAllocator& outputs, LraResult& res) {
  const index_t m = a.rows(), n = a.cols(), l = sketch_columns(k, r.o.oversampling);
  // Without oversampling the two bases are X and Y themselves.
  Matrix<float> left = l > k ? Matrix<float>(r.b, m, l, "Q") : outputs(m, k, "X");
  Matrix<float> right = l > k ? Matrix<float>(r.b, n, l, "V") : outputs(n, k, "Y");
  range_basis(r, a, rounds_once(r) ? checked_half_of(r.b, a, 0) : Matrix<fp16>(), RngState{r.o.seed, 0},
              left.view());
  const ProductPrecision accurate = ProductPrecision::automatic();
  bool basis_on_right = false;
  for (int step = 0; step < r.o.refinements; ++step, ++r.report.refinements) {
    const MatrixView<float> from = basis_on_right ? right.view() : left.view();
    const MatrixView<float> to = basis_on_right ? left.view() : right.view();
    r.b.product(basis_on_right ? Op::N : Op::T, Op::N, 1.0f, a, half_basis(r.b, from), 0.0f, to, accurate);
    r.clock.lap("products");
    r.report.orthonormalizers.push_back(to_string(orthonormalize(r.b, to, r.o.orthonormalizer)));
    r.clock.lap("orthonormalisation");
    basis_on_right = !basis_on_right;
  }
  if (basis_on_right)
    r.b.product(Op::N, Op::N, 1.0f, a, right, 0.0f, left, accurate);
  else
    r.b.product(Op::T, Op::N, 1.0f, a, left, 0.0f, right, accurate);
  r.clock.lap("products");
  if (l > k) return truncate_to_rank(r, left, right, basis_on_right, k, outputs, res);
  res.X = std::move(left), res.Y = std::move(right);
}

/// E -= X Y^T with FP32 accuracy (Split on Tensor Cores, FP32 elsewhere).
void subtract(Run& r, MatrixView<const float> x, MatrixView<const float> y, MatrixView<float> e) {
  r.b.product(Op::N, Op::T, -1.0f, x, y, 1.0f, e, ProductPrecision::automatic());
  r.clock.lap("residual");
}

/// E := A - X Y^T with FP32 accuracy: the product written alone and A added in one pass, since a
/// product that reads its C runs about twice as long on the Tensor Core kernels for this shape
/// (bench_lra's residual rows: 21.8 against 11.2 ms at 35840^2, k = 256, on the H100; the kernel
/// notes say why); in place when E is A.
void first_residual(Run& r, MatrixView<const float> a, MatrixView<const float> x, MatrixView<const float> y,
                    MatrixView<float> e) {
  if (e.data() == a.data() && e.ld() == a.ld()) return subtract(r, x, y, e);
  r.b.product(Op::N, Op::T, -1.0f, x, y, 0.0f, e, ProductPrecision::automatic());
  r.b.add(1.0f, a, 1.0f, e);
  r.clock.lap("residual");
}

/// What the recompression adds to k for its range finder, and its power iterations: enough for
/// the rank-k part of X Y^T to within a few percent of the optimum truncation on decaying spectra
/// (test_lra), where the refined factors' spectrum beyond k is what randLRA left.
constexpr index_t kRecompressionOversampling = 10;
constexpr int kRecompressionPowerIterations = 1;

/// X Y^T (m x n, rank r = X.cols()) through its thin factors, never formed: P := X (Y^T Z) and
/// Y (X^T Z), FP32-accurate products.
class LowRankProduct final : public LinearOperator {
 public:
  LowRankProduct(Backend& b, MatrixView<const float> x, MatrixView<const float> y) : LinearOperator(b), x_(x), y_(y) {}

  index_t rows() const override { return x_.rows(); }
  index_t cols() const override { return y_.rows(); }
  void sketch(const RandomOperator& omega, MatrixView<float> q, std::string*) override {
    apply(omega.materialize<float>(b_), q);
  }
  void apply(MatrixView<const float> z, MatrixView<float> p) override { times(x_, y_, z, p); }
  Matrix<float> apply_transpose(MatrixView<const float> q) override {
    Matrix<float> t(b_, y_.rows(), q.cols(), "Y X^T Q");
    times(y_, x_, q, t.view());
    return t;
  }

 private:
  /// P := U (W^T Z).
  void times(MatrixView<const float> u, MatrixView<const float> w, MatrixView<const float> z, MatrixView<float> p) {
    Matrix<float> c(b_, w.cols(), z.cols(), "W^T Z");
    b_.product(Op::T, Op::N, 1.0f, w, z, 0.0f, c, ProductPrecision::automatic());
    b_.product(Op::N, Op::N, 1.0f, u, c, 0.0f, p, ProductPrecision::automatic());
  }

  MatrixView<const float> x_, y_;
};

/// X Y^T (rank r = x.cols()) truncated to rank k by a randomized SVD of the implicit product
/// (Halko, Martinsson & Tropp 2011, Algorithms 4.4 and 5.1), which never forms an r x r core:
/// Q = orth((X Y^T)(Y X^T))^q X Y^T Omega), B^T = Y (X^T Q) = U' S V'^T (svd_through_gram), so that
/// X := Q V'_k S_k and Y := U'_k. Costs O((m + n) r l) with l = k + 10, no m x n work.
void recompress(Run& r, MatrixView<const float> x, MatrixView<const float> y, index_t k, const MatrixAllocator& outputs,
                LraResult& res) {
  const index_t m = x.rows(), n = y.rows();
  const index_t l = std::min(x.cols(), sketch_columns(k, kRecompressionOversampling));
  LowRankProduct xy(r.b, x, y);
  RangeFinderOptions options;
  options.power_iterations = kRecompressionPowerIterations;
  options.orthonormalizer = r.o.orthonormalizer;
  const Matrix<float> q =
      RangeFinder(xy, nullptr, r.report.orthonormalizers).basis(l, options, RngState{r.o.seed, 1}, nullptr);
  const Matrix<float> t = xy.apply_transpose(q);  // B^T = Y X^T Q, n x l
  Matrix<float> u(r.b, n, l, "U'"), s(r.b, l, 1, "S"), v(r.b, l, l, "V'");
  svd_through_gram(r.b, t, u.view(), s.view(), v.view());
  res.X = outputs(m, k, "X"), res.Y = outputs(n, k, "Y");
  r.b.product(Op::N, Op::N, 1.0f, q, MatrixView<const float>(v.view().block(0, 0, l, k)), 0.0f, res.X,
              ProductPrecision::automatic());
  r.b.scale_columns(MatrixView<const float>(s.view().block(0, 0, k, 1)), res.X.view());
  r.b.copy(MatrixView<const float>(u.view().block(0, 0, n, k)), res.Y.view());
  r.clock.lap("recompression");
}

/// The power of two the FP16 products see E scaled by: its largest entry to 2^14, or with 16|16,
/// whose FP16 partial sums grow to E's row and column norms, ||E||_F to 2^14; within FP32's powers
/// of two, [2^-126, 2^127] (a residual whose largest entry is below 2^-113 is scaled by 2^127 and
/// no further). 0 for the FP32, TF32 and split products, which need none (and so skip the pass
/// over E that measures it).
int residual_scale(Run& r, MatrixView<const float> e) {
  int s = 0;
  if (r.o.products.fp16_sums) {
    const double norm = r.b.frobenius_norm(e);
    s = norm > 0 ? kFp16TargetExponent - static_cast<int>(std::ceil(std::log2(norm))) : 0;
  } else if (r.o.products.mode == ProductMode::FP16) {
    s = kFp16TargetExponent - largest_exponent(r.b, e);
  }
  return std::clamp(s, -126, 127);
}

/// randLRA(E) of rank 2k (Algorithm 5, step 3) into x2 and y2, whatever E's size: the FP16
/// products see E times residual_scale's power of two (no FP16 underflow or overflow). 16|32 and
/// 16|16 scale it on the way into FP16; 32|32 rounds E inside each product, so E itself is scaled
/// there, and back when `keep_e` (another step or a tolerance check reads it).
void refinement_step(Run& r, MatrixView<float> e, index_t k, const RngState& state, MatrixView<float> x2,
                     MatrixView<float> y2, bool keep_e) {
  const int s = residual_scale(r, e);
  if (rounds_once(r) || s == 0) return rand_lra(r, e, 2 * k, state, x2, y2, s);
  r.b.scale(std::ldexp(1.0f, s), e);
  rand_lra(r, e, 2 * k, state, x2, y2);
  r.b.scale(std::ldexp(1.0f, -s), y2);
  if (keep_e) r.b.scale(std::ldexp(1.0f, -s), e);
}

/// The refinement loop (Algorithm 5) on E = A - X Y^T. Returns the rank reached.
index_t refine(Run& r, MatrixView<float> e, MatrixView<float> x, MatrixView<float> y, index_t k, double norm_a,
               RngState state) {
  const index_t m = e.rows(), n = e.cols();
  index_t rank = k;
  for (int step = 0; step < r.o.refinements; ++step) {
    if (r.o.tolerance > 0) {
      r.report.residuals.push_back(r.b.frobenius_norm(e) / norm_a);
      if (r.report.residuals.back() <= r.o.tolerance) return rank;
    }
    state = state.next();
    const MatrixView<float> x2 = x.block(0, rank, m, 2 * k), y2 = y.block(0, rank, n, 2 * k);
    const bool keep_e = step + 1 < r.o.refinements || r.o.tolerance > 0;
    refinement_step(r, e, k, state, x2, y2, keep_e);
    rank += 2 * k;
    ++r.report.refinements;
    if (keep_e) subtract(r, x2, y2, e);
  }
  if (r.o.tolerance > 0 && r.o.refinements > 0) r.report.residuals.push_back(r.b.frobenius_norm(e) / norm_a);
  return rank;
}

}  // namespace

LraResult randomized_lra(Backend& b, MatrixView<const float> a, index_t k, const LraOptions& o,
                         const MatrixAllocator& out) {
  const index_t m = a.rows(), n = a.cols();
  require(o.refinements >= 0, "refinements", o.refinements, "must be >= 0");
  require(o.tolerance >= 0, "tolerance", o.tolerance, "must be >= 0");
  const bool subspace = o.refinement == LraRefinement::Subspace;
  require(!subspace || o.tolerance == 0, "tolerance", o.tolerance,
          "applies to residual refinement only: subspace refinement forms no residual to check");
  require_rank_arguments(m, n, k, o.oversampling, 0);
  if (o.refinements > 0 && !subspace) require_rank_arguments(m, n, 2 * k, o.oversampling, 0);
  require_space(a, b.memory_space(), "A");
  if (!o.residual_buffer.empty()) {
    require_shape(o.residual_buffer, m, n, "residual_buffer");
    require_space(o.residual_buffer, b.memory_space(), "residual_buffer");
  }
  require_lra_products(o.products);
  if (o.products == ProductPrecision::fp16()) require_fp16_range(b.exponent_histogram(a));
  const bool subspace_steps = subspace && o.refinements > 0;
  LraResult res;
  res.report.backend = b.description();
  LraOptions run_options = o;
  run_options.products = resolved_products(b, o.products, subspace_steps, res.report.products);
  Stopwatch clock(b, &res.report.phases, o.progress);
  Run run{b, run_options, per_product(run_options.products), res.report, clock};

  const RngState state{o.seed, 0};
  const MatrixAllocator outputs = out ? out : backend_matrices(b);
  if (subspace_steps) {
    subspace_lra(run, a, k, outputs, res);
    clock.finish();
    return res;
  }
  if (o.refinements == 0) {  // Algorithm 1 alone writes the results in place
    res.X = outputs(m, k, "X"), res.Y = outputs(n, k, "Y");
    rand_lra(run, a, k, state, res.X.view(), res.Y.view());
    clock.finish();
    return res;
  }
  const index_t most = k * (1 + 2 * static_cast<index_t>(o.refinements));
  Matrix<float> x(b, m, most, "X"), y(b, n, most, "Y");
  rand_lra(run, a, k, state, x.view().block(0, 0, m, k), y.view().block(0, 0, n, k));
  const double norm_a = o.tolerance > 0 ? b.frobenius_norm(a) : 0.0;
  Matrix<float> own;
  MatrixView<float> e = o.residual_buffer;
  if (e.empty()) own = Matrix<float>(b, m, n, "E"), e = own.view();
  first_residual(run, a, x.view().block(0, 0, m, k), y.view().block(0, 0, n, k), e);
  const index_t rank = refine(run, e, x.view(), y.view(), k, norm_a, state);
  if (rank > k && o.recompress) {
    recompress(run, x.view().block(0, 0, m, rank), y.view().block(0, 0, n, rank), k, outputs, res);
  } else {
    res.X = outputs(m, rank, "X"), res.Y = outputs(n, rank, "Y");
    b.copy(MatrixView<const float>(x.view().block(0, 0, m, rank)), res.X.view());
    b.copy(MatrixView<const float>(y.view().block(0, 0, n, rank)), res.Y.view());
  }
  clock.finish();
  return res;
}

}  // namespace randnla
