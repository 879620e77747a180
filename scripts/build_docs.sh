#!/usr/bin/env bash
# Builds the API reference (docs/Doxyfile: Doxygen's HTML from the public headers) into
# build-docs/html/. Any Doxygen warning, an undocumented public entity among them, fails it:
# the Doxyfile makes warnings errors, and the warning log must come out empty as well.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v doxygen >/dev/null 2>&1 || { echo "build_docs: doxygen not found (bash scripts/install_deps.sh installs it)" >&2; exit 1; }
rm -rf build-docs
mkdir -p build-docs
status=0
doxygen docs/Doxyfile || status=$?
if [ -s build-docs/warnings.log ]; then
  echo "build_docs: Doxygen warnings (build-docs/warnings.log):" >&2
  cat build-docs/warnings.log >&2
  exit 1
fi
[ "$status" -eq 0 ] || { echo "build_docs: doxygen failed ($status)" >&2; exit "$status"; }
echo "build_docs: API reference in $PWD/build-docs/html/index.html (no warnings)"
