// The precision policy shared by the randomized algorithms: which product forms the sketch
// Y = A Omega and every other product with A, and on what a backend can run it.
#pragma once

#include <string>

#include "randnla/backend.hpp"
#include "randnla/enum_names.hpp"

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

/// The products of one algorithm run, all in one precision: the requested one, or for Auto the
/// one the backend runs best.
class Products {
 public:
  Products(Backend& b, SketchPrecision requested);

  /// Y := A * Omega(spec) (Omega n x l, drawn on the backend); names the kernel that ran in
  /// *kernel when non-null, and why Auto chose it.
  void sketch(MatrixView<const float> a, const RandomSpec& spec, index_t l, MatrixView<float> y, std::string* kernel);

  /// C := alpha op(A) op(B) + beta C for two FP32 operands.
  void gemm(Op ta, Op tb, float alpha, MatrixView<const float> a, MatrixView<const float> b, float beta,
            MatrixView<float> c);

 private:
  bool fp16_omega() const { return s_ != SketchPrecision::FP32 && s_ != SketchPrecision::TF32; }
  TensorCore tensor_core() const;
  GemmPrecision baseline() const { return s_ == SketchPrecision::TF32 ? GemmPrecision::TF32 : GemmPrecision::FP32; }

  Backend& b_;
  SketchPrecision s_;
  std::string reason_;  ///< why Auto resolved as it did, for the report
};

}  // namespace randnla
