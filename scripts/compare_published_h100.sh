#!/usr/bin/env bash
# Compares servesim's predictions with published vLLM 0.12.0 serving runs of Qwen3-32B on
# H100-SXM (closed loop at fixed concurrency, fixed input and output lengths; reference CSV
# from ai-dynamo/aiconfigurator's silicon sample, kept in the shared reference data). One
# prediction per row, with configs/validation/qwen3-32b-h100.json's defaults: vLLM's API server
# in front of the engine and every client starting at once, as `vllm bench serve
# --max-concurrency` starts them; a row whose `precision` says fp8 is simulated with fp8
# weights (engine.dtype). Prints a markdown table and the mean absolute percentage errors over
# all rows, split into the rows the host overheads were fitted on
# (input = output = 1024) and the held-out rest, and by weights when the rows mix them. Usage:
#   scripts/compare_published_h100.sh [--csv FILE]
#                                     [--protocol steady|inferencex|aiperf|aiconfigurator]
#                                     [--spread FRACTION] [--split] [--set KEY=VALUE]...
#                                     [--batch-size B] [--warmup-per-client K]
#   (--protocol: how the benchmark issued the rows, default aiconfigurator — docs/validation.md,
#   points 6 and 8;
#   aiconfigurator: aiperf's requests on the engine limits aiconfigurator's generator writes,
#   --max-num-seqs = clients, --max-num-batched-tokens = clients + ISL + 1500, --max-model-len =
#   ISL + OSL + 1500 — docs/validation.md, point 8; --batch-size B takes one B for every row
#   instead of its clients (one deployment swept over the concurrencies);
#   --warmup-per-client K, with aiperf or aiconfigurator, issues K x clients requests more and
#   leaves them out, as if the measured phase carried on from the warm-up (default 0: the
#   measured phase starts every client afresh);
#   --split, with a protocol that keeps the start in its means (all but steady), prints
#   instead the simulated mean TTFT of the first `clients` requests (sent at once) and of the
#   rest, and the rest's mean TTFT that the measured mean implies if the start is as simulated
#   — docs/validation.md, point 7;
#   --set goes to every simulate, e.g. --set service='"none"' for the engine alone;
#   --spread 0.3 draws each output length uniformly within ±30% of the row's, a device that
#   keeps simulated clients dispersed — docs/validation.md, point 3 — not a model of the runs)
# SERVESIM_BIN overrides the binary (default build/default/cli/servesim).
set -euo pipefail
cd "$(dirname "$0")/.."
csv=../shared/reference/measured/published-vllm-h100-qwen3-32b.csv
extra=()
spread=0
protocol=aiconfigurator
split=0
batch=0
warmup_k=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --csv) csv="$2"; shift 2 ;;
    --split) split=1; shift ;;
    --set) extra+=(--set "$2"); shift 2 ;;
    --spread) spread="$2"; shift 2 ;;
    --protocol) protocol="$2"; shift 2 ;;
    --batch-size) batch="$2"; shift 2 ;;
    --warmup-per-client) warmup_k="$2"; shift 2 ;;
    *) echo "error: unknown argument $1 (usage at the top of $0)" >&2; exit 2 ;;
  esac
done
bin="${SERVESIM_BIN:-./build/default/cli/servesim}"
[[ -x "$bin" ]] || { echo "error: build first (bash scripts/build.sh)" >&2; exit 2; }
[[ -r "$csv" ]] || { echo "error: cannot read $csv" >&2; exit 2; }
[[ $(tail -n +2 "$csv" | grep -c .) -gt 0 ]] ||
  { echo "error: $csv has no rows under its header (one run per line, as in the published CSV)" >&2; exit 2; }
awk -v f="$spread" 'BEGIN { exit !(f ~ /^[0-9]*\.?[0-9]+$/ && f < 1) }' ||
  { echo "error: --spread must be a fraction in [0, 1), e.g. 0.3 (got '$spread')" >&2; exit 2; }
[[ "$protocol" =~ ^(steady|inferencex|aiperf|aiconfigurator)$ ]] ||
  { echo "error: --protocol must be steady, inferencex, aiperf or aiconfigurator (got '$protocol')" >&2; exit 2; }
