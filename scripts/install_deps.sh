#!/usr/bin/env bash
# Installs the Debian packages randnla builds and tests with; does nothing when all are present.
set -euo pipefail
packages=(cmake g++ make libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev libopenblas-dev liblapack-dev
          libgtest-dev libpng-dev dataset-fashion-mnist python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install_deps: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
