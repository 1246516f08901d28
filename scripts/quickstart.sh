#!/usr/bin/env bash
# Installs what is missing, builds servesim, and runs the main job on a bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh default
exec ./build/default/cli/servesim memory --model CodeLlama-13B --gpu A100-80GB \
  --tensor-parallel-size 2 --gpu-memory-utilization 0.9 --max-model-len 8192 \
  --max-num-seqs 64 --enable-prefix-caching
