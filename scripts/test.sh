#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh "${1:-default}"
ctest --preset "${1:-default}"
# Every parser's libFuzzer target on its corpus (the regression inputs of past findings
# included), then a few seconds of fuzzing each: clang-16, ASan + UBSan, build/fuzz.
bash scripts/fuzz.sh --smoke
