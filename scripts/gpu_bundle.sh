#!/usr/bin/env bash
# Builds the CUDA configurations here (no GPU needed) and gathers what the GPU machine lacks into
# .device/: the test and benchmark binaries, an install (moved there) with a consumer of it, the
# tutorial's program built against the installed CUDA-enabled-Kokkos package, and the non-CUDA
# shared libraries they load (Debian's Kokkos, OpenBLAS, ...). scripts/gpu_run.sh runs them there.
# Usage: [RANDNLA_BUNDLE_DATA=0] [RANDNLA_BUNDLE_KOKKOS_CUDA=0] scripts/gpu_bundle.sh [BASELINE_COMMIT]
#   RANDNLA_BUNDLE_KOKKOS_CUDA=0: leave the CUDA-enabled Kokkos configuration out (benchmarks only).
#   BASELINE_COMMIT: also build that commit's bench_gemm, bench_rsvd, bench_qr, bench_tucker and
#   bench_lra (in a git worktree), so that gpu_run.sh compares before and after in one call;
#   RANDNLA_BENCHES ("gemm lra", say) builds only those, as gpu_run.sh runs only those.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${RANDNLA_JOBS:-$(nproc)}
baseline=${1:-}
out=.device
rm -rf "$out" && mkdir -p "$out/bin-debian" "$out/bin-kokkos-cuda" "$out/lib"
tests="test_core test_philox test_host_gemm test_orthonormalize test_rsvd test_fp64 test_kokkos_api test_layouts test_lra test_sparse_projection test_sparse_rsvd test_tsqr test_tucker test_gpu"

# 1. CUDA backend against Debian's (host) Kokkos: scripts/test.sh's first configuration.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs" --target $tests bench_gemm bench_rsvd bench_dense_parts bench_nonfinite bench_lra bench_sparse_projection bench_sparse_rsvd bench_gather_ceiling bench_tucker bench_qr bench_first_call randnla_cli \
  test_distributed bench_distributed example_distributed_pca
for t in $tests test_distributed; do cp build/unit_tests/$t "$out/bin-debian/"; done
cp build/examples/example_distributed_pca "$out/bin-debian/"
cp build/perf_tests/bench_* build/cli/randnla "$out/bin-debian/"
cp build/lib/librandnla_cuda.so "$out/bin-debian/"  # the CUDA backend, found beside the executable it is linked into
# The install, moved: built here at build/, installed, and run on the GPU machine from wherever the
# bundle lands (scripts/gpu_run.sh checks that the module loads from it and the GPU runs).
cmake --install build --prefix "$out/install" >/dev/null
cmake -S unit_tests/install_consumer -B build/gpu-consumer -DCMAKE_PREFIX_PATH="$PWD/$out/install" -DCOMPONENTS=cuda \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/gpu-consumer -j "$jobs" >/dev/null
cp build/gpu-consumer/consumer "$out/install/bin/"
ln -sf ../install/lib/librandnla_cuda.so "$out/bin-debian/librandnla_cuda.so"  # one copy in the bundle (64 MiB travel)
rm -rf "$out/install/include" "$out/install/share"  # what only a build against it needs
# The kernel timeline (perf_tests/cupti_timeline.cpp) and the CUPTI it loads, where the toolkit has it.
if cmake --build build -j "$jobs" --target cupti_timeline >/dev/null 2>&1; then
  cp build/perf_tests/libcupti_timeline.so "$out/bin-debian/"
  cupti=$(ldd build/perf_tests/libcupti_timeline.so | awk '/libcupti/ {print $3}')
  [ -n "$cupti" ] && cp -L "$cupti" "$out/lib/"
fi
# The main job's default input, which the GPU machine does not have (26 MB of the 64 MiB that
# travel: RANDNLA_BUNDLE_DATA=0 leaves it out when no run needs it).
if [ "${RANDNLA_BUNDLE_DATA:-1}" != 0 ]; then
  mkdir -p "$out/data" && cp /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz "$out/data/"
  # The sparse benchmark's real matrix (Debian's wordnet-base), for gpu_run.sh sparse.
  .venv-test/bin/python scripts/wordnet_matrix.py "$out/data/wordnet.mtx" >/dev/null
fi

