#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "randnla/common/checks.hpp"
#include "randnla/common/range_finder.hpp"
#include "tucker.hpp"

namespace randnla {
namespace {

void require_tucker_arguments(const PackedTensor& a, const std::vector<index_t>& ranks, const TuckerOptions& o) {
  const int modes = a.modes();
  require(modes >= 2, "A.modes", modes, "must be >= 2");
  require(static_cast<int>(ranks.size()) == modes, "ranks.size", ranks.size(),
          "must equal the tensor's number of modes N = " + std::to_string(modes));
  for (int n = 0; n < modes; ++n) {
    const index_t others = a.size() / std::max<index_t>(a.extents[n], 1);
    const index_t most = std::min(a.extents[n], others);
    require(ranks[n] >= 1 && ranks[n] <= most, "ranks[" + std::to_string(n) + "]", ranks[n],
            "must lie in 1..min(I_" + std::to_string(n) + ", product of the other extents) = " + std::to_string(most));
  }
  require(o.oversampling >= 0, "oversampling", o.oversampling, "must be >= 0");
  require(o.power_iterations >= 0, "power_iterations", o.power_iterations, "must be >= 0");
  require(o.power_iterations == 0 || o.variant != TuckerVariant::SinglePass, "power_iterations", o.power_iterations,
          "must be 0 for the single-pass variant (each power iteration reads A again)");
  require(o.core_sketch_factor >= 1, "core_sketch_factor", o.core_sketch_factor, "must be >= 1");
}

/// l_i = min(J_i + p, I_i, the product of the other extents): the oversampling stops at the
/// unfolding's size (documented in TuckerOptions::oversampling).
std::vector<index_t> mode_sketch_columns(const PackedTensor& a, const std::vector<index_t>& ranks, index_t p) {
  std::vector<index_t> l(ranks.size());
  for (int n = 0; n < a.modes(); ++n)
    l[n] = std::min({sketch_columns(ranks[n], p), a.extents[n], a.size() / a.extents[n]});
  return l;
}

/// One run's state: the backend, its products, the report and the clock. A queued run does not
/// wait for the device until its end: its orthonormalisations are queued (orthonormalize_queued,
/// their verdicts read by `held`) and it checks no input on the way (a non-finite sketch breaks
/// its CholeskyQR or makes the core non-finite, which `held` sees too).
struct Run {
  Backend& b;
  const TuckerOptions& o;
  Products prod;
  TuckerReport& rep;
  Stopwatch clock;
  bool queued;
  std::vector<OrthonormalizationVerdict> verdicts;
  std::function<std::string()> sketch_kernel;  // the first sketch's, named at the end (no wait on the way)

  Run(Backend& backend, const TuckerOptions& options, TuckerReport& report, bool queue)
      : b(backend), o(options), prod(backend, options.products), rep(report),
        clock(backend, &report.phases, options.progress), queued(queue) {}

  /// Queued (its verdict read by `held`, returning "") or at once, returning the method that ran.
  std::string orthonormalize_queued_or_now(MatrixView<float> y, Orthonormalizer method) {
    if (!queued) return to_string(orthonormalize(b, y, method));
    verdicts.push_back(orthonormalize_queued(b, y, method));
    return std::string();
  }

  /// Whether every queued orthonormalisation held and the core is finite (waits for the device);
  /// the methods go to the report. The core's check comes first: its one wait covers the whole
  /// run, so the verdicts are read without another.
  bool held(const OwnedTensor& core) {
    const bool finite = b.exponent_histogram(core.view().matrix(1)).nonfinite() == 0;
    for (OrthonormalizationVerdict& v : verdicts) {
      const std::optional<Orthonormalizer> ran = v();
      if (!ran) return false;
      rep.orthonormalizers.push_back(to_string(*ran));
    }
    return finite;
  }

  /// Q (I_n x l) := an orthonormal basis of (X_(n) X_(n)^T)^q X_(n) Omega (Halko, Martinsson &
  /// Tropp, Alg. 4.4, on the mode-n unfolding), Omega drawn from `state`. The first sketch of A
  /// also checks A for non-finite entries, as rsvd does.
  Matrix<float> range(const PackedTensor& x, int n, index_t l, const RngState& state, bool first);

