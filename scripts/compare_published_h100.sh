#!/usr/bin/env bash
# Compares servesim's predictions with published vLLM serving runs (closed loop at fixed
# concurrency, fixed input and output lengths): by default the vLLM 0.12.0 runs of Qwen3-32B on
# H100-SXM from ai-dynamo/aiconfigurator's silicon sample, kept in the shared reference data;
# --csv takes any file of the same columns, each row on its own model and GPU (the `model` and
# `gpu` columns, mapped onto servesim's catalog; `engine_version` sets engine.vllm_version).
# One prediction per row, with configs/validation/qwen3-32b-h100.json's defaults: vLLM's API
# server in front of the engine and every client starting at once, as `vllm bench serve
# --max-concurrency` starts them; a row whose `precision` says fp8 is simulated with fp8
# weights (engine.dtype). Prints a markdown table (with model and GPU columns when the rows mix
# them) and the mean absolute percentage errors over all rows, split into the rows the host
# overheads were fitted on (Qwen3-32B on H100, input = output = 1024) and the held-out rest,
# and by weights and by GPU when the rows mix them. Usage:
#   scripts/compare_published_h100.sh [--csv FILE]
#                                     [--protocol steady|inferencex|aiperf|aiconfigurator|inferencemax]
#                                     [--spread FRACTION] [--split] [--set KEY=VALUE]...
#                                     [--batch-size B] [--warmup-per-client K]
#                                     [--dataset-entries N] [--check] [--provenance FILE]
#   (--protocol: how the benchmark issued the rows, default aiconfigurator — docs/validation.md,
#   points 6 and 8;
#   aiconfigurator: aiperf's requests on the engine limits aiconfigurator's generator writes,
#   --max-num-seqs = clients, --max-num-batched-tokens = clients + ISL + 1500, --max-model-len =
#   ISL + OSL + 1500 — docs/validation.md, point 8; --batch-size B takes one B for every row
#   instead of its clients (one deployment swept over the concurrencies);
#   inferencemax: InferenceMAX's vLLM recipe for its October 2025 runs (InferenceX's client;
#   `vllm serve --kv-cache-dtype fp8 --async-scheduling --no-enable-prefix-caching
#   --max-num-batched-tokens 8192 --max-num-seqs clients`, --max-model-len ISL + OSL + 20 for
#   1k/1k and + 200 with an 8k length, vLLM 0.10 unless the row names its version; on B200
#   --max-num-seqs 512 and cudagraph_mode FULL_DECODE_ONLY, as its 70b_fp8_b200 script) —
#   docs/validation.md, "Out of sample";
#   --warmup-per-client K, with aiperf or aiconfigurator, issues K x clients requests more and
#   leaves them out, as if the measured phase carried on from the warm-up (default 0: the
#   measured phase starts every client afresh);
#   --split, with a protocol that keeps the start in its means (all but steady), prints
#   instead the simulated mean TTFT of the first `clients` requests (sent at once) and of the
#   rest, and the rest's mean TTFT that the measured mean implies if the start is as simulated
#   — docs/validation.md, point 7;
#   --dataset-entries N: the benchmark sent N distinct prompts, each request one of them drawn at
#   random (aiperf's and genai-perf's --num-dataset-entries; 100 unless told otherwise in
#   aiperf 0.1 and genai-perf), so repeats hit vLLM's prefix cache (workload.distinct_prompts);
#   --check prints instead, per row, the request rate the measured TTFT and TPOT imply for its
#   clients (clients / (TTFT + (OSL - 1) x TPOT), true of any closed loop), servesim's time for
#   one prompt's prefill alone, and their product: the seconds of prefill per second the row
#   asks of the GPU; then the same with every kernel at the GPU's peak FLOP/s and bandwidth and
#   no host time (all-reduces as modelled). Above 1 at peak, the row cannot have been measured
#   as recorded with new prompts: its prompts repeated and hit the prefix cache, or its load
#   was lower — docs/validation.md, "Out of sample: Llama-3.1-8B";
#   --provenance FILE: what the rows' source records of each run (columns tp, precision, isl,
#   osl, concurrency, recorded_concurrency, upstream_id; default for the shared Qwen3-32B rows:
#   configs/validation/published-vllm-h100-qwen3-32b-provenance.csv); a row whose source
#   records no concurrency (recorded_concurrency empty) was not measured at the load its
#   concurrency column names, so the summary adds the errors over the rows that were, and names
#   the others — docs/validation.md, "Result";
#   --set goes to every simulate, e.g. --set service='"none"' for the engine alone;
#   --spread 0.3 draws each output length uniformly within ±30% of the row's, a device that
#   keeps simulated clients dispersed — docs/validation.md, point 3 — not a model of the runs)
# SERVESIM_BIN overrides the binary (default build/default/cli/servesim).
set -euo pipefail
export LC_ALL=C  # the summary's sorted lines and awk's numbers read the same on every machine
cd "$(dirname "$0")/.."
csv=../shared/reference/measured/published-vllm-h100-qwen3-32b.csv
provenance=configs/validation/published-vllm-h100-qwen3-32b-provenance.csv
extra=()
spread=0
protocol=aiconfigurator
split=0
batch=0
warmup_k=0
entries=""
check=0
provenance_given=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --csv) csv="$2"; [[ -n "$provenance_given" ]] || provenance=""; shift 2 ;;
    --provenance) provenance="$2"; provenance_given=1; shift 2 ;;
    --split) split=1; shift ;;
    --set) extra+=(--set "$2"); shift 2 ;;
    --spread) spread="$2"; shift 2 ;;
    --protocol) protocol="$2"; shift 2 ;;
    --batch-size) batch="$2"; shift 2 ;;
    --warmup-per-client) warmup_k="$2"; shift 2 ;;
    --dataset-entries) entries="$2"; shift 2 ;;
    --check) check=1; shift ;;
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
[[ "$protocol" =~ ^(steady|inferencex|aiperf|aiconfigurator|inferencemax)$ ]] ||
  { echo "error: --protocol must be steady, inferencex, aiperf, aiconfigurator or inferencemax (got '$protocol')" >&2; exit 2; }
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
[[ -z "$entries" || ( "$entries" =~ ^[1-9][0-9]*$ && "$entries" -le 1000000 ) ]] ||
  { echo "error: --dataset-entries must be a whole number of prompts, 1 to 1000000 (got '$entries')" >&2; exit 2; }
