#!/usr/bin/env bash
# Builds the CUDA configurations here (no GPU needed) and gathers what the GPU machine lacks into
# .device/: the test and benchmark binaries, and the non-CUDA shared libraries they load
# (Debian's Kokkos, OpenBLAS, ...). scripts/gpu_run.sh runs them there.
# Usage: scripts/gpu_bundle.sh            (then carry .device to the GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${RANDNLA_JOBS:-$(nproc)}
out=.device
rm -rf "$out" && mkdir -p "$out/bin-debian" "$out/bin-kokkos-cuda" "$out/lib"

# 1. CUDA backend against Debian's (host) Kokkos.
cmake -S . -B build-cuda -DRANDNLA_ENABLE_CUDA=ON -DRANDNLA_BUILD_TESTS=ON -DRANDNLA_BUILD_TOOL=ON \
  -DRANDNLA_BUILD_PERF_TESTS=ON -DRANDNLA_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-cuda -j "$jobs" --target test_core test_philox test_host_gemm test_orthonormalize test_rsvd \
  test_gpu bench_gemm bench_rsvd bench_dense_parts randnla_cli
cp build-cuda/unit_tests/test_* build-cuda/perf_tests/bench_* build-cuda/cli/randnla "$out/bin-debian/"
# The main job's default input, which the GPU machine does not have.
mkdir -p "$out/data" && cp /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz "$out/data/"

# 2. The same against the CUDA-enabled Kokkos (scripts/build_kokkos_cuda.sh), if it was built.
if [ -f .kokkos-cuda/lib/cmake/Kokkos/KokkosConfig.cmake ]; then
  cmake -S . -B build-kokkos-cuda -DKokkos_ROOT="$PWD/.kokkos-cuda" -DKokkosKernels_ROOT="$PWD/.kokkos-cuda" \
    -DCMAKE_CXX_COMPILER="$PWD/.kokkos-cuda/bin/nvcc_wrapper" -DRANDNLA_BUILD_EXAMPLES=OFF \
    -DRANDNLA_BUILD_PERF_TESTS=OFF -DRANDNLA_BUILD_TOOL=OFF >/dev/null
  cmake --build build-kokkos-cuda -j "$jobs" --target test_gpu test_core test_rsvd
  cp build-kokkos-cuda/unit_tests/test_gpu build-kokkos-cuda/unit_tests/test_core build-kokkos-cuda/unit_tests/test_rsvd \
    "$out/bin-kokkos-cuda/"
fi

# 3. Shared libraries that are not the C runtime or CUDA's (the GPU machine has those).
for bin in "$out"/bin-*/*; do
  ldd "$bin" | awk '/=> \//{print $3}'
done | sort -u | grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux|libcuda|libcublas|libcublasLt|libcusolver|libcudart|libcurand|libnvJitLink|libcusparse)[.-]' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
git rev-parse --short HEAD > "$out/commit"
strip --strip-unneeded "$out"/bin-*/* "$out"/lib/* 2>/dev/null || true
# The working tree that travels is limited to 64 MiB: send one archive, xz-compressed (gzip no
# longer fits).
mkdir -p .device-carry
rm -f .device-carry/bundle.tar.*
XZ_OPT="-6 -T0" tar -C "$out" -cJf .device-carry/bundle.tar.xz .
du -sh .device-carry/bundle.tar.xz
