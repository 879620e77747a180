#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout that carries .device/ (scripts/gpu_bundle.sh):
# every test of both CUDA configurations and the Trilinos-style consumer, then the benchmarks
# (before and after, when the bundle holds a baseline, in RANDNLA_ROUNDS interleaved rounds). Logs go
# to $OUT (or ./gpu-logs).
# distributed: the distributed tests and bench_distributed under the bundled Open MPI (host ranks
# 1-4; then 1 and 2 ranks sharing the GPU).
# multigpu: one rank per GPU through NCCL (scripts/mpirun_gpus.sh, NVLink multicast off):
# test_distributed and bench_distributed gpu-weak at 1, 2, 4 and 8 ranks up to the GPUs here (twice) and
# its one-rank run on every GPU at once (independent jobs, no communication), then
# gpu-strong on the largest N = 200000-column matrix up to 200000 x 200000 that the GPUs hold
# together and on the largest two hold, each at every rank count that holds it, and on one GPU at
# the size one holds.
# sparse: bench_sparse_rsvd and its peers (perf_tests/peer_sparse_rsvd.py: torch on this GPU) on the
# same matrices in one call: the 3-D Laplacian on a 243^3 grid (1.0e8 non-zeros) and the WordNet graph.
# Usage: scripts/gpu_run.sh [tests|bench|all|distributed|multigpu|sparse] [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
quick=${2:-}
case "$what" in tests|bench|all|distributed|multigpu|sparse) ;; *) echo "usage: scripts/gpu_run.sh [tests|bench|all|distributed|multigpu|sparse] [--quick]" >&2; exit 2 ;; esac
logs=${OUT:-$PWD/gpu-logs}
mkdir -p "$logs"
if [ -f .device-carry/bundle.tar.xz ] && [ ! -d .device ]; then mkdir -p .device && tar -C .device -xJf .device-carry/bundle.tar.xz; fi
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/device.txt"
echo "commit $(cat .device/commit) date $(date -u +%F)" | tee -a "$logs/device.txt"
status=0
use_bundled_mpi() {
  local mpi=$PWD/.device/mpi/usr
  export OPAL_PREFIX=$mpi PMIX_INSTALL_PREFIX=$mpi/lib/x86_64-linux-gnu/pmix2 PATH=$mpi/bin:$PATH
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
  export OMPI_MCA_mtl=^ofi OMPI_MCA_osc=^ucx OPENBLAS_NUM_THREADS=1
  # PMIx's compression plugin does not load from the relocated tree; it only compresses large startup data.
  export PMIX_MCA_pcompress_base_silence_warning=1 PMIX_MCA_mca_base_component_show_load_errors=0
}
if [ "$what" = multigpu ]; then
  use_bundled_mpi
  bin=.device/bin-debian
  gpus=$(nvidia-smi -L | wc -l)
  mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | sort -n | head -1)
  counts=$(for np in 1 2 4 8; do [ $np -le "$gpus" ] && echo $np; done)
  for np in $counts; do
    if scripts/mpirun_gpus.sh $np $bin/test_distributed --gtest_brief=1 > "$logs/test_distributed_gpus$np.log" 2>&1
    then echo "PASS test_distributed on $np GPUs"; else echo "FAIL test_distributed on $np GPUs"; status=1; tail -30 "$logs/test_distributed_gpus$np.log"; fi
  done
  for round in 1 2; do  # twice, to show the run-to-run spread beside the scaling
    for np in $counts; do scripts/mpirun_gpus.sh $np $bin/bench_distributed gpu-weak 2>&1 | tee -a "$logs/bench_distributed_multigpu.txt"; done
  done
  # The one-GPU run on every GPU at once, as independent jobs: what the machine's shared limits
  # (power, host) cost with no communication at all, beside the weak-scaling runs. Unbound: Open MPI
  # binds a lone rank to core 0, so the jobs would share one core.
  for g in $(seq 0 $((gpus - 1))); do
    CUDA_VISIBLE_DEVICES=$g NCCL_NVLS_ENABLE=0 mpirun --bind-to none -np 1 $bin/bench_distributed gpu-weak > "$logs/concurrent_gpu$g.txt" 2>&1 &
  done
  wait
  for g in $(seq 0 $((gpus - 1))); do
    sed "s/^/concurrent, GPU $g of $gpus: /" "$logs/concurrent_gpu$g.txt" | tee -a "$logs/bench_distributed_multigpu.txt"
  done
  # A_i takes at most 70% of a GPU (the rest: the draws that form it and the RSVD's workspace).
  n=200000 k=256 usable=$((mib * 1048576 / 10 * 7))
  rows_fitting() { echo $(( $1 * usable / (4 * n) / 10000 * 10000 )); }
  capped() { local m; m=$(rows_fitting "$1"); [ "$m" -gt 200000 ] && m=200000; echo "$m"; }
  # The largest matrix the GPUs hold together, and the largest two hold (a strong-scaling curve from 2 GPUs up).
  for m in $(printf '%s\n' "$(capped "$gpus")" "$(capped 2)" | sort -un); do
    for np in $counts; do
      [ "$(rows_fitting $np)" -ge "$m" ] || continue
      scripts/mpirun_gpus.sh $np $bin/bench_distributed gpu-strong $m $n $k 2>&1 | tee -a "$logs/bench_distributed_multigpu.txt"
    done
  done
  scripts/mpirun_gpus.sh 1 $bin/bench_distributed gpu-strong "$(rows_fitting 1)" $n $k 2>&1 | tee -a "$logs/bench_distributed_multigpu.txt"
  exit $status
