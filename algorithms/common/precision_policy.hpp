// The precision policy shared by the randomized algorithms: which product forms the sketch
// Y = A Omega and every other product with A, and on what a backend can run it.
#pragma once

#include <string>

#include "randnla/backend.hpp"
#include "randnla/enum_names.hpp"
#include "randnla/random_operator.hpp"

namespace randnla {

enum class SketchPrecision {
  FP32,        ///< Omega in FP32, SGEMM everywhere: the reference
  TF32,        ///< Omega in FP32, TF32 Tensor Core GEMM everywhere (faster, visibly less accurate)
  ShgemmFP16,  ///< Omega in FP16, SHGEMM on FP16 Tensor Cores; other products TCEC halfhalf
  ShgemmTF32,  ///< Omega in FP16, SHGEMM on TF32 Tensor Cores; other products TCEC tf32tf32
  Auto         ///< with Tensor Cores: Omega in FP16, SHGEMM/TCEC choosing FP16 or TF32 from A's
               ///< exponents; without (Capabilities::tensor_cores): FP32, since the split products
               ///< are only emulated there, several times slower than SGEMM
};

inline const EnumNames<SketchPrecision>& names_of(SketchPrecision) {
  static const EnumNames<SketchPrecision> names{{SketchPrecision::FP32, "fp32"},
                                                {SketchPrecision::TF32, "tf32"},
                                                {SketchPrecision::ShgemmFP16, "shgemm-fp16"},
                                                {SketchPrecision::ShgemmTF32, "shgemm-tf32"},
                                                {SketchPrecision::Auto, "auto"}};
  return names;
}

/// The product precision a sketch precision names: FP32 and TF32 as they are, SHGEMM-FP16/TF32 the
/// split products in that format, Auto the backend's Auto (Split with Tensor Cores, else FP32).
ProductPrecision product_precision(SketchPrecision s);

/// The products of one algorithm run, all in one precision, and the sketch Y = A Omega with Omega
/// stored in FP16 where the products are split (SHGEMM), else in FP32.
class Products {
 public:
  Products(Backend& b, SketchPrecision requested);

  /// Y := A * Omega (Omega n x l, stored for the product only, in FP16 for split products);
  /// names the kernel that ran in *kernel when non-null, and why Auto chose it.
  void sketch(MatrixView<const float> a, const RandomOperator& omega, MatrixView<float> y, std::string* kernel);

  /// C := alpha op(A) op(B) + beta C for two FP32 operands.
  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
            MatrixView<float> c) {
    b_.product(ta, tb, alpha, a, b, beta, c, precision_);
  }

 private:
  Backend& b_;
  ProductPrecision precision_;
  bool fp16_omega_;
};

}  // namespace randnla