[[ "$check" == 0 || "$split" == 0 ]] ||
  { echo "error: --check and --split print different tables; give one" >&2; exit 2; }
[[ "$split" == 0 || "$warmup_k" == 0 ]] ||
  { echo "error: --split keeps the start in the means; drop --warmup-per-client" >&2; exit 2; }
catalog_model() {  # a Hugging Face id -> catalog name, as servesim's catalog resolves it
  [[ -n "$1" ]] && "$bin" models --resolve "$1" 2> /dev/null
}
catalog_gpu() {  # the sample's system names -> catalog names
  case "$1" in
    h100_sxm) echo H100-SXM ;; h200_sxm) echo H200 ;; a100_sxm) echo A100-80GB-SXM ;;
    b200_sxm) echo B200 ;; l40s) echo L40S ;; *) return 1 ;;
  esac
}
vllm_minor() {  # 0.12.0 -> 0.12, as engine.vllm_version takes it
  awk -F. '{ print $1 "." $2 }' <<< "$1"
}

# The rows' models and GPUs must be in servesim's catalog: checked before any simulation runs.
row=1
while IFS=, read -r _ version model gpu _; do
  row=$((row + 1))
  catalog_model "$model" > /dev/null ||
    { echo "error: $csv row $row: model '$model' is not in servesim's catalog (configs/models/); add it there or drop the row" >&2; exit 2; }
  catalog_gpu "$gpu" > /dev/null ||
    { echo "error: $csv row $row: gpu '$gpu' is not one this script maps (h100_sxm, h200_sxm, a100_sxm, b200_sxm, l40s)" >&2; exit 2; }
  [[ -z "$version" || "$version" =~ ^0\.[0-9]+(\.[0-9]+)?$ ]] ||
    { echo "error: $csv row $row: engine_version '$version' is not a vLLM release such as 0.12.0 (or empty)" >&2; exit 2; }
