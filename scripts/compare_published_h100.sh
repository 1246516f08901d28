#!/usr/bin/env bash
# Compares servesim's predictions with published vLLM 0.12.0 serving runs of Qwen3-32B on
# H100-SXM (closed loop at fixed concurrency; reference CSV from ai-dynamo/aiconfigurator's
# silicon sample, kept in the shared reference data). Each row is simulated twice: with all
# clients starting together (they then stay in lock-step: an upper bound on TTFT) and with
# their starts spread over 1 s (they stay staggered: a lower bound). Prints a markdown table
# and the mean absolute percentage errors. Usage:
#   scripts/compare_published_h100.sh [path/to/published-vllm-h100-qwen3-32b.csv]
# SERVESIM_BIN overrides the binary (default build/default/cli/servesim).
set -euo pipefail
cd "$(dirname "$0")/.."
csv="${1:-../shared/reference/measured/published-vllm-h100-qwen3-32b.csv}"
bin="${SERVESIM_BIN:-./build/default/cli/servesim}"
[[ -x "$bin" ]] || { echo "error: build first (bash scripts/build.sh)" >&2; exit 2; }
[[ -r "$csv" ]] || { echo "error: cannot read $csv" >&2; exit 2; }
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT

mean_ms() {  # metric, flattened JSON
  printf '%s' "$2" | sed -n "s/.*\"$1\":{[^}]*\"mean_ms\":\\([0-9.e+-]*\\).*/\\1/p"
}

echo "| TP | ISL | OSL | clients | TTFT measured | TTFT lock-step | TTFT staggered | TPOT measured | TPOT lock-step | TPOT staggered |"
echo "|---|---|---|---|---|---|---|---|---|---|"
tail -n +2 "$csv" | while IFS=, read -r _ _ _ _ _ _ isl osl conc tp _ ttft tpot; do
  requests=$(( conc * 8 > 200 ? conc * 8 : 200 ))
  warmup=$(( conc * 2 ))
  common=(--json --set parallel.tensor_parallel_size="$tp" --set workload.arrival.clients="$conc"
          --set workload.prompt_tokens="$isl" --set workload.output_tokens="$osl"
          --set workload.num_requests="$requests" --set metrics.warmup_requests="$warmup")
  sync=$("$bin" simulate configs/validation/qwen3-32b-h100.json "${common[@]}" | tr -d '\n ')
  spread=$("$bin" simulate configs/validation/qwen3-32b-h100.json "${common[@]}" \
           --set workload.arrival.ramp_up_s=1 | tr -d '\n ')
  printf '%s %s %s %s %s %s %s %s %s %s\n' "$tp" "$isl" "$osl" "$conc" "$ttft" \
    "$(mean_ms ttft "$sync")" "$(mean_ms ttft "$spread")" "$tpot" \
    "$(mean_ms tpot "$sync")" "$(mean_ms tpot "$spread")" >> "$rows"
  awk '{ printf "| %d | %d | %d | %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |\n",
         $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }' <(tail -n 1 "$rows")
done
awk 'function abs(x) { return x < 0 ? -x : x }
     $1 > 1 { n++; ts += abs($6 - $5) / $5; tg += abs($7 - $5) / $5;
              ps += abs($9 - $8) / $8; pg += abs($10 - $8) / $8;
              if ($5 >= $7 && $5 <= $6) inside++ }
     END { printf "\nRows with TP > 1: %d. Mean absolute error, lock-step / staggered: TTFT %.1f%% / %.1f%%, TPOT %.1f%% / %.1f%%. Measured TTFT between the two bounds in %d rows.\n",
           n, 100 * ts / n, 100 * tg / n, 100 * ps / n, 100 * pg / n, inside }' "$rows"
