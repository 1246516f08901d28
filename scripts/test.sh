#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh "${1:-default}"
ctest --preset "${1:-default}"
