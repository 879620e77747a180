#!/usr/bin/env bash
# Installs what is missing (Debian packages), builds randnla, and runs the quick-start RSVD
# (on the GPU when there is one and the build has CUDA).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "${RANDNLA_JOBS:-$(nproc)}"
./build/examples/rsvd_quickstart --backend auto
