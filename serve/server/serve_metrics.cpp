#include "serve/server/serve_metrics.h"

#include <algorithm>
#include <charconv>

namespace servesim {
namespace {

// vLLM 0.10's buckets (vllm/v1/metrics/loggers.py).
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                          0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                          20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kTpotBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
const std::vector<double> kLatencyBuckets = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                             5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                             60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
const std::vector<double> kIterationBuckets = {1,   8,    16,   32,   64,   128,  256,
                                               512, 1024, 2048, 4096, 8192, 16384};

// 1, 2, 5, 10, 20, 50, ... up to max_value (vLLM's build_1_2_5_buckets).
std::vector<double> buckets_1_2_5(int max_value) {
  std::vector<double> b;
  for (double scale = 1;; scale *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m * scale > max_value) return b;
      b.push_back(m * scale);
    }
  }
}

// Shortest round-trip decimal, with ".0" on whole numbers as Python's client writes them.
std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos && s.find("inf") == std::string::npos) s += ".0";
  return s;
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, const std::string& labels, double v) {
  out += name + "{" + labels + "} " + number(v) + "\n";
}

}  // namespace

PromHistogram::PromHistogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void PromHistogram::observe(double value) {
  const size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void PromHistogram::render(std::string& out, const std::string& name,
                           const std::string& labels) const {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " +
           number(static_cast<double>(cumulative)) + "\n";
  }
  out += name + "_sum{" + labels + "} " + number(sum_) + "\n";
  out += name + "_count{" + labels + "} " + number(static_cast<double>(count_)) + "\n";
}

ServeMetrics::ServeMetrics(std::string model_name, int max_model_len)
    : labels_("model_name=\"" + std::move(model_name) + "\",engine=\"0\""),
      ttft_(kTtftBuckets),
      token_gap_(kTpotBuckets),
      request_tpot_(kTpotBuckets),
      e2e_(kLatencyBuckets),
      queue_(kLatencyBuckets),
      prefill_(kLatencyBuckets),
      decode_(kLatencyBuckets),
      prompt_len_(buckets_1_2_5(max_model_len)),
      generation_len_(buckets_1_2_5(max_model_len)),
      iteration_tokens_(kIterationBuckets) {}

void ServeMetrics::observe_first_token(double ttft_s, int prompt_tokens) {
  const std::lock_guard lock(mu_);
  ttft_.observe(ttft_s);
  prompt_tokens_ += prompt_tokens;
}

void ServeMetrics::observe_token_gap(double gap_s) {
  const std::lock_guard lock(mu_);
  token_gap_.observe(gap_s);
}

void ServeMetrics::observe_finished(const FinishedRequestTimes& f) {
  const std::lock_guard lock(mu_);
  const int reason = f.reason == FinishReason::kStop     ? 0
                     : f.reason == FinishReason::kLength ? 1
                                                         : 2;
  success_[reason] += 1;
  e2e_.observe(f.e2e_s);
  queue_.observe(f.queue_s);
  prefill_.observe(f.prefill_s);
  decode_.observe(f.decode_s);
  prompt_len_.observe(f.prompt_tokens);
  generation_len_.observe(f.generation_tokens);
  if (f.generation_tokens > 1) request_tpot_.observe(f.decode_s / (f.generation_tokens - 1));
}

void ServeMetrics::observe_step(int tokens_computed, int tokens_generated,
                                const SchedulerStats& stats) {
  const std::lock_guard lock(mu_);
  generation_tokens_ += tokens_generated;
  if (tokens_computed > 0) iteration_tokens_.observe(tokens_computed);
  stats_ = stats;
}

std::string ServeMetrics::render() const {
  const std::lock_guard lock(mu_);
  std::string out;
  const std::string& l = labels_;
  header(out, "vllm:num_requests_running", "gauge",
         "Number of requests in model execution batches.");
  sample(out, "vllm:num_requests_running", l, stats_.num_running);
  header(out, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
  sample(out, "vllm:num_requests_waiting", l, stats_.num_waiting);
  header(out, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.");
  sample(out, "vllm:kv_cache_usage_perc", l, stats_.kv_usage);
  header(out, "vllm:prefix_cache_queries", "counter",
         "Prefix cache queries, in terms of number of queried tokens.");
  sample(out, "vllm:prefix_cache_queries_total", l,
         static_cast<double>(stats_.prefix_cache_queries_tokens));
  header(out, "vllm:prefix_cache_hits", "counter",
         "Prefix cache hits, in terms of number of cached tokens.");
  sample(out, "vllm:prefix_cache_hits_total", l,
         static_cast<double>(stats_.prefix_cache_hit_tokens));
  header(out, "vllm:num_preemptions", "counter",
         "Cumulative number of preemption from the engine.");
  sample(out, "vllm:num_preemptions_total", l, static_cast<double>(stats_.num_preemptions_total));
  header(out, "vllm:prompt_tokens", "counter", "Number of prefill tokens processed.");
  sample(out, "vllm:prompt_tokens_total", l, prompt_tokens_);
  header(out, "vllm:generation_tokens", "counter", "Number of generation tokens processed.");
  sample(out, "vllm:generation_tokens_total", l, generation_tokens_);
  header(out, "vllm:request_success", "counter", "Count of successfully processed requests.");
  const char* reasons[] = {"stop", "length", "abort"};
  for (int i = 0; i < 3; ++i) {
    sample(out, "vllm:request_success_total", l + ",finished_reason=\"" + reasons[i] + "\"",
           success_[i]);
  }
  struct Named {
    const char* name;
    const char* help;
    const PromHistogram* histogram;
  };
  const Named histograms[] = {
      {"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", &ttft_},
      {"vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.",
       &token_gap_},
      {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
       &token_gap_},
      {"vllm:request_time_per_output_token_seconds",
       "Histogram of time_per_output_token_seconds per request.", &request_tpot_},
      {"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", &e2e_},
      {"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
       &queue_},
      {"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
       &prefill_},
      {"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
       &decode_},
      {"vllm:request_prompt_tokens", "Number of prefill tokens processed.", &prompt_len_},
      {"vllm:request_generation_tokens", "Number of generation tokens processed.",
       &generation_len_},
      {"vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
       &iteration_tokens_}};
  for (const Named& h : histograms) {
    header(out, h.name, "histogram", h.help);
    h.histogram->render(out, h.name, l);
  }
  return out;
}

}  // namespace servesim
