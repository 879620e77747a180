#include "precision_policy.hpp"

#include <memory>
#include <utility>

namespace randnla {

ProductPrecision product_precision(SketchPrecision s) {
  switch (s) {
    case SketchPrecision::FP32: return ProductPrecision::fp32();
    case SketchPrecision::TF32: return ProductPrecision::tf32();
    case SketchPrecision::ShgemmFP16: return ProductPrecision::split_in(TensorCore::FP16);
    case SketchPrecision::ShgemmTF32: return ProductPrecision::split_in(TensorCore::TF32);
    default: return ProductPrecision::automatic();
  }
}

Products::Products(Backend& b, SketchPrecision requested)
    : b_(b),
      precision_(product_precision(requested)),
      fp16_omega_(precision_.mode == ProductMode::Split ||
                  (precision_.mode == ProductMode::Auto && b.capabilities().tensor_cores)) {}

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

void Products::sketch(MatrixView<const float> a, const RandomOperator& omega, MatrixView<float> y,
                      std::string* kernel) {
  times(Op::N, 1.0f, a, store(omega), 0.0f, y, kernel);
}

void Products::times(Op ta, float alpha, MatrixView<const float> a, const StoredOperator& omega, float beta,
                     MatrixView<float> c, std::string* kernel) {
  ProductReport report;
  times_reported(ta, alpha, a, omega, beta, c, kernel ? &report : nullptr);
  if (kernel) *kernel = kernel_name(report, fp16_omega_, precision_.split);
}

std::function<std::string()> Products::times_named_later(Op ta, float alpha, MatrixView<const float> a,
                                                         const StoredOperator& omega, float beta,
                                                         MatrixView<float> c) {
  auto report = std::make_shared<ProductReport>();
  report->settle_later = true;
  times_reported(ta, alpha, a, omega, beta, c, report.get());
  return [report, fp16_omega = fp16_omega_, split = precision_.split] {
    if (report->settle) std::exchange(report->settle, nullptr)(*report);
    return kernel_name(*report, fp16_omega, split);
  };
}

void Products::times_reported(Op ta, float alpha, MatrixView<const float> a, const StoredOperator& omega, float beta,
                              MatrixView<float> c, ProductReport* report) {
  if (omega.is_fp16())
    b_.product(ta, Op::N, alpha, a, omega.half, beta, c, precision_, report);
  else
    b_.product(ta, Op::N, alpha, a, omega.single, beta, c, precision_, report);
}

std::string Products::kernel_name(const ProductReport& report, bool fp16_omega, TensorCore split) {
  std::string name = describe(report, fp16_omega);
  if (report.mode == ProductMode::Split && report.a_format == TensorCore::TF32 && split == TensorCore::Auto)
    name += " (auto: A holds Inf/NaN or elements more than 2^38 below its largest, beyond FP16's range)";
  return name;
}

}  // namespace randnla
