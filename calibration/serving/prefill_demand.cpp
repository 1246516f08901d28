#include "calibration/serving/prefill_demand.h"

#include <cmath>

#include "models/batch_shape.h"
#include "models/roofline_cost_model.h"

namespace servesim {
namespace {

bool positive(double x) {
  return std::isfinite(x) && x > 0;
}

// The rate the run reports, or the one its closed loop's means imply.
std::optional<double> request_rate(const MeasuredRun& run) {
  const MetricsSummary& s = run.summary;
  if (positive(s.request_throughput)) return s.request_throughput;
  const bool closed = run.load.max_concurrency && *run.load.max_concurrency > 0 &&
                      std::isinf(run.load.request_rate_per_s) && !run.load.ramp_up;
  const double output = run.output_tokens_per_request;
  if (!closed || !positive(s.ttft.mean_s) || !positive(s.tpot.mean_s) || !(output >= 1)) {
    return std::nullopt;
  }
  const double cycle_s = s.ttft.mean_s + (output - 1) * s.tpot.mean_s;
  return *run.load.max_concurrency / cycle_s;
}

// One prompt of `tokens` in one step, every kernel at its peak and no host time.
double prefill_at_peak_s(const SimulationConfig& c, int tokens) {
  RooflineOptions peak = c.roofline;
  peak.compute_efficiency = 1;
  peak.memory_efficiency = 1;
  peak.attention_compute_efficiency = 1;
  peak.attention_memory_efficiency = 1;
  peak.kernel_launch_s = 0;
  peak.step_overhead_s = 0;
  peak.seq_overhead_s = 0;
  const RooflineCostModel roofline(c.model, c.gpu, c.parallel, c.engine, peak);
  BatchShape shape;
  shape.sliding_window = c.model.sliding_window;
  shape.add_sequence(tokens, 0, true, true);
  return roofline.predict(shape).total_s;
}

}  // namespace

std::optional<PrefillDemand> prefill_demand(const MeasuredRun& run,
                                            const SimulationConfig& config) {
  const double prompt = run.prompt_tokens_per_request;
  const std::optional<double> rate = request_rate(run);
  if (!(prompt >= 1) || !rate) return std::nullopt;
  PrefillDemand d;
  d.requests_per_s = *rate;
  d.prefill_at_peak_s = prefill_at_peak_s(config, static_cast<int>(std::lround(prompt)));
  d.busy = d.requests_per_s * d.prefill_at_peak_s;
  return d;
}

}  // namespace servesim
