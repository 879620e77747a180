#include "precision_policy.hpp"

#include <memory>
#include <utility>

namespace randnla {

void require_rounded_per_product(const ProductPrecision& p, const char* parameter) {
  require(!p.rounded_once, parameter, to_string(p), "rounds A once, which only randomized_lra does: use fp16");
}

namespace {
ProductPrecision resolved(Backend& b, ProductPrecision requested, std::string& why) {
  require_rounded_per_product(requested, "products");
  ProductReport report;
  const ProductPrecision p = b.resolve(requested, &report);
  why = report.why;
  return p;
}
}  // namespace

Products::Products(Backend& b, ProductPrecision requested)
    : b_(b), precision_(resolved(b, requested, why_)), fp16_omega_(precision_.mode == ProductMode::Split) {}

StoredOperator Products::store(const RandomOperator& omega, index_t row0, index_t rows) {
  if (rows < 0) rows = omega.distribution().rows - row0;
  StoredOperator s;
  if (fp16_omega_) {
    s.half = Matrix<fp16>(b_, rows, omega.distribution().cols, "Omega");
    omega.fill(b_, s.half.view(), row0);
  } else {
    s.single = Matrix<float>(b_, rows, omega.distribution().cols, "Omega");
    omega.fill(b_, s.single.view(), row0);
  }
  return s;
}

void Products::times(Op ta, float alpha, MatrixView<const float> a, const StoredOperator& omega, float beta,
                     MatrixView<float> c, std::string* kernel) {
  ProductReport report;
  times_reported(ta, alpha, a, omega, beta, c, kernel ? &report : nullptr);
  if (kernel) *kernel = kernel_name(report, fp16_omega_, precision_.split, why_);
}

std::function<std::string()> Products::times_named_later(Op ta, float alpha, MatrixView<const float> a,
                                                         const StoredOperator& omega, float beta,
                                                         MatrixView<float> c) {
  auto report = std::make_shared<ProductReport>();
  report->settle_later = true;
  times_reported(ta, alpha, a, omega, beta, c, report.get());
  return [report, fp16_omega = fp16_omega_, split = precision_.split, why = why_] {
    if (report->settle) std::exchange(report->settle, nullptr)(*report);
    return kernel_name(*report, fp16_omega, split, why);
  };
}

void Products::times_reported(Op ta, float alpha, MatrixView<const float> a, const StoredOperator& omega, float beta,
                              MatrixView<float> c, ProductReport* report) {
  if (omega.is_fp16())
    b_.product(ta, Op::N, alpha, a, omega.half, beta, c, precision_, report);
  else
    b_.product(ta, Op::N, alpha, a, omega.single, beta, c, precision_, report);
}

std::string Products::kernel_name(const ProductReport& report, bool fp16_omega, TensorCore split,
                                  const std::string& why) {
  std::string name = describe(report, fp16_omega);
  if (!why.empty()) name += " (" + why + ")";
  if (report.mode == ProductMode::Split && report.a_format == TensorCore::TF32 && split == TensorCore::Auto)
    name += " (auto: A holds Inf/NaN or elements more than 2^38 below its largest, beyond FP16's range)";
  return name;
}

}  // namespace randnla