[[ "$protocol" == steady || "$spread" == 0 ]] ||
  { echo "error: --spread goes with --protocol steady; the other protocols draw their own lengths" >&2; exit 2; }
[[ "$batch" =~ ^[0-9]+$ && "$batch" -le 100000 ]] ||
  { echo "error: --batch-size must be a whole number of sequences up to 100000 (0: each row's clients; got '$batch')" >&2; exit 2; }
[[ "$batch" == 0 || "$protocol" == aiconfigurator ]] ||
  { echo "error: --batch-size goes with --protocol aiconfigurator (the generated engine limits)" >&2; exit 2; }
[[ "$warmup_k" =~ ^[0-9]+$ && "$warmup_k" -le 100 ]] ||
  { echo "error: --warmup-per-client must be a whole number, 0 to 100 (got '$warmup_k')" >&2; exit 2; }
[[ "$warmup_k" == 0 || "$protocol" == aiperf || "$protocol" == aiconfigurator ]] ||
  { echo "error: --warmup-per-client goes with --protocol aiperf or aiconfigurator" >&2; exit 2; }
[[ "$split" == 0 || "$warmup_k" == 0 ]] ||
  { echo "error: --split keeps the start in the means; drop --warmup-per-client" >&2; exit 2; }
[[ "$split" == 0 || "$protocol" != steady ]] ||
  { echo "error: --split needs a protocol whose means keep the start: --protocol inferencex, aiperf or aiconfigurator" >&2; exit 2; }

output_tokens() {  # the row's output length, or a uniform spread around it
  awk -v o="$1" -v f="$spread" 'BEGIN {
    if (f == 0) { print o; exit }
    printf "{\"type\":\"uniform\",\"min\":%d,\"max\":%d}\n", o * (1 - f), o * (1 + f) }'
}

range_ratio() {  # lengths uniform in [0.8 L, L], as bench_serving's --random-range-ratio 0.8
  awk -v l="$1" 'BEGIN { printf "{\"type\":\"uniform\",\"min\":%d,\"max\":%d}\n", l * 0.8, l }'
}
sort_weights() {  # the summary's first four lines as printed, the per-weights lines sorted
  awk 'NR <= 4 { print; next } { print | "sort" }'
}
rows=$(mktemp)
runs=$(mktemp -d)
trap 'rm -rf "$rows" "$runs"' EXIT

# Mean TTFT (ms) of the first `clients` requests, of the rest, and the rest's mean that the
# measured mean implies with that start: requests.csv of the row's run, clients, measured ms.
start_and_rest() {
  awk -F, -v c="$2" -v m="$3" '
    NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "ttft_s") col = i; next }
    { t = 1000 * $col; if ($1 < c) { a += t; na++ } else { b += t; nb++ } }
    END { printf "%.1f %.1f %.1f\n", a / na, b / nb, (m * (na + nb) - a) / nb }' "$1"
}

mean_ms() {  # metric, flattened JSON
  printf '%s' "$2" | sed -n "s/.*\"$1\":{[^}]*\"mean_ms\":\\([0-9.e+-]*\\).*/\\1/p"
}

if [[ "$split" == 1 ]]; then
  echo "| TP | weights | ISL | OSL | clients | TTFT measured | TTFT predicted | start (simulated) | rest (simulated) | rest (implied) | implied / simulated |"
else
  echo "| TP | weights | ISL | OSL | clients | TTFT measured | TTFT predicted | error | TPOT measured | TPOT predicted | error |"
