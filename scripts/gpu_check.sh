#!/usr/bin/env bash
# GPU check of the engine's CUDA backend, for a machine with the CUDA toolkit and a GPU (no
# network, no Qt). From the repository root:
#
#   bash scripts/gpu_check.sh [OUT_DIR]      # OUT_DIR: $1, else $OUT, else build/gpu-check
#
# Configures build/gpu with SERVESIM_CUDA=ON and the GUI off, builds only the servesim binary
# and the `gpu` test suite on all cores, runs `ctest -L gpu`, then `servesim engine bench` on a
# Llama-3-8B-shaped model with seeded random bf16 weights drawn on the device: batch 1 (decode
# against the measured HBM read bandwidth) and batch 64 x 512-token prompts (one prefill step
# of 32768 tokens against the measured cuBLAS bf16 GEMM rate), and once more with --profile
# for the time of each op. Everything it prints, the bench's JSON and text, the ctest JUnit
# file and nvidia-smi's reports land in OUT_DIR. Each stage has a time limit so the
# whole check ends within 10 minutes. Exits non-zero, naming the stage, when the build, a test
# or the bench fails; the bench still runs after failed tests so one session yields its numbers.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${1:-${OUT:-build/gpu-check}}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
exec > >(tee "$out/gpu_check.log") 2>&1

failures=()
stage() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
die() { echo "GPU CHECK FAILED: $*"; exit 1; }

stage "device"
command -v nvidia-smi >/dev/null || die "nvidia-smi not found: is there a GPU driver?"
nvidia-smi | tee "$out/nvidia-smi.txt" || die "nvidia-smi failed: no usable GPU"
nvidia-smi -q > "$out/nvidia-smi-q.txt" 2>&1 || true
# Compile for this GPU only (minutes saved); the default build covers sm_80 and sm_90.
cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
arch="${SERVESIM_CUDA_ARCH:-${cap:-80;90}}"
echo "CUDA architectures: $arch"

stage "configure (build/gpu)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
timeout 50 cmake -S . -B build/gpu "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSERVESIM_CUDA=ON -DSERVESIM_GUI=OFF -DSERVESIM_BUILD_BENCH=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" > "$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; die "configure (log: $out/configure.log)"; }
grep -q "CUDA backend enabled" "$out/configure.log" || die "configure did not enable CUDA"

stage "build: servesim kernels_cuda_tests"
timeout 280 cmake --build build/gpu -j "$(nproc)" --target servesim kernels_cuda_tests \
  > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; die "build (log: $out/build.log)"; }

stage "ctest -L gpu"
if ! timeout 90 ctest --test-dir build/gpu -L gpu --output-on-failure \
  --output-junit "$out/ctest-gpu.xml" > "$out/ctest-gpu.log" 2>&1; then
  failures+=("ctest -L gpu (log: $out/ctest-gpu.log)")
fi
tail -25 "$out/ctest-gpu.log"
# On a GPU nothing may skip: every gpu test skips only when the runtime sees no device.
if grep -q '\*\*\*Skipped' "$out/ctest-gpu.log"; then
  failures+=("gpu tests skipped: the CUDA runtime reported no device")
fi

stage "engine bench: Llama-3-8B, bf16, batch 1 and 64, 512-token prompts"
bench=(build/gpu/cli/servesim engine bench --model Llama-3-8B --backend cuda --batch 1,64
       --prompt-len 512 --gen-len 32 --repeats 3 --bandwidth-mib 2048 --json)
echo "${bench[*]}"
if ! timeout 120 "${bench[@]}" > "$out/bench.json" 2> "$out/bench.err"; then
  cat "$out/bench.err"
  failures+=("engine bench (stderr: $out/bench.err)")
fi

stage "engine bench --profile: time per op (CUDA events), one timed run"
if ! timeout 60 build/gpu/cli/servesim engine bench --model Llama-3-8B --backend cuda \
  --batch 1,64 --prompt-len 512 --gen-len 8 --repeats 1 --bandwidth-mib 256 --gemm-size 4096 \
  --profile > "$out/bench-profile.txt" 2> "$out/bench-profile.err"; then
  cat "$out/bench-profile.err"
  failures+=("engine bench --profile (stderr: $out/bench-profile.err)")
fi
sed -n '/per-op time/,$p' "$out/bench-profile.txt"
nvidia-smi --query-gpu=name,memory.used,memory.total,temperature.gpu,clocks.sm,clocks.mem \
  --format=csv > "$out/nvidia-smi-after.csv" 2>&1 || true

stage "summary"
if [[ -s "$out/bench.json" ]]; then
  python3 - "$out/bench.json" <<'PY' | tee "$out/summary.txt"
import json, sys
j = json.load(open(sys.argv[1]))
print(f"device: {j.get('device', '?')}; HBM read {j['read_bandwidth_Bps'] / 1e9:.0f} GB/s, "
      f"cuBLAS bf16 GEMM {j['gemm_flops'] / 1e12:.1f} TFLOP/s ({j['gemm_size']}^3)")
ok = True
print(f"{'batch':>6} {'prompt':>7} {'prefill tok/s':>14} {'ms':>9} {'%GEMM':>7} "
      f"{'decode tok/s':>13} {'ms/step':>8} {'%BW':>6}")
for p in j["points"]:
    print(f"{p['batch']:>6} {p['prompt_len']:>7} {p['prefill_tokens_per_s']:>14.0f} "
          f"{p['prefill_step_s'] * 1e3:>9.1f} {100 * p['prefill_fraction_of_gemm']:>6.1f}% "
          f"{p['decode_tokens_per_s']:>13.1f} {p['decode_step_s'] * 1e3:>8.2f} "
          f"{100 * p['decode_fraction_of_bandwidth']:>5.1f}%")
largest = max(p["batch"] for p in j["points"])
for p in j["points"]:
    if p["batch"] == 1:
        f = p["decode_fraction_of_bandwidth"]
        ok &= f >= 0.75
        print(f"decode at batch 1: {100 * f:.1f}% of measured HBM bandwidth "
              f"(target >= 75%: {'met' if f >= 0.75 else 'MISSED'})")
    if p["batch"] == largest:
        f = p["prefill_fraction_of_gemm"]
        ok &= f >= 0.60
        print(f"prefill of {p['batch']} x {p['prompt_len']} tokens: {100 * f:.1f}% of the cuBLAS "
              f"GEMM rate (target >= 60%: {'met' if f >= 0.60 else 'MISSED'})")
print("performance targets:", "met" if ok else "MISSED (a finding, not a check failure)")
PY
fi
echo "outputs in $out"
if ((${#failures[@]})); then
  printf 'GPU CHECK FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "GPU CHECK PASSED"