  void check_input(const PackedTensor& x, const Matrix<float>& w) {
    if (queued) return;
    require_finite_sketch(b, x.matrix(1), w);
    clock.lap("input check");
  }
};

/// The mode-n unfolding X_(n) (I_n x the product of the other extents) of a run's tensor, read in
/// place: the first and last modes as matrices of X, the middle ones as batches over its slices.
/// Its orthonormalisations are the run's (queued or not).
class ModeUnfolding final : public LinearOperator {
 public:
  ModeUnfolding(Run& run, const PackedTensor& x, int n, bool first)
      : LinearOperator(run.b), run_(run), x_(x), n_(n), first_(first) {}

  index_t rows() const override { return x_.extents[n_]; }
  index_t cols() const override { return x_.size() / x_.extents[n_]; }
  void sketch(const RandomOperator& omega, MatrixView<float> y, std::string*) override {
    const StoredOperator stored = run_.prod.store(omega);
    unfolding_times(run_.prod, x_, n_, stored, 0.0f, y, first_ ? &run_.sketch_kernel : nullptr);
  }
  void apply(MatrixView<const float> z, MatrixView<float> y) override {
    unfolding_times(run_.prod, x_, n_, mode_blocks(x_, n_, z), 0.0f, y);
  }
  Matrix<float> apply_transpose(MatrixView<const float> y) override {
    return unfolding_transpose_times(b_, run_.prod, x_, n_, y);
  }
  std::string orthonormalize_range(MatrixView<float> y, Orthonormalizer method) override {
    return run_.orthonormalize_queued_or_now(y, method);
  }
  std::string orthonormalize_domain(MatrixView<float> z, Orthonormalizer method) override {
    return run_.orthonormalize_queued_or_now(z, method);
  }
  bool check_sketch(MatrixView<const float> y) override {
    if (!first_ || run_.queued) return false;
    require_finite_sketch(b_, x_.matrix(1), y);
    return true;
  }