done < <(tail -n +2 "$csv")
[[ "$split" == 0 || "$protocol" != steady ]] ||
  { echo "error: --split needs a protocol whose means keep the start: --protocol inferencex, aiperf or aiconfigurator" >&2; exit 2; }

# Per row of $csv, in order: 1 if it was measured at the concurrency its row names (or no
# provenance was given), 0 if its source records no concurrency for it.
recorded=()
if [[ -n "$provenance" ]]; then
  header=tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id
  [[ -r "$provenance" ]] || { echo "error: cannot read --provenance $provenance" >&2; exit 2; }
  [[ "$(head -n 1 "$provenance")" == "$header" ]] ||
    { echo "error: $provenance: its header must be $header" >&2; exit 2; }
  flags=$(awk -F, -v prov="$provenance" -v csv="$csv" '
    function refuse(msg) { print "error: " msg > "/dev/stderr"; failed = 1; exit 2 }
    FNR == 1 { next }
    NR == FNR {
      if (NF != 7) refuse(sprintf("%s row %d: 7 fields expected (%s), got %d", prov, FNR, "tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id", NF))
      if ($6 != "" && $6 !~ /^[1-9][0-9]*$/) refuse(sprintf("%s row %d: recorded_concurrency must be a whole number of clients or empty (none recorded), got %s", prov, FNR, $6))
      key = $1 "," $2 "," $3 "," $4 "," $5
      if (key in rec) refuse(sprintf("%s row %d: a second entry for the run at TP %s, %s/%s, %s clients", prov, FNR, $1, $3, $4, $5))
      rec[key] = $6; next }
    { key = $10 "," $5 "," $7 "," $8 "," $9
      if (!(key in rec)) refuse(sprintf("%s row %d (TP %s, %s/%s, %s clients) has no entry in %s; add one or leave --provenance out", csv, FNR, $10, $7, $8, $9, prov))
      if (rec[key] != "" && rec[key] != $9) refuse(sprintf("%s row %d names %s clients where %s records %s for that run", csv, FNR, $9, prov, rec[key]))
      print (rec[key] == "" ? 0 : 1) }
    END { if (failed) exit 2 }' "$provenance" "$csv")
  mapfile -t recorded <<< "$flags"
fi

inferencemax_model_len() {  # its 70B launch scripts' rule: 1k/1k + 20, an 8k length + 200, else 10240
  if [[ "$1" == 1024 && "$2" == 1024 ]]; then echo $(( $1 + $2 + 20 ))
  elif [[ "$1" == 8192 || "$2" == 8192 ]]; then echo $(( $1 + $2 + 200 ))
  else echo 10240; fi
}
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

# One simulate of the current row (its TP, model and GPU, weights, the protocol's engine limits
# and the script's --set), flattened JSON: the arguments before `--` come first (its workload,
# an output folder), those after it last, overriding the rest.
simulate_row() {
  local before=()
  while [[ "$1" != -- ]]; do before+=("$1"); shift; done
  shift
  "$bin" simulate configs/validation/qwen3-32b-h100.json --json "${before[@]}" \
    --set parallel.tensor_parallel_size="$tp" "${deployment[@]}" ${weights[@]+"${weights[@]}"} \
    ${limits[@]+"${limits[@]}"} ${extra[@]+"${extra[@]}"} "$@" | tr -d '\n '
}

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

# A file of several deployments names each row's model and GPU in two columns more.
pairs=$(tail -n +2 "$csv" | awk -F, '{ print $3 "," $4 }' | sort -u | wc -l)
header_prefix=""
[[ "$pairs" -gt 1 ]] && header_prefix="| model | GPU "
printf '%s' "$header_prefix"
if [[ "$check" == 1 ]]; then
  echo "| TP | weights | ISL | OSL | clients | TTFT measured | TPOT measured | requests/s implied | one prefill alone (ms) | prefill s per s | at peak (ms) | at peak s per s |"
elif [[ "$split" == 1 ]]; then
  echo "| TP | weights | ISL | OSL | clients | TTFT measured | TTFT predicted | start (simulated) | rest (simulated) | rest (implied) | implied / simulated |"
else
  echo "| TP | weights | ISL | OSL | clients | TTFT measured | TTFT predicted | error | TPOT measured | TPOT predicted | error |"
fi
[[ "$pairs" -gt 1 ]] && printf '|---|---'
if [[ "$check" == 1 ]]; then echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
else echo "|---|---|---|---|---|---|---|---|---|---|---|"; fi
index=0
tail -n +2 "$csv" | while IFS=, read -r _ version model gpu precision _ isl osl conc tp _ ttft tpot; do
  measured_at_clients="${recorded[$index]:-1}"
  index=$((index + 1))
  # A row that names its precision (fp8: `--quantization fp8`) served its weights in it.
  weights=()
  [[ -n "$precision" ]] && weights=(--set engine.dtype="\"$precision\"")
  name=$(catalog_model "$model")
  hardware=$(catalog_gpu "$gpu")
  [[ -z "$version" && "$protocol" == inferencemax ]] && version=0.10.2
  deployment=(--set model="\"$name\"" --set gpu="\"$hardware\"")
  [[ -n "$version" ]] && deployment+=(--set engine.vllm_version="\"$(vllm_minor "$version")\"")
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
  [[ "$protocol" == inferencemax ]] &&
    limits=(--set engine.max_num_seqs="$conc" --set engine.max_num_batched_tokens=8192
            --set engine.max_model_len="$(inferencemax_model_len "$isl" "$osl")"
            --set engine.kv_cache_dtype='"fp8"' --set engine.async_scheduling=true
            --set engine.enable_prefix_caching=false)
  # Its B200 script (benchmarks/70b_fp8_b200_docker.sh until the 70B runs ended, 2025-10-29)
  # captures whole-model graphs for decode batches only and admits 512 sequences.
  [[ "$protocol" == inferencemax && "$hardware" == B200 ]] &&
    limits+=(--set engine.max_num_seqs=512 --set engine.cudagraph_mode='"FULL_DECODE_ONLY"')
  [[ -n "$entries" ]] && limits+=(--set workload.distinct_prompts="$entries")
  if [[ "$check" == 1 ]]; then
    # One prompt alone on the engine, as servesim prices it and with every kernel at the GPU's
    # peak and no host time: no real run prefilled faster than the second.
    alone=()
    for speed in default peak; do
      at=()
      [[ "$speed" == peak ]] && at=(--set cost_model.compute_efficiency=1
        --set cost_model.memory_efficiency=1 --set cost_model.attention_compute_efficiency=1
        --set cost_model.attention_memory_efficiency=1 --set cost_model.step_overhead_ms=0
        --set cost_model.seq_overhead_us=0 --set cost_model.kernel_launch_us=0)
      out=$(simulate_row --set workload.arrival.clients=1 --set workload.prompt_tokens="$isl" \
              --set workload.output_tokens=1 --set workload.num_requests=1 \
              --set metrics.warmup_requests=0 -- --set service='"none"' ${at[@]+"${at[@]}"})
      alone+=("$(mean_ms ttft "$out")")
    done
    printf '%s %s %s %s %s %s %s %s %s\n' "$tp" "$isl" "$osl" "$conc" "$ttft" "$tpot" \
      "${alone[0]}" "${precision:-bf16}" "${alone[1]}" >> "$rows"
    [[ "$pairs" -gt 1 ]] && printf '| %s | %s ' "$name" "$hardware"
    awk '{ rate = $4 / (($5 + ($3 - 1) * $6) / 1000)
           printf "| %d | %s | %d | %d | %d | %.1f | %.2f | %.2f | %.1f | %.2f | %.1f | %.2f |\n",
                  $1, $8, $2, $3, $4, $5, $6, rate, $7, rate * $7 / 1000, $9, rate * $9 / 1000 }' \
      <(tail -n 1 "$rows")
    continue
  fi
  folder=()
  [[ "$split" == 1 ]] && folder=(--out "$runs/row")
  out=$(simulate_row ${folder[@]+"${folder[@]}"} --set workload.arrival.clients="$conc" \
          --set workload.prompt_tokens="$prompt" --set workload.output_tokens="$output" \
          --set workload.num_requests="$requests" --set metrics.warmup_requests="$warmup" --)
  printf '%s %s %s %s %s %s %s %s %s %s %s %s\n' "$tp" "$isl" "$osl" "$conc" "$ttft" \
    "$(mean_ms ttft "$out")" "$tpot" "$(mean_ms tpot "$out")" "${precision:-bf16}" \
    "$name" "$hardware" "$measured_at_clients" >> "$rows"
  [[ "$pairs" -gt 1 ]] && printf '| %s | %s ' "$name" "$hardware"
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
if [[ "$check" == 1 ]]; then
  awk '{ n++; rate = $4 / (($5 + ($3 - 1) * $6) / 1000)
         if (rate * $7 / 1000 > 1) over++
         if (rate * $9 / 1000 > 1) impossible++ }
       END { printf "\n%d of %d rows ask more than one second of prefill per second of the GPU as servesim prices it (a prefill priced too slow, or a row not measured as recorded), %d even with every kernel at its peak and no host time%s\n", over, n, impossible,
                    impossible ? ": measured as recorded, those rows\047 prompts must have repeated (prefix-cache hits) or their load was lower." : "." }' "$rows"
  exit 0
