#!/usr/bin/env bash
# Builds every configuration and runs the whole test suite (GPU tests report skipped without a GPU):
#  1. host + CUDA backend against Debian's Kokkos: all tests run;
#  2. CUDA backend against a CUDA-enabled Kokkos built from Debian's source (scripts/build_kokkos_cuda.sh):
#     compiled and linked in full; its tests need a GPU to initialise Kokkos, so they run on the H100
#     (scripts/gpu_run.sh), not here;
#  3. the portable backend against Kokkos and Kokkos Kernels 4.5.1 with OpenMP (scripts/build_kokkos4.sh):
#     every test that touches Kokkos runs, on 2 OpenMP threads (the portable backend's default
#     execution space there), so both the 3.4 and the 4.x API and a threaded space stay supported;
#  4. host-only against Debian's Kokkos under AddressSanitizer + UndefinedBehaviorSanitizer
#     (RANDNLA_SANITIZE=ON, -O1): the host unit tests, the tool's bad-input and argument tests and
#     the distributed tests (ctest label sanitize; target sanitized_tests builds only what they run).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${RANDNLA_JOBS:-$(nproc)}
bash scripts/install_deps.sh
bash scripts/build_docs.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"

if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  bash scripts/build_kokkos_cuda.sh "$PWD/.kokkos-cuda"
  cmake -S . -B build-kokkos-cuda -DKokkos_ROOT="$PWD/.kokkos-cuda" -DKokkosKernels_ROOT="$PWD/.kokkos-cuda" \
    -DCMAKE_CXX_COMPILER="$PWD/.kokkos-cuda/bin/nvcc_wrapper" -DRANDNLA_ENABLE_CUDA=ON
  cmake --build build-kokkos-cuda -j "$jobs"
  echo "test.sh: the CUDA-enabled Kokkos configuration compiled and linked (its tests run on a GPU)"
fi

bash scripts/build_kokkos4.sh "$PWD/.kokkos4"
cmake -S . -B build-kokkos4 -DCMAKE_BUILD_TYPE=Release -DRANDNLA_ENABLE_CUDA=OFF -DCMAKE_PREFIX_PATH="$PWD/.kokkos4"
cmake --build build-kokkos4 -j "$jobs"
# The file readers' fuzzers use no Kokkos: they run once, in the first configuration.
(cd build-kokkos4 && OMP_NUM_THREADS=2 OMP_PROC_BIND=false ctest --output-on-failure -j "$jobs" -E fuzz_readers)

cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1" -DRANDNLA_ENABLE_CUDA=OFF \
  -DRANDNLA_SANITIZE=ON -DRANDNLA_BUILD_PERF_TESTS=OFF -DRANDNLA_BUILD_EXAMPLES=OFF
cmake --build build-sanitize -j "$jobs" --target sanitized_tests
(cd build-sanitize && ctest --output-on-failure -j "$jobs" -L sanitize)

cd build && ctest --output-on-failure -j "$jobs"
