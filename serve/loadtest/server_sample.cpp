#include "serve/loadtest/server_sample.h"

#include <cmath>
#include <initializer_list>
#include <string_view>

namespace servesim {
namespace {

bool first_of(const std::vector<PromSample>& samples, std::initializer_list<std::string_view> names,
              double& value) {
  for (std::string_view name : names) {
    if (prom_sum(samples, name, value)) return true;
  }
  return false;
}

}  // namespace

bool server_sample(const std::vector<PromSample>& samples, ServerSample& out) {
  out = {};
  if (!first_of(samples,
                {"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size"},
                out.running)) {
    return false;
  }
  first_of(samples, {"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size"},
           out.waiting);
  first_of(samples, {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"},
           out.kv_usage);
  first_of(samples, {"vllm:num_preemptions_total", "vllm:num_preemptions"}, out.preemptions);
  return true;
}

TimeSample to_time_sample(const ServerSample& sample, double time_s) {
  TimeSample s;
  s.time_s = time_s;
  s.running = static_cast<int>(std::lround(sample.running));
  s.waiting = static_cast<int>(std::lround(sample.waiting));
  s.kv_usage = sample.kv_usage;
  s.preemptions_total = static_cast<int>(std::lround(sample.preemptions));
  return s;
}

}  // namespace servesim
