// The portable conversion family: element conversions by Kokkos loops.
#pragma once

#include "portable/reductions/portable_reductions.hpp"
#include "portable/context/portable_context.hpp"
#include "randnla/ops/conversions.hpp"

namespace randnla {
namespace portable {


template <class Exec>
class PortableConversions : public virtual ConversionOps, public virtual PortableContext<Exec> {
 public:
  using PortableContext<Exec>::exec_;

  void do_convert(MatrixView<const float> s, MatrixView<double> d) override { portable::map(exec_, s, d, ToDouble{}); }
  void do_convert(MatrixView<const double> s, MatrixView<float> d) override { portable::map(exec_, s, d, ToFloat{}); }
  void do_convert(MatrixView<const float> s, MatrixView<fp16> d) override { portable::map(exec_, s, d, ToHalf{}); }
  void do_convert(MatrixView<const fp16> s, MatrixView<float> d) override { portable::map(exec_, s, d, ToFloat{}); }
  ExponentHistogram do_convert_measured(MatrixView<const float> s, MatrixView<fp16> d, float scale) override {
    portable::map(exec_, s, d, ToHalf{scale});
    return portable::exponent_histogram(exec_, s);
  }
};

}  // namespace portable
}  // namespace randnla
