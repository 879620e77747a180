#!/usr/bin/env bash
# Builds a CUDA-enabled Kokkos 3.4.01 and Kokkos Kernels (static, sm_90) from Debian's trilinos
# source package into PREFIX (default: .kokkos-cuda in the checkout). None exists as a package.
# Kokkos Kernels 3.4's cuSPARSE specialisation of spmv names enums that CUDA 12 removed
# (CUSPARSE_MV_ALG_DEFAULT): it is left out, and its spmv (the portable backend's sparse
# products) runs its own kernels.
# Usage: scripts/build_kokkos_cuda.sh [PREFIX]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(realpath -m "${1:-$here/../.kokkos-cuda}")
work=${RANDNLA_KOKKOS_WORK:-/tmp/randnla-kokkos-cuda}
jobs=${RANDNLA_JOBS:-$(nproc)}

if [ -f "$prefix/lib/cmake/KokkosKernels/KokkosKernelsConfig.cmake" ]; then
  echo "build_kokkos_cuda: $prefix already holds Kokkos and Kokkos Kernels"; exit 0
fi
command -v nvcc >/dev/null || { echo "build_kokkos_cuda: nvcc not found" >&2; exit 1; }

bash "$here/add_deb_src.sh"
mkdir -p "$work" && cd "$work"
ls trilinos_*.orig.tar.gz >/dev/null 2>&1 || apt-get source --download-only -qq trilinos
src=$(ls -d Trilinos-*/ 2>/dev/null | head -1 || true)
if [ -z "$src" ]; then
  tar xzf trilinos_*.orig.tar.gz --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  src=$(ls -d Trilinos-*/ | head -1)
fi
kokkos=$work/${src}packages/kokkos
python3 "$here/patch_kokkos_cuda13.py" "$kokkos"

common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_CXX_STANDARD=17
        -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper")
cmake -S "$kokkos" -B build-kokkos "${common[@]}" -DKokkos_ENABLE_SERIAL=ON \
  -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_AMPERE80=ON
cmake --build build-kokkos -j "$jobs"
cmake --install build-kokkos
cmake -S "$work/${src}packages/kokkos-kernels" -B build-kernels "${common[@]}" \
  -DKokkos_ROOT="$prefix" -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_ADD_DEFAULT_ETI=OFF \
  -DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TESTS=OFF \
  -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
cmake --build build-kernels -j "$jobs"
cmake --install build-kernels
echo "build_kokkos_cuda: installed into $prefix"