fi
if [ "$what" = sparse ]; then
  grid=${RANDNLA_LAPLACIAN:-243}
  .device/bin-debian/bench_sparse_rsvd --mtx .device/data/wordnet.mtx --laplacian "$grid" 2>&1 | tee "$logs/bench_sparse_rsvd.txt" || status=1
  python3 perf_tests/peer_sparse_rsvd.py --device cuda --mtx .device/data/wordnet.mtx --laplacian "$grid" \
    --json "$logs/peer_sparse_rsvd.json" 2>&1 | tee "$logs/peer_sparse_rsvd.txt" || status=1
  exit $status
fi
if [ "$what" = distributed ]; then
  use_bundled_mpi
  for np in 1 2 3 4; do
    if mpirun --oversubscribe -np $np .device/bin-debian/test_distributed --gtest_brief=1 > "$logs/test_distributed_np$np.log" 2>&1
    then echo "PASS test_distributed -np $np"; else echo "FAIL test_distributed -np $np"; status=1; fi
  done
  for np in 1 2 4; do mpirun -np $np .device/bin-debian/bench_distributed weak 2>&1 | tee -a "$logs/bench_distributed.txt"; done
  for np in 1 2; do mpirun -np $np .device/bin-debian/bench_distributed gpu 2>&1 | tee -a "$logs/bench_distributed.txt"; done
  data=.device/data/train-images-idx3-ubyte.gz  # the main job's PCA over ranks, where the bundle carries its data
  if [ -f $data ]; then
    for np in 1 2; do mpirun -np $np .device/bin-debian/example_distributed_pca $data 2>&1 | tee "$logs/distributed_pca_np$np.txt"; done
  fi
  exit $status
