// Very sparse random projection (sparse_sign_projection.hpp).
#include "randnla/sparse_projection/sparse_sign_projection.hpp"

#include <cmath>

#include "randnla/common/checks.hpp"
#include "randnla/report.hpp"

namespace randnla {
namespace {

double density_of(index_t d, const SparseProjectionOptions& o) {
  switch (o.density) {
    case SparseDensity::VerySparse: return 1.0 / std::sqrt(static_cast<double>(d));
    case SparseDensity::Achlioptas: return 1.0 / 3.0;
    case SparseDensity::Given: break;
  }
  return o.density_value;
}

}  // namespace

SparseSignOperator sparse_sign_operator(index_t k, index_t d, const SparseProjectionOptions& o) {
  require(k > 0, "k", k, "must be > 0");
  const double p = density_of(d, o);
  require(p > 0.0 && p <= 1.0, "density", p, "must lie in (0, 1]");
  const float value = o.scaling == SparseScaling::None ? 1.0f : static_cast<float>(1.0 / std::sqrt(p * k));
  return SparseSignOperator(k, d, p, value, o.seed);
}

SparseProjectionResult sparse_sign_projection(Backend& b, MatrixView<const float> a, index_t k,
                                              const SparseProjectionOptions& o, const MatrixAllocator& out) {
  require(k > 0, "k", k, "must be > 0");
  require(!a.empty(), "A", std::to_string(a.rows()) + "x" + std::to_string(a.cols()), "must not be empty");
  require_space(a, b.memory_space(), "A");
  const bool columns = o.layout == SampleLayout::Columns;
  const SparseSignOperator s = sparse_sign_operator(k, columns ? a.rows() : a.cols(), o);
  SparseProjectionResult res;
  res.report.backend = b.description();
  res.report.density = s.density;
  res.report.value = s.value;
  Stopwatch clock(b);
  res.Y = (out ? out : backend_matrices(b))(k, columns ? a.cols() : a.rows(), "Y");
  res.report.kernel = b.ops<SparseProjectionOps>().project(s, a, o.layout, o.kernel, res.Y.view());
  clock.lap("projection");
  const bool overflowed = b.exponent_histogram(res.Y).nonfinite() > 0;  // one wait for both
  res.report.ms = clock.finish();
  if (overflowed) {
    require_no_nonfinite_entries(b, a);
    throw InvalidArgument("A", "a matrix with ||A||_F = " + detail::to_text(b.frobenius_norm(a)),
                          "is too large: S A overflows FP32 (scale A down)");
  }
  return res;
}

}  // namespace randnla
