#!/usr/bin/env bash
# Builds Kokkos and Kokkos Kernels 4.5.1 (Serial + OpenMP, static, BLAS/LAPACK from OpenBLAS) into PREFIX
# (default: .kokkos4 in the checkout), so the host configuration is also built and tested against
# the Kokkos 4.x API that users bring from Spack. Debian bookworm packages only Kokkos 3.4.01, and
# the archive serves no newer trilinos or kokkos sources; the one Kokkos 4 source found in a
# reachable registry is the copy vendored in the `pycompadre` 1.7.6 source distribution on PyPI
# (Sandia's Compadre: kokkos/ and kokkos-kernels/ at 4.5.1), fetched by pip and checked by hash.
# Usage: scripts/build_kokkos4.sh [PREFIX]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(realpath -m "${1:-$here/../.kokkos4}")
work=${RANDNLA_KOKKOS4_WORK:-/tmp/randnla-kokkos4}
jobs=${RANDNLA_JOBS:-$(nproc)}
sdist=pycompadre-1.7.6.tar.gz
sha256=c766ec4d445ce076069be4b8c51a23ffac4ee79ea949ca86446bfd8c299b154c

if [ -f "$prefix/lib/cmake/KokkosKernels/KokkosKernelsConfig.cmake" ]; then
  echo "build_kokkos4: $prefix already holds Kokkos and Kokkos Kernels 4"; exit 0
fi
mkdir -p "$work" && cd "$work"
if [ ! -f "$sdist" ]; then
  # pip prepares an sdist's metadata before it saves it; this setup.py needs packaging and wheel.
  python3 -m venv fetch-venv
  fetch-venv/bin/pip install -q packaging==25.0 setuptools==80.9.0 wheel==0.45.1
  fetch-venv/bin/pip download -q --no-deps --no-binary :all: --no-build-isolation -d . pycompadre==1.7.6
fi
echo "$sha256  $sdist" | sha256sum -c --quiet -
[ -d pycompadre-1.7.6/kokkos-kernels ] || tar xzf "$sdist" pycompadre-1.7.6/kokkos pycompadre-1.7.6/kokkos-kernels
src=$work/pycompadre-1.7.6

common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_CXX_STANDARD=17)
cmake -S "$src/kokkos" -B build-kokkos "${common[@]}" -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON
cmake --build build-kokkos -j "$jobs"
cmake --install build-kokkos
cmake -S "$src/kokkos-kernels" -B build-kernels "${common[@]}" -DKokkos_ROOT="$prefix" \
  -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON \
  -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF
cmake --build build-kernels -j "$jobs"
cmake --install build-kernels
echo "build_kokkos4: installed into $prefix"