fi
if [ "$what" != bench ]; then
  # The test binaries of both configurations side by side on the one GPU (RANDNLA_TEST_JOBS at a
  # time), test_gpu in RANDNLA_TEST_SHARDS gtest shards: one after another they take longer than the
  # device tool's 10 minutes a call, and their FP64 host references leave the GPU mostly idle (in 4
  # shards, 6 at a time, the longest shard took 227 s on the H100).
  max_jobs=${RANDNLA_TEST_JOBS:-8} shards=${RANDNLA_TEST_SHARDS:-6} runs=()
  for t in .device/bin-debian/test_* .device/bin-kokkos-cuda/test_*; do
    [ -x "$t" ] || continue
    [ "$(basename "$t")" = test_distributed ] && continue  # under mpirun: scripts/gpu_run.sh distributed
    name=$(basename "$(dirname "$t")")-$(basename "$t") n=1
    [ "$(basename "$t")" = test_gpu ] && n=$shards
    for shard in $(seq 0 $((n - 1))); do
      [ "$n" -gt 1 ] && run=$name-shard$shard || run=$name
      while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do wait -n; done
      (GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$shard "$t" --gtest_brief=1 > "$logs/$run.log" 2>&1; echo $? > "$logs/$run.rc") &
      runs+=("$run")
    done
  done
  wait
  for run in "${runs[@]}"; do
    if [ "$(cat "$logs/$run.rc")" = 0 ]; then r=PASS; else r=FAIL; status=1; fi
    echo "$r $run $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/$run.log" | tr '\n' ' ')"
    [ $r = FAIL ] && tail -40 "$logs/$run.log"
  done
  # The install, moved here from where it was built and installed: its consumer must load the
  # CUDA module from it, and its tool must run on the GPU.
  if [ -x .device/install/bin/consumer ]; then
    if RANDNLA_CONSUMER_PREFIX=$PWD/.device/install .device/install/bin/consumer > "$logs/moved_install.log" 2>&1 &&
       .device/install/bin/randnla rsvd --input .device/data/train-images-idx3-ubyte.gz --rank 16 --backend auto \
         --json "$logs/moved_install_rsvd.json" -o "$logs/moved_install_rsvd" -f >> "$logs/moved_install.log" 2>&1 &&
       grep -q '"backend": *"NVIDIA' "$logs/moved_install_rsvd.json"; then r=PASS; else r=FAIL; status=1; fi
    echo "$r moved install: $(cat "$logs/moved_install.log"; grep -o '"backend": *"[^"]*"' "$logs/moved_install_rsvd.json")"
  fi
  if [ -x .device/bin-kokkos-cuda/consumer ]; then
    if .device/bin-kokkos-cuda/consumer > "$logs/consumer.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
    echo "$r consumer: $(cat "$logs/consumer.log")"
  fi
fi
if [ "$what" != tests ]; then
  # RANDNLA_ROUNDS rounds, the two binaries taking turns, so that the machine's drift falls on both
  # (perf_tests/compare_rounds.py tabulates them).
  for round in $(seq "${RANDNLA_ROUNDS:-1}"); do
    for run in baseline current; do
      dir=.device/bin-debian
      if [ $run = baseline ]; then
        [ -d .device/bin-baseline ] || continue
        dir=.device/bin-baseline
      fi
      echo "== round $round, $run: $(cat "$dir/commit" 2>/dev/null || cat .device/commit)"
      # RANDNLA_BENCHES: which of them (default all five; the baseline may lack the last three).
      for bench in ${RANDNLA_BENCHES:-gemm rsvd qr tucker lra}; do
        [ -x "$dir/bench_$bench" ] || continue
        case $bench in qr) args="--orthonormalizers" ;; lra) args="--only lra" ;; *) args=$quick ;; esac
        "$dir/bench_$bench" $args 2>&1 | tee "$logs/bench_${bench}_${run}_$round.txt"
      done
    done
  done
  if [ -d .device/bin-baseline ]; then
    for bench in ${RANDNLA_BENCHES:-gemm rsvd qr tucker lra}; do
      python3 perf_tests/compare_rounds.py $bench "$logs" | tee "$logs/compare_$bench.md"
    done
  fi
  # The device tool returns only a few files from $OUT: the rounds travel as one archive.
  (cd "$logs" && tar czf bench_rounds.tgz --remove-files bench_*_*_*.txt)
fi
exit $status