fi
echo "|---|---|---|---|---|---|---|---|---|---|---|"
tail -n +2 "$csv" | while IFS=, read -r _ _ _ _ precision _ isl osl conc tp _ ttft tpot; do
  # A row that names its precision (fp8: `--quantization fp8`) served its weights in it.
  weights=()
  [[ -n "$precision" ]] && weights=(--set engine.dtype="\"$precision\"")
  if [[ "$protocol" == steady ]]; then
    requests=$(( conc * 8 > 200 ? conc * 8 : 200 ))
    warmup=$(( conc * 2 ))
    prompt="$isl"
    output="$(output_tokens "$osl")"
  elif [[ "$protocol" == aiperf || "$protocol" == aiconfigurator ]]; then
    requests=$(( conc * (20 + warmup_k) ))
    warmup=$(( conc * warmup_k ))
    prompt="$isl"
    output="$osl"
  else
    requests=$(( conc * 10 ))
    warmup=0
    prompt="$(range_ratio "$isl")"
    output="$(range_ratio "$osl")"
  fi
  limits=()
  seqs=$(( batch > 0 ? batch : conc ))
  [[ "$protocol" == aiconfigurator ]] &&
    limits=(--set engine.max_num_seqs="$seqs" --set engine.max_num_batched_tokens=$(( seqs + isl + 1500 ))
            --set engine.max_model_len=$(( isl + osl + 1500 )))
  folder=()
  [[ "$split" == 1 ]] && folder=(--out "$runs/row")
  out=$("$bin" simulate configs/validation/qwen3-32b-h100.json --json ${folder[@]+"${folder[@]}"} \
        --set parallel.tensor_parallel_size="$tp" --set workload.arrival.clients="$conc" \
        --set workload.prompt_tokens="$prompt" --set workload.output_tokens="$output" \
        --set workload.num_requests="$requests" --set metrics.warmup_requests="$warmup" \
        ${weights[@]+"${weights[@]}"} ${limits[@]+"${limits[@]}"} ${extra[@]+"${extra[@]}"} |
        tr -d '\n ')
  printf '%s %s %s %s %s %s %s %s %s\n' "$tp" "$isl" "$osl" "$conc" "$ttft" \
    "$(mean_ms ttft "$out")" "$tpot" "$(mean_ms tpot "$out")" "${precision:-bf16}" >> "$rows"
  if [[ "$split" == 1 ]]; then
    read -r start rest implied < <(start_and_rest "$runs/row/requests.csv" "$conc" "$ttft")
    awk -v s="$start" -v r="$rest" -v i="$implied" '{ printf "| %d | %s | %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
         $1, $9, $2, $3, $4, $5, $6, s, r, i, i / r }' <(tail -n 1 "$rows")
    continue
  fi
  awk '{ printf "| %d | %s | %d | %d | %d | %.1f | %.1f | %+.0f%% | %.2f | %.2f | %+.0f%% |\n",
         $1, $9, $2, $3, $4, $5, $6, 100 * ($6 - $5) / $5, $7, $8, 100 * ($8 - $7) / $7 }' \
    <(tail -n 1 "$rows")
done
awk 'function abs(x) { return x < 0 ? -x : x }
     { k = ($2 == 1024 && $3 == 1024) ? "fit" : "held";
              n[k]++; t[k] += abs($6 - $5) / $5; p[k] += abs($8 - $7) / $7
              nw[$9]++; tw[$9] += abs($6 - $5) / $5; pw[$9] += abs($8 - $7) / $7 }
     # A group without rows has no mean: it says so instead of printing a NaN.
     function errors(count, ttft, tpot) {
       return count ? sprintf("TTFT %.1f%%, TPOT %.1f%%", 100 * ttft / count, 100 * tpot / count) : "no rows"
     }
     END { na = n["fit"] + n["held"]
           printf "\nAll %d rows. Mean absolute error: %s.\n", na,
                  errors(na, t["fit"] + t["held"], p["fit"] + p["held"])
           printf "Input = output = 1024 (the host overheads were fitted on these %d rows): %s.\n",
                  n["fit"], errors(n["fit"], t["fit"], p["fit"])
           printf "Held out (%d rows): %s.\n", n["held"], errors(n["held"], t["held"], p["held"])
           for (w in nw) if (nw[w] < na)
             printf "%s weights (%d rows): TTFT %.1f%%, TPOT %.1f%%.\n",
                    w, nw[w], 100 * tw[w] / nw[w], 100 * pw[w] / nw[w] }' "$rows" | sort_weights
