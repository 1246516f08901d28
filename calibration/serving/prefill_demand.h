// PrefillDemand: how much prefill a measured run asked of its GPUs, against the least time a
// prefill can take — the check that tells a run servesim cannot match from one that was not
// measured as its record says.
//
// The request rate is the run's own where it reports one (vllm bench serve, a loadtest);
// a published closed-loop row records only clients and means, and in a closed loop without
// think time each client's cycle is its TTFT plus (output - 1) x TPOT, so clients / cycle is
// the rate whatever happened inside the run. Times one prompt's prefill with every kernel at
// the GPU's peak FLOP/s and bandwidth and no host time (the roofline at efficiency 1, the
// all-reduces as modelled), that is the least GPU time per second the run's prefills needed.
// Above 1 the run cannot have prefilled new prompts: its prompts repeated and hit the prefix
// cache (a benchmark cycling through a small dataset) or its load was lower than recorded.
//
// Plain values and a stateless function; thread-safe.
#pragma once

#include <optional>

#include "calibration/measured/measured_run.h"
#include "sim/run/simulation.h"

namespace servesim {

struct PrefillDemand {
  double requests_per_s = 0;     // the run's request rate
  double prefill_at_peak_s = 0;  // seconds: one prompt's prefill, every kernel at its peak
  double busy = 0;               // requests_per_s x prefill_at_peak_s: seconds per second
};

// `config` is the run's simulated deployment (make_serving_case's). Nullopt when the run
// states no prompt length, or neither a request rate nor a closed loop's clients with its
// TTFT and TPOT means.
std::optional<PrefillDemand> prefill_demand(const MeasuredRun& run, const SimulationConfig& config);

}  // namespace servesim
