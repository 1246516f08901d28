#include "sim/serving/run_report.h"

#include <algorithm>

namespace servesim {

RunReport::RunReport(const MetricsOptions& metrics, const WorkloadSpec& workload,
                     double step_warmup_s, Observer& observer, std::vector<TenantLabel> tenants)
    : observer_(observer), metrics_(metrics) {
  if (!tenants.empty()) by_tenant_ = std::make_unique<TenantMetrics>(std::move(tenants), metrics);
  if (!workload.steps.empty()) {  // stepped requests, or stepped agent users
    by_step_ = std::make_unique<StepwiseMetrics>(static_cast<int>(workload.steps.size()),
                                                 workload.step_duration_s, step_warmup_s, metrics);
  }
}

void RunReport::inter_token_gap(const RequestSpec& request, double gap_s) {
  metrics_.add_itl(gap_s, request.id, request.arrival_s);
  if (by_step_) by_step_->add_itl(gap_s, request.id, request.arrival_s, request.step_index);
  if (by_tenant_) by_tenant_->add_itl(request.tenant, gap_s, request.id, request.arrival_s);
}

void RunReport::request_left(const RequestRecord& record) {
  metrics_.add(record);
  if (by_step_) by_step_->add(record);
  if (by_tenant_) by_tenant_->add(record);
  observer_.on_request_done(record);
}

std::vector<MetricsSummary> RunReport::by_step() const {
  std::vector<MetricsSummary> steps;
  if (!by_step_) return steps;
  for (int step = 0; step < by_step_->steps(); ++step) steps.push_back(by_step_->summary(step));
  return steps;
}

std::vector<TenantSummary> RunReport::tenants(const MetricsSummary& whole) const {
  if (!by_tenant_) return {};
  return by_tenant_->summaries(whole);
}

TimeSample RunReport::sample(double now_s, int replica, const SchedulerStats& stats,
                             int tokens_in_step) {
  TimeSample s;
  s.time_s = now_s;
  s.replica = replica;
  s.running = stats.num_running;
  s.waiting = stats.num_waiting;
  s.kv_usage = stats.kv_usage;
  s.tokens_in_step = tokens_in_step;
  s.preemptions_total = static_cast<int>(stats.num_preemptions_total);
  return s;
}

void RunReport::count_admission(const SchedulerStats& stats, const SchedulerConfig& config,
                                int step_tokens, double step_s, AdmissionCounters& c) {
  c.peak_running = std::max(c.peak_running, stats.num_running);
  c.peak_kv_usage = std::max(c.peak_kv_usage, stats.kv_usage);
  if (stats.num_waiting == 0) return;
  c.waiting_s += step_s;
  if (stats.num_running >= config.max_num_seqs) {
    c.at_seq_cap_s += step_s;
  } else if (step_tokens >= config.max_num_batched_tokens) {
    c.at_token_budget_s += step_s;
  } else if (config.policy == SchedulingPolicy::kContinuous && config.enable_chunked_prefill) {
    c.at_kv_limit_s += step_s;
  }
}

ReplicaSummary RunReport::replica_summary(const SchedulerStats& stats,
                                          const SchedulerConfig& config, int64_t steps,
                                          double busy_s, const StepTime& op_totals,
                                          const AdmissionCounters& admission) {
  ReplicaSummary s;
  s.steps = steps;
  s.busy_s = busy_s;
  s.preemptions = stats.num_preemptions_total;
  s.prefix_cache_hit_rate = stats.prefix_cache_hit_rate();
  s.evicted_blocks = stats.num_evicted_blocks;
  s.kv_blocks_used_at_end = stats.kv_blocks_used;
  s.max_num_seqs = config.max_num_seqs;
  s.max_num_batched_tokens = config.max_num_batched_tokens;
  s.admission = admission;
  s.op_totals = op_totals;
  return s;
}

}  // namespace servesim
