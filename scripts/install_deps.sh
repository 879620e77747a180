#!/usr/bin/env bash
# Installs the Debian packages randnla builds and tests with; does nothing when all are present.
set -euo pipefail
packages=(cmake g++ make libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libopenblas-dev liblapack-dev
          libgtest-dev zlib1g-dev libzip-dev dataset-fashion-mnist wordnet-base python3 python3-venv clang-14 libclang-rt-14-dev
          libopenmpi-dev openmpi-bin doxygen libcli11-dev nlohmann-json3-dev
          libplplot-dev plplot-driver-cairo pkg-config)
here=$(cd "$(dirname "$0")/.." && pwd)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
if [ ${#missing[@]} -gt 0 ]; then
  echo "install_deps: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python with numpy, scikit-learn and TensorLy for the tool's tests (the peer cross-checks), and
# matplotlib for the docs' plots of the recorded results (scripts/plot_results.py).
venv="$here/.venv-test"
if ! "$venv/bin/python" -c "import numpy, sklearn, tensorly, matplotlib" 2>/dev/null; then
  echo "install_deps: creating $venv (numpy, scikit-learn, tensorly, matplotlib)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy==2.4.6 scipy==1.17.1 scikit-learn==1.9.1 tensorly==0.10.0 matplotlib==3.11.2
fi
