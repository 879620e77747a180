// GEMM benchmark: TFLOP/s (2mnk / median time of 10 runs) and relative error against an FP64
// cuBLAS DGEMM reference, for every variant and baseline, on the square and RSVD shapes.
// Usage: bench_gemm [--quick]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "randnla/backends.hpp"
#include "bench_common.hpp"

using namespace randnla;

namespace {

double relative_error(Backend& b, MatrixView<const float> c, MatrixView<const double> ref) {
  Matrix<double> cd(b, c.rows(), c.cols());
  b.convert(c, cd.view());
  auto host = make_backend(BackendKind::Host);
  Matrix<double> hc(*host, c.rows(), c.cols()), hr(*host, c.rows(), c.cols());
  b.copy(cd.view(), hc.view());
  b.copy(ref, hr.view());
  double num = 0, den = 0;
  for (index_t i = 0; i < c.size(); ++i) {
    const double d = hc.data()[i] - hr.data()[i];
    num += d * d;
    den += hr.data()[i] * hr.data()[i];
  }
  return std::sqrt(num / den);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (!cuda_available()) {
    std::printf("bench_gemm: no GPU, nothing to measure\n");
    return 0;
  }
  auto b = make_backend(BackendKind::Cuda);
  std::printf("device: %s\n", b->description().c_str());
  struct Shape { index_t m, n, k; const char* name; };
  std::vector<Shape> shapes = {{8192, 8192, 8192, "square8192"}, {16384, 256, 16384, "proj16384r256"},
                               {16384, 512, 16384, "proj16384r512"}, {32768, 256, 32768, "proj32768r256"},
                               {32768, 512, 32768, "proj32768r512"}};
  if (quick) shapes.resize(2);
  std::printf("%-15s %-22s %10s %10s %10s\n", "shape", "variant", "ms", "TFLOP/s", "relerr");
  for (const Shape& s : shapes) {
    Matrix<float> a(*b, s.m, s.k, "A"), bf(*b, s.k, s.n, "B"), c(*b, s.m, s.n, "C");
    Matrix<fp16> bh(*b, s.k, s.n, "B16");
    b->fill_random(RandomSpec{Distribution::Gaussian, 1, 0}, a.view());
    b->fill_random(RandomSpec{Distribution::Gaussian, 2, 0}, bh.view());
    {  // B exactly FP16-representable, so every variant multiplies the same numbers
      auto host = make_backend(BackendKind::Host);
      Matrix<fp16> h16(*host, s.k, s.n);
      Matrix<float> h32(*host, s.k, s.n);
      b->copy(bh.view(), h16.view());
      for (index_t i = 0; i < h16.view().size(); ++i) h32.data()[i] = to_float(h16.data()[i]);
      b->copy(h32.view(), bf.view());
    }
    Matrix<double> ad(*b, s.m, s.k), bd(*b, s.k, s.n), ref(*b, s.m, s.n);
    b->convert(a.view(), ad.view());
    b->convert(bf.view(), bd.view());
    b->product(Op::N, Op::N, 1.0, ad, bd, 0.0, ref);
    ad = Matrix<double>();
    bd = Matrix<double>();
    const double flops = 2.0 * s.m * s.n * s.k;
    auto run = [&](const char* name, const std::function<void()>& f) {
      const double ms = bench::median_ms(*b, f);
      const double err = relative_error(*b, c.view(), ref.view());
      std::printf("%-15s %-22s %10.3f %10.1f %10.2e\n", s.name, name, ms, flops / ms / 1e9, err);
      std::fflush(stdout);
    };
    run("cublas sgemm", [&] { b->product(Op::N, Op::N, 1.0f, a, bf, 0.0f, c, ProductPrecision::fp32()); });
    run("cublas tf32", [&] { b->product(Op::N, Op::N, 1.0f, a, bf, 0.0f, c, ProductPrecision::tf32()); });
    run("cublas fp16(+convert)", [&] { b->product(Op::N, Op::N, 1.0f, a, bf, 0.0f, c, ProductPrecision::fp16()); });
    for (TensorCore tc : {TensorCore::FP16, TensorCore::TF32, TensorCore::Auto}) {
      run((std::string("shgemm ") + to_string(tc)).c_str(),
          [&] { b->product(Op::N, Op::N, 1.0f, a, bh, 0.0f, c, ProductPrecision::split_in(tc)); });
      run((std::string("tcec ") + to_string(tc)).c_str(),
          [&] { b->product(Op::N, Op::N, 1.0f, a, bf, 0.0f, c, ProductPrecision::split_in(tc)); });
    }
  }
  return 0;
}
