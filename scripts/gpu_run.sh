#!/usr/bin/env bash
# Runs on the GPU machine, from a checkout that carries .device/ (scripts/gpu_bundle.sh):
# every test of both CUDA configurations and the Trilinos-style consumer, then the benchmarks
# (before and after, when the bundle holds a baseline). Logs go to $OUT (or ./gpu-logs).
# Usage: scripts/gpu_run.sh [tests|bench|all] [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
quick=${2:-}
case "$what" in tests|bench|all) ;; *) echo "usage: scripts/gpu_run.sh [tests|bench|all] [--quick]" >&2; exit 2 ;; esac
logs=${OUT:-$PWD/gpu-logs}
mkdir -p "$logs"
if [ -f .device-carry/bundle.tar.xz ] && [ ! -d .device ]; then mkdir -p .device && tar -C .device -xJf .device-carry/bundle.tar.xz; fi
export LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/device.txt"
echo "commit $(cat .device/commit) date $(date -u +%F)" | tee -a "$logs/device.txt"
status=0
if [ "$what" != bench ]; then
  for t in .device/bin-debian/test_* .device/bin-kokkos-cuda/test_*; do
    [ -x "$t" ] || continue
    name=$(basename "$(dirname "$t")")-$(basename "$t")
    if "$t" --gtest_brief=1 > "$logs/$name.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
    echo "$r $name $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/$name.log" | tr '\n' ' ')"
    [ $r = FAIL ] && tail -40 "$logs/$name.log"
  done
  if [ -x .device/bin-kokkos-cuda/consumer ]; then
    if .device/bin-kokkos-cuda/consumer > "$logs/consumer.log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
    echo "$r consumer: $(cat "$logs/consumer.log")"
  fi
fi
if [ "$what" != tests ]; then
  for run in baseline current; do
    dir=.device/bin-debian
    if [ $run = baseline ]; then
      [ -d .device/bin-baseline ] || continue
      dir=.device/bin-baseline
    fi
    echo "== $run: $(cat "$dir/commit" 2>/dev/null || cat .device/commit)"
    "$dir/bench_gemm" $quick 2>&1 | tee "$logs/bench_gemm_$run.txt"
    "$dir/bench_rsvd" $quick 2>&1 | tee "$logs/bench_rsvd_$run.txt"
  done
fi
exit $status
