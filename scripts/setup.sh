#!/usr/bin/env bash
# Installs what is missing (Debian packages), builds randnla, and runs the main job: PCA of
# Fashion-MNIST through RSVD (on the GPU when there is one), writing pca-out/components.png and
# pca-out/singular_values.png, with the exact spectrum beside the randomized one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "${RANDNLA_JOBS:-$(nproc)}"
./build/cli/randnla pca --output pca-out --force --exact on