fi
# What both summaries below share, over the lines of $rows: |error| of TTFT and TPOT, the rows the
# host overheads were fitted on, and a group's means ("no rows" for an empty group, not a NaN).
summary_functions='
     function abs(x) { return x < 0 ? -x : x }
     function ttft_error() { return abs($6 - $5) / $5 }
     function tpot_error() { return abs($8 - $7) / $7 }
     function fit_or_held() { return ($10 == "Qwen3-32B" && $11 == "H100-SXM" && $2 == 1024 && $3 == 1024) ? "fit" : "held" }
     function errors(count, ttft, tpot) {
       return count ? sprintf("TTFT %.1f%%, TPOT %.1f%%", 100 * ttft / count, 100 * tpot / count) : "no rows"
     }'
awk "$summary_functions"'
     { k = fit_or_held(); n[k]++; t[k] += ttft_error(); p[k] += tpot_error()
       nw[$9]++; tw[$9] += ttft_error(); pw[$9] += tpot_error()
       ng[$11]++; tg[$11] += ttft_error(); pg[$11] += tpot_error() }
     END { na = n["fit"] + n["held"]
           printf "\nAll %d rows. Mean absolute error: %s.\n", na,
                  errors(na, t["fit"] + t["held"], p["fit"] + p["held"])
           printf "Qwen3-32B on H100, input = output = 1024 (the host overheads were fitted on these %d rows): %s.\n",
                  n["fit"], errors(n["fit"], t["fit"], p["fit"])
           printf "Held out (%d rows): %s.\n", n["held"], errors(n["held"], t["held"], p["held"])
           for (w in nw) if (nw[w] < na)
             printf "%s weights (%d rows): TTFT %.1f%%, TPOT %.1f%%.\n",
                    w, nw[w], 100 * tw[w] / nw[w], 100 * pw[w] / nw[w]
           for (g in ng) if (ng[g] < na)
             printf "on %s (%d rows): TTFT %.1f%%, TPOT %.1f%%.\n",
                    g, ng[g], 100 * tg[g] / ng[g], 100 * pg[g] / ng[g] }' "$rows" | sort_weights
# The rows measured at the load they name, when the provenance says some were not.
awk -v prov="$provenance" "$summary_functions"'
     $12 == 0 { gone = gone sprintf("%sTP %d %s %d/%d (%d in its clients column)", gone == "" ? "" : "; ", $1, $9, $2, $3, $4); next }
     { k = fit_or_held(); n[k]++; t[k] += ttft_error(); p[k] += tpot_error() }
     END { if (gone == "") exit
           printf "Measured at the concurrency they name (%d rows): %s; the %d fitted on: %s; held out (%d): %s.\n",
                  n["fit"] + n["held"], errors(n["fit"] + n["held"], t["fit"] + t["held"], p["fit"] + p["held"]),
                  n["fit"], errors(n["fit"], t["fit"], p["fit"]), n["held"], errors(n["held"], t["held"], p["held"])
           printf "Not measured at the concurrency they name (their source records none, %s): %s.\n", prov, gone }' "$rows"
