// libFuzzer target: a GET /metrics answer as `servesim loadtest` reads the server's own gauges
// from it (parse_prometheus_text, server_sample, to_time_sample). The server is not trusted:
// nothing may escape, and a scrape must hold together — every sample has a metric name
// ([a-zA-Z_:][a-zA-Z0-9_:]*) and is not a histogram bucket, no more lines are skipped than the
// text has — and what the load test records must be load: sequence counts and preemptions
// finite and 0 or more, KV use finite and 0 or more, whatever NaN, infinite, negative or
// huge values the server sends.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "serve/loadtest/prometheus_text.h"
#include "serve/loadtest/server_sample.h"

namespace {

bool load(double v) {
  return std::isfinite(v) && v >= 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const servesim::PromScrape scrape = servesim::parse_prometheus_text(text);
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (scrape.skipped + scrape.samples.size() > lines) std::abort();
  for (const servesim::PromSample& s : scrape.samples) {
    const bool name_ok =
        !s.name.empty() && !std::isdigit(static_cast<unsigned char>(s.name[0])) &&
        std::all_of(s.name.begin(), s.name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
        });
    if (!name_ok || s.name.ends_with("_bucket")) std::abort();
  }
  servesim::ServerSample sample;
  if (!servesim::server_sample(scrape.samples, sample)) return 0;
  if (!load(sample.running) || !load(sample.waiting) || !load(sample.kv_usage) ||
      !load(sample.preemptions)) {
    std::abort();
  }
  const servesim::TimeSample t = servesim::to_time_sample(sample, 1.0);
  if (t.running < 0 || t.waiting < 0 || t.preemptions_total < 0 || !load(t.kv_usage)) std::abort();
  return 0;
}
