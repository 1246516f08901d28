# Breaks scripts/compare_published_h100.sh's table down: mean TTFT |error| and signed error per
# GPU and lengths (per lengths alone for a table of one deployment, which has no model and GPU
# columns); per GPU and TP, and per GPU, TP and input length, the mean |error| and signed error
# of TTFT and TPOT, the mean TTFT measured minus predicted (ms) and the mean measured TPOT (ms);
# the medians and counts within 20% (TTFT) and 10% (TPOT), and the TTFT error over the rows
# whose measured TTFT is under 5 s. Usage:
#   bash scripts/compare_published_h100.sh --csv FILE ... | awk -F'|' -f scripts/error_breakdown.awk
# Cells of a table row with model and GPU columns: 3 GPU, 4 TP, 6 ISL, 7 OSL, 9 TTFT measured,
# 10 TTFT predicted, 11 TTFT error, 12 TPOT measured, 14 TPOT error; without them every cell
# sits two to the left.
function abs(x) { return x < 0 ? -x : x }
/^\| TP \| weights/ { shift = 2 }
/^\| [0-9]/ && shift == 2 || /^\| [A-Za-z]/ && $4 ~ /^ [0-9]+ $/ {
  g = shift ? "all" : $3; gsub(/ /, "", g); k = g " " ($(6 - shift) + 0) "/" ($(7 - shift) + 0)
  t = $(11 - shift) + 0; p = $(14 - shift) + 0
  add(k, t, p); lengths[k] = 1
  tp = g " TP " ($(4 - shift) + 0); add(tp, t, p); add(tp " input " ($(6 - shift) + 0), t, p)
  ts[++m] = abs(t); ps[m] = abs(p); w20 += abs(t) <= 20; w10 += abs(p) <= 10
  if ($(9 - shift) + 0 < 5000) { ns++; sum += abs(t) }
}
# Accumulates one row's errors (t, p: percent) and milliseconds under the group key `k`.
function add(k, t, p) {
  gn[k]++; gat[k] += abs(t); gst[k] += t; gap[k] += abs(p); gsp[k] += p
  gms[k] += $(9 - shift) - $(10 - shift); gtpot[k] += $(12 - shift)
}
function median(a, c,   i, j, x) {
  for (i = 2; i <= c; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
END {
  if (m == 0) { print "no table rows: pipe in scripts/compare_published_h100.sh's table"; exit 1 }
  # Per lengths: TTFT alone; per TP and per TP and input: everything add() keeps.
  for (k in lengths)
    printf "%s: TTFT %.1f%% (signed %+.1f%%)\n", k, gat[k] / gn[k], gst[k] / gn[k] | "sort"
  close("sort")
  for (k in gn)
    if (!(k in lengths)) printf "%s (%d rows): TTFT %.1f%% (signed %+.1f%%), measured - predicted %.0f ms; TPOT %.1f%% (signed %+.1f%%), measured %.2f ms\n",
           k, gn[k], gat[k] / gn[k], gst[k] / gn[k], gms[k] / gn[k], gap[k] / gn[k], gsp[k] / gn[k], gtpot[k] / gn[k] | "sort"
  close("sort")
  printf "TTFT median %.1f%%, %d of %d within 20%%; TPOT median %.1f%%, %d within 10%%\n",
         median(ts, m), w20, m, median(ps, m), w10
  if (ns) printf "rows with measured TTFT under 5 s: %d, TTFT %.1f%%\n", ns, sum / ns
}
