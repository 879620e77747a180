#include "precision_policy.hpp"

namespace randnla {

Products::Products(Backend& b, SketchPrecision requested) : b_(b), s_(requested) {
  if (requested == SketchPrecision::Auto && !b.capabilities().tensor_cores) {
    s_ = SketchPrecision::FP32;
    reason_ = " (auto: " + b.description() + " has no Tensor Cores)";
  }
}

TensorCore Products::tensor_core() const {
  return s_ == SketchPrecision::ShgemmFP16 ? TensorCore::FP16
                                           : s_ == SketchPrecision::ShgemmTF32 ? TensorCore::TF32 : TensorCore::Auto;
}

void Products::sketch(MatrixView<const float> a, const RandomSpec& spec, index_t l, MatrixView<float> y,
                      std::string* kernel) {
  if (!fp16_omega()) {
    Matrix<float> omega(b_, a.cols(), l, "Omega");
    b_.fill_random(spec, omega.view());
    b_.gemm(Op::N, Op::N, 1.0f, a, omega, 0.0f, y, baseline());
    if (kernel) *kernel = (s_ == SketchPrecision::FP32 ? "sgemm fp32" : "gemm tf32-TC") + reason_;
    return;
  }
  Matrix<fp16> omega(b_, a.cols(), l, "Omega");
  b_.fill_random(spec, omega.view());
  GemmReport r;
  b_.shgemm(Op::N, Op::N, 1.0f, a, omega, 0.0f, y, tensor_core(), kernel ? &r : nullptr);
  if (!kernel) return;
  *kernel = std::string("shgemm ") + to_string(r.a_format) + "-TC";
  if (r.a_format == TensorCore::FP16 && r.a_scale_exponent != 0)
    *kernel += " (A scaled by 2^" + std::to_string(r.a_scale_exponent) + ")";
  if (r.a_format == TensorCore::TF32 && s_ != SketchPrecision::ShgemmTF32)
    *kernel += " (auto: A holds Inf/NaN or elements more than 2^38 below its largest, beyond FP16's range)";
}

void Products::gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> bm, float beta,
                    MatrixView<float> c) {
  if (fp16_omega())
    b_.tcec_sgemm(ta, tb, alpha, a, bm, beta, c, tensor_core());
  else
    b_.gemm(ta, tb, alpha, a, bm, beta, c, baseline());
}

}  // namespace randnla
