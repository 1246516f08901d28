#include "plan/pareto_frontier.h"

#include <algorithm>
#include <vector>

namespace servesim {
namespace {

std::vector<ParetoPoint> collect_points(const PlanState& state) {
  std::vector<size_t> rank_of(state.order.size());
  for (size_t r = 0; r < state.order.size(); ++r) rank_of[state.order[r]] = r;
  std::vector<ParetoPoint> points;
  for (size_t i = 0; i < state.candidates.size(); ++i) {
    const PlanCandidate& c = state.candidates[i];
    auto add = [&](const MetricsSummary& m, const char* load) {
      if (!(m.tpot.mean_s > 0) || !(m.output_throughput > 0)) return;
      points.push_back(
          {rank_of[i], load, 1.0 / m.tpot.mean_s, m.output_throughput / c.gpus_per_replica});
    };
    if (c.sustained > 0) add(c.at_sustained, "slo");
    if (state.probes[i].summary.completed > 0) add(state.probes[i].summary, "saturation");
  }
  return points;
}

}  // namespace

void find_pareto_frontier(PlanState& state) {
  std::vector<ParetoPoint> points = collect_points(state);
  std::sort(points.begin(), points.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    if (a.tokens_per_s_per_user != b.tokens_per_s_per_user)
      return a.tokens_per_s_per_user > b.tokens_per_s_per_user;
    if (a.tokens_per_s_per_gpu != b.tokens_per_s_per_gpu)
      return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
    return a.candidate < b.candidate;
  });
  std::vector<ParetoPoint>& frontier = state.report.pareto;
  double best_per_gpu = -1;  // output tokens/s per GPU of the last point kept
  for (const ParetoPoint& p : points) {
    if (p.tokens_per_s_per_gpu > best_per_gpu) {
      best_per_gpu = p.tokens_per_s_per_gpu;
      frontier.push_back(p);
    }
  }
  std::reverse(frontier.begin(), frontier.end());
}

}  // namespace servesim
