#include "precision_policy.hpp"

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

void Products::sketch(MatrixView<const float> a, const RandomOperator& omega, MatrixView<float> y,
                      std::string* kernel) {
  ProductReport report;
  ProductReport* r = kernel ? &report : nullptr;
  if (fp16_omega_) {
    const Matrix<fp16> stored = omega.materialize<fp16>(b_);
    b_.product(Op::N, Op::N, 1.0f, a, stored, 0.0f, y, precision_, r);
  } else {
    const Matrix<float> stored = omega.materialize<float>(b_);
    b_.product(Op::N, Op::N, 1.0f, a, stored, 0.0f, y, precision_, r);
  }
  if (!kernel) return;
  *kernel = describe(report, fp16_omega_);
  if (report.mode == ProductMode::Split && report.a_format == TensorCore::TF32 &&
      precision_.split == TensorCore::Auto)
    *kernel += " (auto: A holds Inf/NaN or elements more than 2^38 below its largest, beyond FP16's range)";
}

}  // namespace randnla