# 2. The same against the CUDA-enabled Kokkos (scripts/build_kokkos_cuda.sh), if it was built: the
#    portable backend then runs on Kokkos::Cuda, and the consumer keeps its data on the GPU.
if [ "${RANDNLA_BUNDLE_KOKKOS_CUDA:-1}" != 0 ] && [ -f .kokkos-cuda/lib/cmake/Kokkos/KokkosConfig.cmake ]; then
  cmake -S . -B build-kokkos-cuda -DKokkos_ROOT="$PWD/.kokkos-cuda" -DKokkosKernels_ROOT="$PWD/.kokkos-cuda" \
    -DCMAKE_CXX_COMPILER="$PWD/.kokkos-cuda/bin/nvcc_wrapper" -DRANDNLA_ENABLE_CUDA=ON >/dev/null
  cmake --build build-kokkos-cuda -j "$jobs"  # everything: the install below takes the tool too
  for t in test_gpu test_core test_philox test_orthonormalize test_rsvd test_fp64 test_kokkos_api test_layouts test_lra test_sparse_projection test_sparse_rsvd test_tsqr test_tucker; do
    cp build-kokkos-cuda/unit_tests/$t "$out/bin-kokkos-cuda/"
  done
  consumer=build-kokkos-cuda/consumer
  rm -rf "$consumer" && cmake --install build-kokkos-cuda --prefix "$consumer/prefix" >/dev/null
  cmake -S examples -B "$consumer/build" -DCMAKE_PREFIX_PATH="$PWD/$consumer/prefix" \
    -DCMAKE_CXX_COMPILER="$PWD/.kokkos-cuda/bin/nvcc_wrapper" >/dev/null
  cmake --build "$consumer/build" -j "$jobs" --target example_tutorial
  cp "$consumer/build/example_tutorial" "$out/bin-kokkos-cuda/consumer"
  cp build-kokkos-cuda/lib/librandnla_cuda.so "$out/bin-kokkos-cuda/"
fi

# 3. The baseline's benchmarks, for a same-machine comparison.
if [ -n "$baseline" ]; then
  compared=""
  for b in ${RANDNLA_BENCHES:-gemm rsvd qr tucker lra}; do compared="$compared bench_$b"; done
  work=build-baseline
  commit=$(git rev-parse --short "$baseline")
  if [ "$(cat "$work/commit" 2>/dev/null)" != "$commit" ] || [ ! -f "$work/module" ]; then  # built once per baseline
    rm -rf "$work" && git worktree prune && git worktree add --detach "$work/src" "$baseline" >/dev/null
    cmake -S "$work/src" -B "$work/build" -DRANDNLA_ENABLE_CUDA=ON -DRANDNLA_BUILD_EXAMPLES=OFF -DRANDNLA_BUILD_TOOL=OFF \
      >/dev/null
    cmake --build "$work/build" -j "$jobs" --target $compared
    # Since the CUDA backend became a module, a baseline loads its own from beside it.
    if cmake --build "$work/build" --target help | grep -q "randnla_cuda$"; then
      cmake --build "$work/build" -j "$jobs" --target randnla_cuda
    fi
    touch "$work/module"
    git worktree remove --force "$work/src"
    echo "$commit" > "$work/commit"
  fi
  mkdir -p "$out/bin-baseline"
  for b in $compared; do cp "$work/build/perf_tests/$b" "$out/bin-baseline/"; done
  for module in "$work/build/librandnla_cuda.so" "$work/build/lib/librandnla_cuda.so"; do  # where its build put it
    if [ -f "$module" ]; then cp "$module" "$out/bin-baseline/"; fi
  done
  echo "$commit" > "$out/bin-baseline/commit"
fi

# 4. Open MPI's runtime (the launcher, its components and help files, PMIx's), which the GPU
#    machine lacks, for the distributed runs: relocated by OPAL_PREFIX and PMIX_INSTALL_PREFIX
#    (scripts/gpu_run.sh distributed).
mpi=$out/mpi/usr
mkdir -p "$mpi/bin" "$mpi/lib/x86_64-linux-gnu" "$mpi/share"
cp -a /usr/bin/orterun /usr/bin/orted "$mpi/bin/"
ln -s orterun "$mpi/bin/mpirun"
cp -a /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2 "$mpi/lib/x86_64-linux-gnu/"
rm -rf "$mpi/lib/x86_64-linux-gnu/openmpi/include" "$mpi/lib/x86_64-linux-gnu/pmix2/include"
cp -a /usr/share/openmpi "$mpi/share/"

# 5. Shared libraries that are not the C runtime or CUDA's and NCCL (the GPU machine has those).
for bin in "$out"/bin-*/* "$out"/install/bin/* "$mpi"/bin/orte* "$mpi"/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so \
  "$mpi"/lib/x86_64-linux-gnu/pmix2/lib/pmix/*.so; do
  [ -f "$bin" ] || continue
  ldd "$bin" 2>/dev/null | awk '/=> \//{print $3}' || true
done | sort -u | grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux|libcuda|libcublas|libcublasLt|libcusolver|libcudart|libcurand|libnvJitLink|libcusparse|libnccl)[.-]' |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
git rev-parse --short HEAD > "$out/commit"
strip --strip-unneeded "$out"/bin-*/* "$out"/lib/* "$out"/install/bin/* "$out"/install/lib/*.so 2>/dev/null || true
# The working tree that travels is limited to 64 MiB: send one archive, xz-compressed with a 64 MiB
# dictionary, which finds the CUDA kernels the two configurations' binaries share (44 MB with a
# baseline, against 64 MB with xz -6's 8 MiB).
mkdir -p .device-carry
rm -f .device-carry/bundle.tar.*
XZ_OPT="-9e -T0" tar -C "$out" -cJf .device-carry/bundle.tar.xz .
du -sh .device-carry/bundle.tar.xz
