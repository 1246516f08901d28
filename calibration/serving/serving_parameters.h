// ServingParameters: the few physical quantities `servesim calibrate serving` fits to measured
// runs of a deployment — how close the GPU's kernels come to its peaks, what the engine's host
// loop costs per step and per sequence, and how fast the API server's CPU is — with their
// bounds, and how they are read from and written into a SimulationConfig.
//
//   compute_efficiency  fraction of dense peak FLOP/s GEMMs reach     (0.1, 1]   prefill, TTFT
//   memory_efficiency   fraction of memory bandwidth kernels reach    (0.2, 1]   decode, TPOT
//   step_overhead_s     host time per engine step, seconds            (0, 20 ms]
//   seq_overhead_s      host time per scheduled sequence per step, s  (0, 500 us]
//   frontend_scale      the API server's costs x this (1 = vLLM 0.12  (0.1, 10]  TTFT, ITL
//                       on the reference CPU, sim/service/vllm_frontend.h); only with a service
//   rtt_s               the client <-> server round trip, seconds: a  [0.1 ms, 1 s]  TTFT, E2E
//                       fixed latency per request outside the server (network, proxies, the
//                       load generator's own hops); only with a service whose round trip is
//                       fixed (service.network.rtt_s a number, 0 by default)
//
// Plain values and stateless functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calibration/serving/bounded_least_squares.h"
#include "sim/run/simulation.h"

namespace servesim {

struct ServingParameters {
  double compute_efficiency = 0;  // fraction of dense peak FLOP/s
  double memory_efficiency = 0;   // fraction of memory bandwidth
  double step_overhead_s = 0;     // seconds per engine step
  double seq_overhead_s = 0;      // seconds per scheduled sequence per step
  double frontend_scale = 1;      // multiplier on the API server's CPU costs
  double rtt_s = 0;               // client <-> server round trip, seconds
};

// Names in fit order, as --fit takes them.
const std::vector<std::string_view>& serving_parameter_names();

// Which measurements pin a parameter down: decode-side ones set the time between tokens
// (memory_efficiency, step_overhead_s, seq_overhead_s), prefill-side ones the time to the
// first token (compute_efficiency, frontend_scale, rtt_s). REQUIRES: a known name.
enum class ServingStage { kDecode, kPrefill };
ServingStage serving_parameter_stage(std::string_view name);

// The values a config runs with now: its explicit roofline options, else the GPU catalog's
// efficiencies and the roofline's default overheads; frontend_scale 1; its round trip (0
// without a service path).
ServingParameters serving_parameters_of(const SimulationConfig& config);

// `base` with the parameters written into its roofline options and, when the service path is
// on, its frontend costs multiplied by p.frontend_scale (relative to base's own costs) and its
// round trip set to p.rtt_s where that differs from base's.
SimulationConfig with_serving_parameters(const SimulationConfig& base, const ServingParameters& p);

// Whether --fit fits the parameter when it names none: all but rtt_s, fitted when named.
// Throws ConfigError for an unknown name.
bool serving_parameter_by_default(std::string_view name);

// Whether `base` has what the parameter acts on: frontend_scale and rtt_s need the service
// path, rtt_s a fixed round trip (a fitted number would replace a distribution's spread).
// What --fit fits by default: the parameters by default that apply. REQUIRES: a known name.
bool serving_parameter_applies(std::string_view name, const SimulationConfig& base);

// The search box of each named parameter, started at `initial`. Throws ConfigError naming an
// unknown name (and the known ones), a repeated one, and one that does not apply to `base`
// (serving_parameter_applies), with the fix.
std::vector<BoundedParameter> serving_search_space(const std::vector<std::string>& names,
                                                   const ServingParameters& initial,
                                                   const SimulationConfig& base);

// Sets the named parameters from x (ordered as `names`), leaving the others as in `p`.
ServingParameters serving_parameters_from(const std::vector<std::string>& names,
                                          const std::vector<double>& x, ServingParameters p);

// The value of one named parameter. REQUIRES: a known name.
double serving_parameter_value(const ServingParameters& p, std::string_view name);

}  // namespace servesim
