#!/usr/bin/env bash
# Configures and builds one CMake preset (default: "default") into build/<preset>. A configure
# that fails on a missing package prints the one line that names it (the full log otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake --preset "$preset" >"$log" 2>&1; then
  grep -E '^servesim: .* not found: ' "$log" >&2 || cat "$log" >&2
  exit 1
fi
grep -E '^-- servesim: ' "$log" || true
cmake --build --preset "$preset" -j "$(nproc)"