 private:
  Run& run_;
  const PackedTensor& x_;
  int n_;
  bool first_;
};

Matrix<float> Run::range(const PackedTensor& x, int n, index_t l, const RngState& state, bool first) {
  ModeUnfolding unfolding(*this, x, n, first);
  RangeFinder finder(unfolding, &clock, rep.orthonormalizers);
  return finder.basis(l, range_options(o), state, nullptr);
}

RngState omega_state(const TuckerOptions& o, int n) { return RngState{o.seed, static_cast<std::uint64_t>(n)}; }

/// Every Q_i from A, then g = A x_1 Q_1^T ... x_N Q_N^T by N contractions.
OwnedTensor two_pass(Run& run, const PackedTensor& a, const std::vector<index_t>& l, std::vector<Matrix<float>>& q) {
  for (int n = 0; n < a.modes(); ++n) q.push_back(run.range(a, n, l[n], omega_state(run.o, n), n == 0));
  OwnedTensor x;
  for (int n = 0; n < a.modes(); ++n) x = contract_first_mode(run.b, run.prod, n == 0 ? a : x.view(), q[n]);
  run.clock.lap("core");
  return x;
}

/// Mode n sketched from A x_1 Q_1^T ... x_{n-1} Q_{n-1}^T, in which it is the first mode.
OwnedTensor sequentially_truncated(Run& run, const PackedTensor& a, const std::vector<index_t>& l,
                                   std::vector<Matrix<float>>& q) {
  OwnedTensor x;
  for (int n = 0; n < a.modes(); ++n) {
    const PackedTensor xn = n == 0 ? a : x.view();
    q.push_back(run.range(xn, 0, l[n], omega_state(run.o, n), n == 0));
    x = contract_first_mode(run.b, run.prod, xn, q[n]);
    run.clock.lap("core");
  }
  return x;
}

/// M = ((Phi^T Q)^+)^T (s x l), through the QR of Phi^T Q = Q' R: M = Q' R^{-T}.
Matrix<float> pseudo_inverse_transpose(Run& run, const StoredOperator& phi, MatrixView<const float> q) {
  Backend& b = run.b;
  const index_t s = phi.cols(), l = q.cols();
  Matrix<float> pt(b, l, s, "Q^T Phi"), p(b, s, l, "Phi^T Q"), tau(b, l, 1, "tau"), r(b, l, l, "R");
  run.prod.times(Op::T, 1.0f, q, phi, 0.0f, pt);
  b.transpose(pt, p.view());
  b.qr(p.view(), tau.view());
  b.copy(MatrixView<const float>(p.view()).block(0, 0, l, l), r.view());
  b.form_q(p.view(), tau);
  Matrix<double> md(b, s, l, "M"), rd(b, l, l, "R");
  b.convert(p, md.view());
  b.convert(r, rd.view());
  b.triangular_solve(Side::Right, Op::T, 1.0, rd, md.view());
  Matrix<float> m(b, s, l, "M");
  b.convert(md, m.view());
  return m;
}

/// Sun, Guo, Luo, Tropp & Udell (2020), Alg. 1 (sketches) and the two-sided recovery: every mode
/// sketch V_i = A_(i) Omega_i and the core sketch H = A x_i Phi_i^T from one read of A, slab by
/// slab along its last mode; Q_i = qr(V_i), g = H x_i (Phi_i^T Q_i)^+.
OwnedTensor single_pass(Run& run, const PackedTensor& a, const std::vector<index_t>& l, std::vector<Matrix<float>>& q) {
  Backend& b = run.b;
  const int modes = a.modes(), last = modes - 1;
  std::vector<StoredOperator> phi;
  std::vector<index_t> s(modes);
  for (int n = 0; n < modes; ++n) {
    s[n] = std::min(run.o.core_sketch_factor * l[n] + 1, a.extents[n]);
    phi.push_back(run.prod.store(RandomOperator(RandomDistribution{a.extents[n], s[n]}, omega_state(run.o, modes + n))));
  }
  std::vector<Matrix<float>> v;
  for (int n = 0; n < modes; ++n) v.emplace_back(b, a.extents[n], l[n], "V");
  const RandomOperator omega_last(RandomDistribution{a.before(last), l[last]}, omega_state(run.o, last));
  const StoredOperator stored_last = run.prod.store(omega_last);
  index_t cells = 1;
  for (int n = 0; n < modes; ++n) cells *= s[n];
  OwnedTensor h{Matrix<float>(b, cells / s[last], s[last], "H"), s};
  b.scale(0.0f, h.storage.view());
  const index_t slice = a.before(last) * static_cast<index_t>(sizeof(float));
  const index_t per_slab = run.o.slab_bytes == 0 ? a.extents[last]
                                                 : std::max<index_t>(1, static_cast<index_t>(run.o.slab_bytes) / slice);
  for (index_t r0 = 0; r0 < a.extents[last]; r0 += per_slab) {
    const PackedTensor slab = a.last_mode_slab(r0, std::min(per_slab, a.extents[last] - r0));
    const index_t c = slab.extents[last];
    for (int n = 0; n < last; ++n) {
      const index_t rows = slab.size() / slab.extents[n];  // this slab's rows of Omega_n
      const RandomOperator omega(RandomDistribution{a.size() / a.extents[n], l[n]}, omega_state(run.o, n));
      unfolding_times(run.prod, slab, n, run.prod.store(omega, r0 * (rows / c), rows), r0 == 0 ? 0.0f : 1.0f, v[n],
                      n == 0 && r0 == 0 ? &run.sketch_kernel : nullptr);
    }
    run.prod.times(Op::T, 1.0f, slab.matrix(last), stored_last, 0.0f, v[last].view().block(r0, 0, c, l[last]));
    OwnedTensor y;
    for (int n = 0; n < last; ++n) y = contract_first_mode(b, run.prod, n == 0 ? slab : y.view(), phi[n]);
    StoredOperator phi_rows;
    if (phi[last].is_fp16()) {
      phi_rows.half = Matrix<fp16>(std::shared_ptr<void>(), phi[last].half.view().block(r0, 0, c, s[last]));
    } else {
      phi_rows.single = Matrix<float>(std::shared_ptr<void>(), phi[last].single.view().block(r0, 0, c, s[last]));
    }
    add_contract_first_mode(run.prod, y.view(), phi_rows, h);
  }
  run.clock.lap("projection");
  run.check_input(a, v[0]);
  for (int n = 0; n < modes; ++n) {
    const std::string method = run.orthonormalize_queued_or_now(v[n].view(), run.o.orthonormalizer);
    if (!method.empty()) run.rep.orthonormalizers.push_back(method);
    q.push_back(std::move(v[n]));
  }
  run.clock.lap("orthonormalisation");
  OwnedTensor x = std::move(h);
  for (int n = 0; n < modes; ++n) {
    const Matrix<float> m = pseudo_inverse_transpose(run, phi[n], q[n]);
    x = contract_first_mode(b, run.prod, x.view(), m);
  }
  run.clock.lap("core");
  return x;
}

/// The l_1 x ... x l_N core truncated to J_1 x ... x J_N by its own sequentially truncated HOSVD:
/// U_i = the leading J_i eigenvectors of the FP64 Gram matrix of the mode-i unfolding, g := g x_i
/// U_i^T, Q_i := Q_i U_i.
OwnedTensor truncate(Run& run, OwnedTensor x, const std::vector<index_t>& ranks, std::vector<Matrix<float>>& q) {
  Backend& b = run.b;
  Products exact(b, ProductPrecision::fp32());
  for (int n = 0; n < static_cast<int>(ranks.size()); ++n) {
    const MatrixView<const float> x0 = x.view().matrix(1);
    const index_t l = x0.rows();
    Matrix<double> xd(b, l, x0.cols(), "X"), g(b, l, l, "G"), w(b, l, 1, "w");
    b.convert(x0, xd.view());
    b.product(Op::N, Op::T, 1.0, xd, xd, 0.0, g.view());
    b.symmetric_eig(g.view(), w.view());
    Matrix<float> u(b, l, ranks[n], "U");
    b.convert(MatrixView<const double>(g.view()).block(0, 0, l, ranks[n]), u.view());
    x = contract_first_mode(b, exact, x.view(), u);
    Matrix<float> qu(b, q[n].rows(), ranks[n], "Q");
    b.product(Op::N, Op::N, 1.0f, q[n], u, 0.0f, qu, ProductPrecision::fp32());
    q[n] = std::move(qu);
  }
  run.clock.lap("truncation");
  return x;
}

}  // namespace

TuckerResult rp_hosvd(Backend& b, const PackedTensor& a, const std::vector<index_t>& ranks, const TuckerOptions& o,
                      const MatrixAllocator& outputs) {
  require_space(a.matrix(1), b.memory_space(), "A");
  require_tucker_arguments(a, ranks, o);
  TuckerResult res;
  const std::vector<index_t> l = mode_sketch_columns(a, ranks, o.oversampling);
  std::vector<Matrix<float>> q;
  OwnedTensor core;
  std::unique_ptr<Run> run;
  // Queued first: no wait for the device between the modes, whose small products and
  // orthonormalisations then run back to back. Where a verdict did not hold (a breakdown, a
  // non-finite input), again waiting at each step, with the fallbacks and the input check.
  for (const bool queued : {true, false}) {
    run.reset();  // a run that did not hold adds its phases to its report as it goes
    res.report = TuckerReport{};
    res.report.backend = b.description();
    res.report.sketch_columns = l;
    q.clear();
    run = std::make_unique<Run>(b, o, res.report, queued);
    core = o.variant == TuckerVariant::TwoPass ? two_pass(*run, a, l, q)
           : o.variant == TuckerVariant::SequentiallyTruncated ? sequentially_truncated(*run, a, l, q)
                                                                : single_pass(*run, a, l, q);
    if (l != ranks) core = truncate(*run, std::move(core), ranks, q);
    if (!queued || run->held(core)) break;
  }
  if (run->sketch_kernel) res.report.sketch_kernel = run->sketch_kernel();

  res.core_extents = ranks;
  const index_t rest = core.view().size() / ranks[0];
  if (!outputs) {  // the run's own matrices are the results
    res.core = core.storage.reshaped(ranks[0], rest, "core");
    res.factors = std::move(q);
  } else {
    res.core = outputs(ranks[0], rest, "core");
    b.copy(MatrixView<const float>(core.storage.reshaped(ranks[0], rest, "core")), res.core.view());
    for (int n = 0; n < a.modes(); ++n) {
      res.factors.push_back(outputs(a.extents[n], ranks[n], "Q" + std::to_string(n)));
      b.copy(q[n].view(), res.factors.back().view());
    }
  }
  run->clock.finish();
  return res;
}

Matrix<float> tucker_reconstruct(Backend& b, const TuckerResult& t) {
  Products exact(b, ProductPrecision::fp32());
  OwnedTensor x{Matrix<float>(std::shared_ptr<void>(), t.core.view()), t.core_extents};
  for (const Matrix<float>& q : t.factors) x = contract_first_mode(b, exact, x.view(), q, Op::T);
  return std::move(x.storage);
}

double tucker_relative_error(Backend& b, const PackedTensor& a, const TuckerResult& t) {
  Matrix<float> r = tucker_reconstruct(b, t);
  const MatrixView<const float> am = a.matrix(1);
  const MatrixView<float> rm(r.data(), am.rows(), am.cols(), am.ld(), b.memory_space());
  b.add(1.0f, am, -1.0f, rm);
  const double norm_a = b.frobenius_norm(am);
  return norm_a > 0 ? b.frobenius_norm(rm) / norm_a : 0.0;
}

}  // namespace randnla
