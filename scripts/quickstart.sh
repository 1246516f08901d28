#!/usr/bin/env bash
# Installs what is missing, builds servesim, and runs the main job on a bundled scenario:
# the memory budget of a production-style deployment, then its simulation.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh default
./build/default/cli/servesim memory --model CodeLlama-13B --gpu A100-80GB \
  --tensor-parallel-size 2 --gpu-memory-utilization 0.9 --max-model-len 8192 \
  --max-num-seqs 64 --enable-prefix-caching
echo
exec ./build/default/cli/servesim simulate configs/scenarios/production-13b-tp2.json
