// The first call in a process (issue #59): the main job's RSVD, the PCA of Fashion-MNIST (k = 16,
// p = 10, q = 2), timed as the process's first call after randnla::initialize, and the warm calls
// after it. Run with --no-initialize as a process of its own for the first call without it.
// Usage: bench_first_call [--no-initialize] [--input PATH]   (default: Debian's Fashion-MNIST images)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench_common.hpp"
#include "io/matrix_io.hpp"
#include "randnla/backends.hpp"
#include "randnla/initialize/initialize.hpp"
#include "randnla/pca/pca.hpp"

using namespace randnla;

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  bool prepare = true;
  std::string input = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-initialize") == 0) prepare = false;
    else if (std::strcmp(argv[i], "--input") == 0 && i + 1 < argc) input = argv[++i];
  }
  io::DenseMatrix x = io::read_matrix(input);
  for (float& v : x.data) v /= 255.0f;  // pixels to [0, 1], as the tool's pca does

  auto start = std::chrono::steady_clock::now();
  auto b = make_backend(BackendKind::Auto);
  const double backend_ms = ms_since(start);
  Matrix<float> a(*b, x.rows, x.cols, "X");
  b->copy(MatrixView<const float>(x.data.data(), x.rows, x.cols, x.rows, MemorySpace::Host), a.view());
  b->synchronize();
  std::printf("device: %s; X %lld x %lld; backend made in %.1f ms\n", b->description().c_str(),
              static_cast<long long>(x.rows), static_cast<long long>(x.cols), backend_ms);
  if (prepare) {
    const InitializeReport r = initialize(*b);
    std::printf("initialize: %s\n", r.phases.to_string().c_str());
  }
  PcaOptions o;
  o.oversampling = 10, o.power_iterations = 2;
  start = std::chrono::steady_clock::now();
  const PcaResult first = pca(*b, a.view(), 16, o);
  const double first_ms = ms_since(start);
  std::printf("first call%s: %.2f ms (phases: %s)\n", prepare ? " after initialize" : " without initialize", first_ms,
              first.report.phases.to_string().c_str());
  std::printf("warm: %.3f ms (median of 10 after 2)\n", bench::median_ms(*b, [&] { pca(*b, a.view(), 16, o); }));
  return 0;
}
