#!/usr/bin/env bash
# Adds deb-src entries mirroring the machine's existing Debian sources, so `apt-get source` works.
set -euo pipefail
src=/etc/apt/sources.list.d/debian.sources
dst=/etc/apt/sources.list.d/randnla-deb-src.sources
[ -f "$dst" ] && exit 0
[ -f "$src" ] || { echo "add_deb_src: $src not found" >&2; exit 1; }
sed 's/^Types: deb$/Types: deb-src/' "$src" > "$dst"
apt-get update -qq
