#!/usr/bin/env bash
# Compares servesim's predictions with published vLLM 0.12.0 serving runs of Qwen3-32B on
# H100-SXM (closed loop at fixed concurrency; reference CSV from ai-dynamo/aiconfigurator's
# silicon sample, kept in the shared reference data). Prints a markdown table and the mean
# absolute percentage error of TTFT and TPOT. Usage:
#   scripts/compare_published_h100.sh [path/to/published-vllm-h100-qwen3-32b.csv]
set -euo pipefail
cd "$(dirname "$0")/.."
csv="${1:-../shared/reference/measured/published-vllm-h100-qwen3-32b.csv}"
bin=./build/default/cli/servesim
[[ -x "$bin" ]] || { echo "error: build first (bash scripts/build.sh)" >&2; exit 2; }
[[ -r "$csv" ]] || { echo "error: cannot read $csv" >&2; exit 2; }

echo "| TP | ISL | OSL | concurrency | TTFT measured ms | TTFT servesim ms | error | TPOT measured ms | TPOT servesim ms | error |"
echo "|---|---|---|---|---|---|---|---|---|---|"
tail -n +2 "$csv" | while IFS=, read -r _ _ _ _ _ _ isl osl conc tp _ ttft tpot; do
  requests=$(( conc * 8 > 200 ? conc * 8 : 200 ))
  warmup=$(( conc * 2 ))
  out=$("$bin" simulate configs/validation/qwen3-32b-h100.json --json \
        --set parallel.tensor_parallel_size="$tp" --set workload.arrival.clients="$conc" \
        --set workload.prompt_tokens="$isl" --set workload.output_tokens="$osl" \
        --set workload.num_requests="$requests" --set metrics.warmup_requests="$warmup")
  flat=$(printf '%s' "$out" | tr -d '\n ')
  sim_ttft=$(printf '%s' "$flat" | sed -n 's/.*"ttft":{[^}]*"mean_ms":\([0-9.e+-]*\).*/\1/p')
  sim_tpot=$(printf '%s' "$flat" | sed -n 's/.*"tpot":{[^}]*"mean_ms":\([0-9.e+-]*\).*/\1/p')
  awk -v tp="$tp" -v isl="$isl" -v osl="$osl" -v c="$conc" -v mt="$ttft" -v st="$sim_ttft" \
      -v mp="$tpot" -v sp="$sim_tpot" 'BEGIN {
        printf "| %d | %d | %d | %d | %.1f | %.1f | %+.0f%% | %.2f | %.2f | %+.0f%% |\n",
               tp, isl, osl, c, mt, st, (st - mt) / mt * 100, mp, sp, (sp - mp) / mp * 100 }'
done | tee /tmp/servesim_published_rows.md | cat
awk -F'|' '{ gsub(/[ %+]/, "", $8); gsub(/[ %+]/, "", $11);
             t += ($8 < 0 ? -$8 : $8); p += ($11 < 0 ? -$11 : $11); n++ }
           END { printf "\nRows: %d. Mean absolute error: TTFT %.1f%%, TPOT %.1f%%\n", n, t / n, p / n }' \
    /tmp/servesim_published_rows.md
