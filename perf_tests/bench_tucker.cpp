// RP-HOSVD on the H100 (Ootomo & Yokota, Sec. 5.2 and Fig. 9): a 1024^3 tensor (4 GiB FP32) at
// ranks 64 and 128 and a 192^4 tensor at rank 32, built as in their Algorithm 3 (core and mode
// factors Gaussian here, the factors of rank J - 8, so the tensor has multilinear rank J - 8).
// Variants: the FP32 baseline (SGEMM, Householder QR: the same two-pass algorithm), the two-pass
// with the SHGEMM sketch, the sequentially truncated and the single-pass (all of A as one slab,
// slabs of 1 GiB and of 64 MiB). Each: median of 3 runs
// after a warm-up, the phases of the last run (Fig. 9's breakdown), the relative error against A
// (FP64 sums), the speed-up over the baseline.
// Usage: bench_tucker [--quick] [--only TEXT]
//   --only TEXT: only the variants whose name contains TEXT, and only the first case (for ncu).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "randnla/backends.hpp"
#include "bench_common.hpp"
#include "randnla/tucker/tucker.hpp"

using namespace randnla;

namespace {

/// A = G x_1 M_1 ... x_N M_N with G (J^N) and M_i = Omega_a Omega_b (I x (J - 8) times (J - 8) x J),
/// all Gaussian, in FP32 on the backend.
OwnedTensor test_tensor(Backend& b, const std::vector<index_t>& dims, index_t rank) {
  const int modes = static_cast<int>(dims.size());
  index_t cells = 1;
  for (int n = 0; n < modes; ++n) cells *= rank;
  OwnedTensor x{Matrix<float>(b, cells, 1, "G"), std::vector<index_t>(modes, rank)};
  b.fill_random(RandomSpec{Distribution::Gaussian, 1, 0}, x.storage.view());
  Products exact(b, ProductPrecision::fp32());
  for (int n = 0; n < modes; ++n) {
    const index_t r = rank - 8;
    Matrix<float> oa(b, dims[n], r), ob(b, r, rank), m(b, dims[n], rank);
    b.fill_random(RandomSpec{Distribution::Gaussian, 2, static_cast<std::uint64_t>(2 * n)}, oa.view());
    b.fill_random(RandomSpec{Distribution::Gaussian, 2, static_cast<std::uint64_t>(2 * n + 1)}, ob.view());
    b.product(Op::N, Op::N, 1.0f / std::sqrt(static_cast<float>(r)), oa, ob, 0.0f, m, ProductPrecision::fp32());
    x = contract_first_mode(b, exact, x.view(), m, Op::T);
  }
  return x;
}

struct Variant {
  const char* name;
  TuckerVariant variant;
  ProductPrecision products;
  Orthonormalizer orth;
  std::size_t slab_bytes = TuckerOptions().slab_bytes;
};

void run_case(Backend& b, const std::vector<index_t>& dims, index_t rank, const std::string& only = "") {
  const OwnedTensor a = test_tensor(b, dims, rank);
  const PackedTensor at = a.view();
  std::string shape;
  for (index_t d : dims) shape += (shape.empty() ? "" : "x") + std::to_string(d);
  std::printf("\n%s, ranks %ld (multilinear rank %ld), %.2f GiB FP32\n", shape.c_str(), static_cast<long>(rank),
              static_cast<long>(rank - 8), 4.0 * at.size() / (1u << 30));
  const Variant variants[] = {
      {"fp32 baseline (SGEMM, Householder)", TuckerVariant::TwoPass, ProductPrecision::fp32(), Orthonormalizer::Householder},
      {"two-pass, shgemm-fp16", TuckerVariant::TwoPass, ProductPrecision::split_in(TensorCore::FP16), Orthonormalizer::Auto},
      {"two-pass, shgemm-tf32", TuckerVariant::TwoPass, ProductPrecision::split_in(TensorCore::TF32), Orthonormalizer::Auto},
      {"two-pass, tf32", TuckerVariant::TwoPass, ProductPrecision::tf32(), Orthonormalizer::Auto},
      {"sequential, fp32", TuckerVariant::SequentiallyTruncated, ProductPrecision::fp32(), Orthonormalizer::Householder},
      {"sequential, shgemm-fp16", TuckerVariant::SequentiallyTruncated, ProductPrecision::split_in(TensorCore::FP16),
       Orthonormalizer::Auto},
      // The same with the other orthonormalisers: their share of the time (N small tall QRs).
      {"sequential, shgemm-fp16, Householder", TuckerVariant::SequentiallyTruncated, ProductPrecision::split_in(TensorCore::FP16),
       Orthonormalizer::Householder},
      {"sequential, shgemm-fp16, CholeskyQR2", TuckerVariant::SequentiallyTruncated, ProductPrecision::split_in(TensorCore::FP16),
       Orthonormalizer::CholeskyQR2},
      {"sequential, shgemm-fp16, TSQR", TuckerVariant::SequentiallyTruncated, ProductPrecision::split_in(TensorCore::FP16),
       Orthonormalizer::Tsqr},
      {"single-pass, shgemm-fp16", TuckerVariant::SinglePass, ProductPrecision::split_in(TensorCore::FP16), Orthonormalizer::Auto},
      {"single-pass, shgemm-fp16, 1 GiB slabs", TuckerVariant::SinglePass, ProductPrecision::split_in(TensorCore::FP16),
       Orthonormalizer::Auto, std::size_t{1} << 30},
      {"single-pass, shgemm-fp16, 64 MiB slabs", TuckerVariant::SinglePass, ProductPrecision::split_in(TensorCore::FP16),
       Orthonormalizer::Auto, std::size_t{64} << 20},
  };
  double baseline = 0;
  for (const Variant& v : variants) {
    if (std::string(v.name).find(only) == std::string::npos) continue;
    TuckerOptions o;
    o.variant = v.variant, o.products = v.products, o.orthonormalizer = v.orth, o.slab_bytes = v.slab_bytes;
    TuckerResult r;
    const double ms = randnla::median_ms(b, [&] { r = rp_hosvd(b, at, std::vector<index_t>(dims.size(), rank), o); }, 3, 1);
    if (baseline == 0) baseline = ms;
    std::printf("  %-40s %9.2f ms  x%5.2f  error %.2e | %s | %s\n", v.name, ms, baseline / ms,
                tucker_relative_error(b, at, r), r.report.phases.to_string().c_str(), r.report.sketch_kernel.c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::string only = argc > 2 && std::strcmp(argv[argc - 2], "--only") == 0 ? argv[argc - 1] : "";
  auto b = make_backend(cuda_available() ? BackendKind::Cuda : BackendKind::Host);
  std::printf("bench_tucker on %s\n", b->description().c_str());
  if (quick) {
    run_case(*b, {128, 128, 128}, 16, only);
    return 0;
  }
  run_case(*b, {1024, 1024, 1024}, 64, only);
  if (!only.empty()) return 0;
  run_case(*b, {1024, 1024, 1024}, 128);
  run_case(*b, {192, 192, 192, 192}, 32);
  return 0;
}
