// parse_prometheus_text(): the samples of a Prometheus text exposition (what GET /metrics
// answers on vLLM, SGLang, TGI and servesim's engine server), enough for a load test to
// record the server's own gauges and counters next to the client's measurements. Reads the
// simple line form `name{labels} value [timestamp]`; comments (# HELP / # TYPE) and
// histogram buckets (`_bucket`) are skipped, and so is a line that does not parse — a name
// that is not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), a value that is not a number —
// counted in `skipped`, so a server's odd line never stops a load test. Stateless; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

struct PromSample {
  std::string name;    // e.g. "vllm:num_requests_running"
  std::string labels;  // the text between the braces, as sent; empty without labels
  double value = 0;
};

struct PromScrape {
  std::vector<PromSample> samples;
  size_t skipped = 0;  // lines that were neither comments, buckets nor parsable samples
};

PromScrape parse_prometheus_text(std::string_view text);

// Sum of every sample called `name` (any labels); false when there is none.
bool prom_sum(const std::vector<PromSample>& samples, std::string_view name, double& sum);

}  // namespace servesim
