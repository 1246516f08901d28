// make_serving_case: one measured run turned into what `calibrate serving` simulates — the
// deployment of the base scenario (the run's own TP/PP when it records them) serving the run's
// workload — and what it measured.
//
// The workload, from the most exact the run allows to the least:
//   - per-request data with send times: those arrivals and lengths, exactly (replay);
//   - per-request lengths without send times: the lengths in order, issued as the run's load
//     says (at most max_concurrency in flight; else open loop at the request rate with gamma
//     gaps of the run's burstiness; else all at once), as vllm bench serve issues them;
//   - aggregates only (a result without --save-detailed, a published row): fixed lengths from
//     the run's per-request lengths or its token totals, the same load shape, as many requests as
//     the run completed. Published rows say neither how many requests ran nor how their
//     lengths were drawn: the run's BenchmarkProtocol says (by default max(8 x concurrency,
//     200) requests of exact lengths with the first 2 x concurrency left out as warm-up).
// The engine's output lengths are exact (vllm bench's random dataset sets ignore_eos). The
// run's recorded vLLM version, when it has one, sets engine.vllm_version (whose memory rules
// size the KV cache), and its TP/PP the parallelism: the run is what was measured.
//
// Errors (ConfigError, one line naming the run): a run of another model or GPU than the base
// scenario's, a vLLM version servesim does not model, a run with no lengths, a run that
// measured no latency at all.
// Stateless; thread-safe.
#pragma once

#include "calibration/measured/measured_run.h"
#include "calibration/serving/serving_fit.h"
#include "models/catalog.h"

namespace servesim {

ServingFitCase make_serving_case(const MeasuredRun& run, const SimulationConfig& base,
                                 const Catalog& catalog);

// Which of `count` runs are held out for a fraction in [0, 1): evenly spaced through the list
// (run i when floor((i + 1) f) > floor(i f)), so the split is the same every time and covers the
// list's range; floor(count x fraction) runs, so at least one is left to fit on. Throws
// ConfigError when the fraction is outside [0, 1).
std::vector<bool> held_out_runs(size_t count, double fraction);

}  // namespace servesim
