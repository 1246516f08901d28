#!/usr/bin/env bash
# Calibration of the CUDA engine, for a machine with the CUDA toolkit and a GPU (no network, no
# Qt). From the repository root:
#
#   bash scripts/gpu_calibrate.sh [OUT_DIR]    # OUT_DIR: $1, else $OUT, else build/gpu-calibrate
#
# Builds build/gpu (as scripts/gpu_check.sh does; incremental after it), then runs
# `servesim calibrate all` on configs/scenarios/gpu-calibrate-8b.json with the CUDA backend:
# profiles a Llama-3-8B-shaped bf16 model (weights drawn on the device) over prefill chunks up
# to 2048 tokens, decode batches up to 64 and contexts up to 4096, fits the profile, and
# validates it by serving the scenario's 400 requests in real time next to the simulator
# (three runs, ~25 s each); then saturated (every request at once: throughput is the engine's
# speed) and a transfer check (the same profile predicting Qwen2.5-7B), two runs each.
# Outputs: OUT_DIR/run (the profile run), profile.json, validation.json,
# validation-saturated.json, validation-transfer.json and the logs. Each stage has a time limit; the whole run ends within 8 minutes after the build.
# Commit profile.json as configs/profiles/Llama-3-8B-<gpu>-cuda.json and the figures in
# docs/validation.md.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${1:-${OUT:-build/gpu-calibrate}}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
exec > >(tee "$out/gpu_calibrate.log") 2>&1

failures=()
stage() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
die() { echo "GPU CALIBRATION FAILED: $*"; exit 1; }

stage "device"
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: is there a GPU driver?"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv \
  | tee "$out/nvidia-smi.csv" || die "nvidia-smi failed: no usable GPU"
cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
arch="${SERVESIM_CUDA_ARCH:-${cap:-80;90}}"

stage "configure and build (build/gpu): servesim"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
timeout 60 cmake -S . -B build/gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSERVESIM_CUDA=ON -DSERVESIM_GUI=OFF -DSERVESIM_BUILD_BENCH=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; die "configure (log: $out/configure.log)"; }
timeout 300 cmake --build build/gpu -j "$(nproc)" --target servesim > "$out/build.log" 2>&1 \
  || { tail -40 "$out/build.log"; die "build (log: $out/build.log)"; }

servesim=build/gpu/cli/servesim
scenario=configs/scenarios/gpu-calibrate-8b.json
# 64 sequences x 4096 tokens in 16-token blocks, plus the null block: the profiled range.
blocks=16385

stage "calibrate all: profile, fit, validate (Llama-3-8B, bf16, CUDA)"
if ! timeout 300 "$servesim" calibrate all "$scenario" --backend cuda --out "$out" \
  --max-tokens 2048 --max-seqs 64 --max-context 4096 --repeats 3 --num-blocks "$blocks" \
  --no-progress; then
  die "calibrate all (log above)"
fi
cp "$out/validation.json" "$out/validation-paced.json"

stage "validate saturated: all 400 requests at once"
timeout 90 "$servesim" calibrate validate "$scenario" --profile "$out/profile.json" \
  --num-blocks "$blocks" --runs 2 --set workload.arrival.rate_qps=100000 \
  --report "$out/validation-saturated.json" || failures+=("saturated validation")

stage "transfer: the Llama-3-8B profile predicting Qwen2.5-7B"
timeout 90 "$servesim" calibrate validate "$scenario" --profile "$out/profile.json" \
  --num-blocks "$blocks" --runs 2 --set model=Qwen2.5-7B --transfer \
  --report "$out/validation-transfer.json" || failures+=("transfer validation")

echo "outputs in $out"
if ((${#failures[@]})); then
  printf 'GPU CALIBRATION FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "GPU CALIBRATION DONE: commit $out/profile.json as configs/profiles/Llama-3-8B-<gpu>-cuda.json"
