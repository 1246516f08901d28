#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang-16 with ASan + UBSan) and runs each on its
# corpus. A finding (crash, sanitizer report, leak, an input over 1 s, an exception other than
# ConfigError) stops that target with the input saved under <build>/fuzz-work/artifacts/ and
# makes the script exit 1; the table at the end gives executions and seconds per target.
#
#   scripts/fuzz.sh --smoke                  CI: every target, its corpus then 5 s of fuzzing
#   scripts/fuzz.sh --runs 10000000 --max-time 3600 [TARGET...]
#                                            a long run (the numbers docs/reliability.md gives)
#
# Options: --build-dir DIR (default build/fuzz), --smoke-seconds S (default 5), --jobs N for
# the build (default nproc). Runs at nice 19, one target at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=build/fuzz
runs=-1
max_time=0
smoke_s=5
jobs=$(nproc)
smoke=0
targets=()
while (($#)); do
  case "$1" in
    --smoke) smoke=1 ;;
    --runs) runs=$2; shift ;;
    --max-time) max_time=$2; shift ;;
    --smoke-seconds) smoke_s=$2; shift ;;
    --build-dir) build=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
if ((smoke)); then
  max_time=$smoke_s
elif ((runs < 0 && max_time == 0)); then
  echo "fuzz.sh: give --smoke, or --runs N and/or --max-time S" >&2
  exit 2
fi

if [[ ! -f $build/build.ninja ]]; then
  CC=clang-16 CXX=clang++-16 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSERVESIM_FUZZ=ON -DSERVESIM_GUI=OFF -DSERVESIM_CUDA=OFF -DSERVESIM_MPI=OFF \
    -DSERVESIM_BUILD_BENCH=OFF >/dev/null
fi
mkdir -p "$build"
work=$build/fuzz-work
mkdir -p "$work/artifacts"
# Several runs may share a build (one chain of targets each): they build one at a time, and a
# target is fuzzed by one run at a time, since its scratch corpus and log are shared.
if ! flock "$work/build.lock" nice -n 19 ninja -C "$build" -j "$jobs" fuzz_targets \
    >"$work/build.log.$$" 2>&1; then
  cat "$work/build.log.$$" >&2
  rm -f "$work/build.log.$$"
  exit 1
fi
mv "$work/build.log.$$" "$work/build.log"
if ((${#targets[@]} == 0)); then
  for dir in tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

# A timeout on a machine others share may be this process starved at nice 19 rather than a
# slow input: its input is run again alone, at normal priority and up to three times, and when
# one of those passes, fuzzing resumes (the "restarts" column counts these); one that times
# out every time is a finding. (A re-run at nice 19 beside two compile jobs once timed out an
# input that takes 0.1 s.)
rerun_passes() {
  local bin=$1 unit=$2
  for _ in 1 2 3; do
    "$bin" -timeout=1 "$unit" >/dev/null 2>&1 && return 0
  done
  return 1
}
failed=0
printf '%-26s %12s %8s %8s  %s\n' target executions seconds restarts result
for t in "${targets[@]}"; do
  bin=$build/tests/fuzz/$t
  [[ -x $bin ]] || { echo "fuzz.sh: no target $t in $build/tests/fuzz" >&2; exit 2; }
  exec {lock}>"$work/$t.lock"
  if ! flock -n "$lock"; then
    echo "fuzz.sh: another run is fuzzing $t in $build; wait for it or give --build-dir" >&2
    exit 2
  fi
  # New inputs go to a scratch corpus; the committed seeds (tests/fuzz/corpus/$t) stay as they are.
  scratch=$work/corpus/$t
  ((smoke)) && rm -rf "$scratch"
  mkdir -p "$scratch"
  log=$work/$t.log
  : >"$log"
  start=$(date +%s)
  executions=0
  restarts=0
  result=ok
  while true; do
    elapsed=$(($(date +%s) - start))
    left_runs=$runs
    ((runs >= 0)) && left_runs=$((runs - executions))
    args=(-timeout=1 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=8192 -print_final_stats=1
          -dict="tests/fuzz/$t.dict" -artifact_prefix="$work/artifacts/$t-" -runs="$left_runs")
    if ((max_time > 0)); then
      ((max_time - elapsed > 0)) || break
      args+=(-max_total_time=$((max_time - elapsed)))
    fi
    ((runs < 0 || left_runs > 0)) || break
    status=0
    nice -n 19 "$bin" "${args[@]}" "$scratch" "tests/fuzz/corpus/$t" >"$log.part" 2>&1 || status=$?
    cat "$log.part" >>"$log"
    done_now=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log.part" | tail -1)
    executions=$((executions + ${done_now:-0}))
    ((status == 0)) && break
    unit=$(sed -n 's/.*Test unit written to //p' "$log.part" | tail -1)
    if grep -q 'ERROR: libFuzzer: timeout' "$log.part" && [[ -n $unit ]] &&
       rerun_passes "$bin" "$unit"; then
      restarts=$((restarts + 1))
      mkdir -p "$work/starved"
      mv "$unit" "$work/starved/"
      continue
    fi
    result="FINDING (see $log)"
    failed=1
    break
  done
  rm -f "$log.part"
  exec {lock}>&-
  printf '%-26s %12s %8s %8s  %s\n' "$t" "$executions" "$(($(date +%s) - start))" "$restarts" "$result"
done
exit "$failed"
