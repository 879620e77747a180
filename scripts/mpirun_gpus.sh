#!/usr/bin/env bash
# Starts PROGRAM on N MPI ranks of this host, one GPU each: rank r sees only GPU (r mod G), G the
# GPUs here, as its device 0, so every rank's CUDA backend opens its own GPU. More ranks than GPUs
# share them round-robin (reported). NVLink multicast (NCCL's NVLS) stays off unless
# NCCL_NVLS_ENABLE says otherwise: the lent multi-GPU machines require it off. For the distributed algorithms' multi-GPU runs, e.g.
#   scripts/mpirun_gpus.sh 8 build/examples/example_distributed_pca
# Usage: scripts/mpirun_gpus.sh N PROGRAM [ARGS...]
set -euo pipefail
if [ "${1:-}" = --one-rank ]; then  # inside mpirun: this rank's GPU, then the program
  shift
  gpus=$(nvidia-smi -L | wc -l)
  local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
  export CUDA_VISIBLE_DEVICES=$((local_rank % gpus)) NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
  exec "$@"
fi
if [ $# -lt 2 ]; then
  echo "usage: scripts/mpirun_gpus.sh N PROGRAM [ARGS...]" >&2
  exit 2
fi
ranks=$1
shift
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
if [ "${gpus:-0}" -lt 1 ]; then
  echo "mpirun_gpus.sh: no GPU visible (nvidia-smi -L lists none)" >&2
  exit 1
fi
[ "$ranks" -le "$gpus" ] || echo "mpirun_gpus.sh: $ranks ranks share $gpus GPUs round-robin" >&2
exec mpirun --oversubscribe --bind-to none -np "$ranks" "$0" --one-rank "$@"
